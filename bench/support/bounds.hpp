// The physical bound of a GPU benchmark's case: what its bytes, flops, launches and waits would
// take at the rates the GPU kit measured on the device it runs on (tools/gpu/kit_device_rates:
// the file HETERO_DEVICE_RATES names). Each benchmark states its work with the functions below
// and reports the bound beside its time (counter bound_s; bench/report.sh prints time / bound).
// Pure arithmetic, unit-tested in tests/bench (the test command), so that a bound read in
// docs/gpu.md is the one these functions compute.
#ifndef HETERO_BENCH_SUPPORT_BOUNDS_HPP
#define HETERO_BENCH_SUPPORT_BOUNDS_HPP

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hetero::bench {

/// The rates of one device, as kit_device_rates measures them (SI units).
struct device_rates {
  double bandwidth = 0;           ///< device memory, bytes/s (a triad's)
  double launch = 0;              ///< one kernel launch among many, s
  double launch_and_wait = 0;     ///< a launch the host waits for (launch + fence), s
  double to_device_pinned = 0;    ///< host -> device copy from pinned memory, bytes/s
  double to_host_pinned = 0;      ///< device -> host copy into pinned memory, bytes/s
  double to_device_pageable = 0;  ///< host -> device copy from pageable memory, bytes/s
  double to_host_pageable = 0;    ///< device -> host copy into pageable memory, bytes/s
  double fp64 = 0;                ///< FP64 FMA pipe, flop/s (an FMA is 2 flops)
  double fp64_matrix = 0;         ///< FP64 matrix product as cuBLAS reaches it, flop/s
};

/// Reads kit_device_rates' "name value" lines ('#' starts a comment). Throws std::runtime_error
/// naming the line or the missing name when the text is not such a file.
inline device_rates parse_device_rates(std::istream& in) {
  std::map<std::string, double> values;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, rest;
    double value = 0;
    if (!(words >> name >> value) || (words >> rest) || !(value >= 0))
      throw std::runtime_error("device rates, line " + std::to_string(number) + ": '" + line +
                               "'; allowed: '<name> <value>' with a value of 0 or more");
    values[name] = value;
  }
  const auto get = [&](const char* name) {
    const auto it = values.find(name);
    if (it == values.end()) throw std::runtime_error(std::string("device rates: no value for ") + name);
    return it->second;
  };
  return {get("triad_bytes_per_s"),        get("launch_s"),
          get("launch_and_wait_s"),        get("h2d_pinned_bytes_per_s"),
          get("d2h_pinned_bytes_per_s"),   get("h2d_pageable_bytes_per_s"),
          get("d2h_pageable_bytes_per_s"), get("fp64_flops_per_s"),
          get("fp64_matrix_flops_per_s")};
}

/// The rates in the file HETERO_DEVICE_RATES names (read once); none where it is unset. Throws
/// std::runtime_error when the variable names a file that cannot be read or parsed.
inline const std::optional<device_rates>& measured_device_rates() {
  static const std::optional<device_rates> rates = []() -> std::optional<device_rates> {
    const char* path = std::getenv("HETERO_DEVICE_RATES");
    if (path == nullptr || *path == '\0') return std::nullopt;
    std::ifstream in(path);
    if (!in) throw std::runtime_error(std::string("HETERO_DEVICE_RATES: cannot read ") + path);
    return parse_device_rates(in);
  }();
  return rates;
}

/// What a case asks of the device, per timed unit (an iteration, a step, a call).
struct device_work {
  double bytes = 0;            ///< device memory read and written
  double flops = 0;            ///< FP64 work on the FMA pipe, 2 flops per instruction (a lone
                               ///< add or multiply takes an instruction as an FMA does)
  double matrix_flops = 0;     ///< FP64 flops of matrix products (tensor cores, cuBLAS)
  int launches = 0;            ///< kernels launched
  int host_waits = 0;          ///< times the host waits for the device (a fence, a scalar read)
  double to_device_bytes = 0;  ///< host -> device copies
  double to_host_bytes = 0;    ///< device -> host copies
  bool pinned = true;          ///< whether those copies are from/into pinned memory

  device_work& operator+=(const device_work& o) {
    bytes += o.bytes;
    flops += o.flops;
    matrix_flops += o.matrix_flops;
    launches += o.launches;
    host_waits += o.host_waits;
    to_device_bytes += o.to_device_bytes;
    to_host_bytes += o.to_host_bytes;
    pinned = pinned && o.pinned;
    return *this;
  }
};

/// The least time `w` can take on a device with rates `r`: the slowest of its memory traffic,
/// its FP64 work (pipe and matrix units in turn), and its launches issued back to back; plus,
/// for each wait of the host, what a launch that is waited for costs beyond one that is not;
/// plus its copies over the host link, which the same stream serialises.
inline double bound_seconds(const device_work& w, const device_rates& r) {
  const auto over = [](double amount, double rate) { return amount > 0 ? amount / rate : 0.0; };
  const double device =
      std::max({over(w.bytes, r.bandwidth), over(w.flops, r.fp64) + over(w.matrix_flops, r.fp64_matrix),
                w.launches * r.launch});
  const double waits = w.host_waits * std::max(0.0, r.launch_and_wait - r.launch);
  const double copies = over(w.to_device_bytes, w.pinned ? r.to_device_pinned : r.to_device_pageable) +
                        over(w.to_host_bytes, w.pinned ? r.to_host_pinned : r.to_host_pageable);
  return device + waits + copies;
}

// --- the work of hetero's benchmark kernels ----------------------------------------------------

/// a(i) = b(i) + s c(i) over n doubles: 3 x 8 bytes and 2 flops per element, one launch.
inline device_work triad_work(std::int64_t n) {
  return {.bytes = 24.0 * static_cast<double>(n), .flops = 2.0 * static_cast<double>(n), .launches = 1};
}

/// Bytes of y = A x for a CSR matrix of `rows` rows and `nnz` entries: its row offsets
/// (rows + 1 of `offset_bytes`), column indices (`index_bytes`) and values (8 each), x read once
/// (`columns` doubles: perfect reuse through the caches) and y written once.
inline double csr_product_bytes(std::int64_t rows, std::int64_t columns, std::int64_t nnz, int offset_bytes,
                                int index_bytes) {
  return static_cast<double>(rows + 1) * offset_bytes + static_cast<double>(nnz) * (index_bytes + 8) +
         8.0 * static_cast<double>(columns + rows);
}

/// One N-body force evaluation: `targets` x `sources` pair interactions of at least 13 FP64
/// instructions each (3 differences; 3 multiply-adds for the softened squared distance; the
/// reciprocal square root, counted as one although no GPU has a single FP64 instruction for it;
/// 2 multiplications for its cube and 1 for the mass; 3 multiply-adds into the force), 26 flops
/// at the FMA pipe's rate. The sources' positions and masses (32 bytes each) are read once and
/// the targets' 3 forces written; one launch.
inline device_work nbody_forces_work(std::int64_t targets, std::int64_t sources) {
  return {.bytes = 32.0 * static_cast<double>(sources) + 24.0 * static_cast<double>(targets),
          .flops = 26.0 * static_cast<double>(targets) * static_cast<double>(sources),
          .launches = 1};
}

/// C = A B for A m x k and B k x n in FP64: 2 m n k flops on the matrix units, the three
/// matrices moved once, one launch.
inline device_work dgemm_work(std::int64_t m, std::int64_t n, std::int64_t k) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  return {.bytes = 8.0 * (dm * dk + dk * dn + dm * dn), .matrix_flops = 2.0 * dm * dn * dk, .launches = 1};
}

/// The Cholesky factorisation of an n x n SPD matrix: n^3 / 3 flops on the matrix units, the
/// matrix read and written once (8 n^2 bytes each way), one launch; with `copies`, the whole
/// matrix also goes from pageable host memory to the device and back.
inline device_work potrf_work(std::int64_t n, bool copies) {
  const double dn = static_cast<double>(n), matrix = 8.0 * dn * dn;
  return {.bytes = 2 * matrix,
          .matrix_flops = dn * dn * dn / 3,
          .launches = 1,
          .to_device_bytes = copies ? matrix : 0,
          .to_host_bytes = copies ? matrix : 0,
          .pinned = false};
}

/// An allreduce of `bytes` in device memory with an MPI that takes no device pointers: the
/// buffer must reach the host and the result come back (pinned copies), and the host waits for
/// the first copy before MPI can start. (Where the ranks share one GPU, the reduction itself is
/// host work the bound leaves out.)
inline device_work staged_allreduce_work(double bytes) {
  return {.host_waits = 1, .to_device_bytes = bytes, .to_host_bytes = bytes};
}

/// A broadcast of `bytes` in device memory, staged the same way: the root's buffer reaches the
/// host, the others' results come back from it (the bound of the slowest rank: one copy each
/// way, as the allreduce's).
inline device_work staged_broadcast_work(double bytes) { return staged_allreduce_work(bytes); }

/// An allgather of `bytes` per rank over `ranks` ranks, staged: each rank's block reaches the
/// host and all `ranks` blocks come back.
inline device_work staged_allgather_work(double bytes, int ranks) {
  return {.host_waits = 1, .to_device_bytes = bytes * ranks, .to_host_bytes = bytes};
}

/// The recurrences of hetero's CG (hetero::cg_variant): classic (halo and allgather: on one rank
/// the gather is the identity) and pipelined (Ghysels-Vanroose: one reduction per iteration).
enum class cg_recurrence { classic, pipelined };
/// Its preconditioners: none, Jacobi (a diagonal), polynomial (Chebyshev of a degree).
enum class cg_preconditioning { none, jacobi, polynomial };

/// One CG iteration on one device at its floor: what any implementation of the recurrence must
/// move and wait for, whatever its kernels (fused or not). The matrix is read once per sparse
/// product (`rows` rows, `nnz` entries, offsets and indices of the given sizes), a vector of
/// `rows` doubles read or written once is one pass; every dot product is fused into the kernel
/// that produces its operands, and a kernel is launched per sweep over the vectors:
///  - classic, none: q = A p with p'q (A, p, q: 2 passes); x += a p, r -= a q with r'r (reads
///    x p r q, writes x r: 6); p = r + b p (3): 11 passes, 3 launches, 2 host waits (a and b);
///  - classic, Jacobi: z = D r fused into the r update (reads d too, writes z: 8), r'z with
///    it, p = z + b p (3): 13 passes;
///  - pipelined, none: its two products (s -> u, r -> w) share one read of the matrix (4
///    passes), then one sweep updates its recurrences and computes the next dot products (10):
///    14 passes, 2 launches, 1 host wait;
///  - pipelined, Jacobi: 19 passes (the preconditioned vector and D: 5 more);
///  - polynomial of degree d (cg_options::polynomial_degree, d >= 1: d - 1 products in the
///    preconditioner): Jacobi's iteration plus, per product of the preconditioner, the matrix
///    and 6 passes (the product fused with its Chebyshev step on ping-pong vectors) and a launch.
inline device_work cg_iteration_work(cg_recurrence recurrence, cg_preconditioning preconditioning, int degree,
                                     std::int64_t rows, std::int64_t nnz, int offset_bytes, int index_bytes) {
  const double matrix =
      csr_product_bytes(rows, rows, nnz, offset_bytes, index_bytes) - 16.0 * static_cast<double>(rows);
  const double pass = 8.0 * static_cast<double>(rows);
  const bool classic = recurrence == cg_recurrence::classic;
  device_work w{.launches = classic ? 3 : 2, .host_waits = classic ? 2 : 1};
  switch (preconditioning) {
    case cg_preconditioning::none: w.bytes = matrix + (classic ? 11 : 14) * pass; break;
    case cg_preconditioning::jacobi: w.bytes = matrix + (classic ? 13 : 19) * pass; break;
    case cg_preconditioning::polynomial:
      if (degree < 1)
        throw std::invalid_argument("cg_iteration_work: degree " + std::to_string(degree) +
                                    "; allowed: 1 or more");
      w.bytes = degree * matrix + (6.0 * (degree - 1) + (classic ? 13 : 19)) * pass;
      w.launches += degree - 1;
      break;
  }
  // Two flops per stored entry and product, and 2 per element of each pass beyond the products'
  // own: negligible beside the bytes, kept so the bound is complete.
  const int products = preconditioning == cg_preconditioning::polynomial ? degree : 1;
  w.flops = 2.0 * static_cast<double>(nnz) * products + 2.0 * (w.bytes - products * matrix) / 8.0;
  return w;
}

}  // namespace hetero::bench

#endif  // HETERO_BENCH_SUPPORT_BOUNDS_HPP

// dgemm: C = A * B with the rows of C shared between the device and the host by hetero's chunk
// form (`split_for`), each side calling its own BLAS (CBLAS on the host, cuBLAS on a CUDA
// device), as in the matrix multiplication benchmark of the XMP-dev load-balancing paper: A and C row-split (rows
// also block-distributed over MPI ranks), B replicated. The multiplication repeats for a number of steps while the
// tuner balances the sides; prints per step the device time, the host time and the CPU weight (the paper's Figure
// 6), and checks C against one BLAS call on the whole rows.
//   mpiexec -n 2 ./dgemm [n] [steps] [--tuner=model|fixed_step|manual]
#include <hetero/hetero.hpp>

#include <hetero/exec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "gemm_rows.hpp"

namespace {

// The default spaces; in a CPU-only build OpenMP stands in for the device and Serial is the
// host, so that the split and its tuning are visible on a machine without a GPU.
using device_space = hetero::split_spaces::device;
using host_space = hetero::split_spaces::host;
using matrix = hetero::mirrored_array<double**, device_space, host_space>;

// Entry (i, j) of a matrix drawn from `seed`, in [-1, 1): the same on every rank without
// communication (splitmix64 of the position: cheap enough for millions of entries).
double entry(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(i) * 0xbf58476d1ce4e5b9ULL +
                    static_cast<std::uint64_t>(j);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  std::int64_t n = 1024;
  int steps = 8;
  std::string tuner = "model";
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--tuner=")) {
      tuner = a.substr(8);
    } else if (positional++ == 0) {
      n = std::stoll(argv[i]);
    } else {
      steps = std::stoi(argv[i]);
    }
  }
  HETERO_EXPECTS(n >= 1 && n <= 32768 && steps >= 1, "dgemm needs 1 <= n <= 32768 and steps >= 1; got n = ", n,
                 ", steps = ", steps);
  HETERO_EXPECTS(tuner == "model" || tuner == "fixed_step" || tuner == "manual", "--tuner=", tuner,
                 "; allowed: model, fixed_step, manual");
  hetero::set_tuner("dgemm", tuner == "model"        ? hetero::tuner_kind::model
                             : tuner == "fixed_step" ? hetero::tuner_kind::fixed_step
                                                     : hetero::tuner_kind::manual);
  hetero::set_work_sharing_config(hetero::split_config_for(rt));
  // Both sides call BLAS at the same time, and the host side once per core: one thread each.
  openblas_set_num_threads(1);

  const hetero::communicator world;
  const int p = world.size(), r = world.rank();
  // A's and C's rows in balanced blocks over the ranks.
  const auto [first, last] = hetero::axis_distribution(n, p, hetero::distribution::block()).block_range(r);
  const std::int64_t rows = last - first;
  matrix a("A", rows, n), b("B", n, n), c("C", rows, n);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j) a.host_view()(i, j) = entry(1, first + i, j);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) b.host_view()(i, j) = entry(2, i, j);
  a.modify_host();
  b.modify_host();

  if (r == 0) {
    std::printf("dgemm: n = %lld on %d rank(s), device %s + host %s, tuner %s\n", static_cast<long long>(n), p,
                device_space::name(), host_space::name(), tuner.c_str());
    std::printf("%5s %5s %8s %12s %12s %10s   (each rank's weight and its own times; GFLOP/s of all)\n", "step",
                "rank", "weight", "device [s]", "host [s]", "GFLOP/s");
  }
  for (int step = 1; step <= steps; ++step) {
    const double weight = hetero::cpu_weight("dgemm");
    hetero::stopwatch watch;
    hetero::split_for("dgemm", hetero::split_policy<device_space, host_space>(0, rows),
                      hetero::access(hetero::reads(a), hetero::reads_all(b), hetero::writes(c)),
                      [](const auto& space, std::int64_t begin, std::int64_t end, const auto& av, const auto& bv,
                         const auto& cv) { dgemm::gemm_rows(space, begin, end, av, bv, cv); });
    // Each rank's weight beside its own times; the rate is the whole product's over the slowest rank.
    const std::vector<double> mine{weight, hetero::gpu_seconds("dgemm"), hetero::cpu_seconds("dgemm"),
                                   watch.seconds()};
    const std::vector<double> all = world.gather(hetero::send_buf(mine), hetero::root(0));
    for (int q = 0; r == 0 && q < p; ++q) {
      double slowest = 0;
      for (int k = 0; k < p; ++k) slowest = std::max(slowest, all[static_cast<std::size_t>(4 * k + 3)]);
      const double* row = all.data() + 4 * q;
      std::printf("%5d %5d %8.4f %12.6f %12.6f", step, q, row[0], row[1], row[2]);
      if (q + 1 == p) std::printf(" %10.2f", 2.0 * static_cast<double>(n) * n * n / slowest * 1e-9);
      std::printf("\n");
    }
  }

  // Check every element against one BLAS call on this rank's whole rows.
  c.sync_host();
  std::vector<double> expected(static_cast<std::size_t>(rows * n));
  if (rows > 0)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(n),
                static_cast<int>(n), 1.0, a.host_view().data(), static_cast<int>(n), b.host_view().data(),
                static_cast<int>(n), 0.0, expected.data(), static_cast<int>(n));
  double worst = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      worst = std::max(worst, std::abs(c.host_view()(i, j) - expected[static_cast<std::size_t>(i * n + j)]));
  const double worst_all = world.allreduce(hetero::send_buf(worst), hetero::op(hetero::ops::max{}));
  const double tolerance = 1e-13 * static_cast<double>(n);  // entries in [-1, 1]: |C_ij| <= n
  if (r == 0)
    std::printf("C against one BLAS call: largest difference %.1e (%s, tolerance %.1e)\n", worst_all,
                worst_all <= tolerance ? "ok" : "WRONG", tolerance);
  return worst_all <= tolerance ? EXIT_SUCCESS : EXIT_FAILURE;
}

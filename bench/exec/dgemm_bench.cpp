// Work sharing on DGEMM (C = A * B, n x n, row-major, double), one rank: the split_for of
// examples/dgemm on mirrored arrays. On a CPU-only node OpenMP on the rank's cores stands in for
// the device and Serial is the host, each side multiplying its rows with single-threaded OpenBLAS
// per thread it owns, and in a split the two sides own disjoint cores (in a CUDA build the
// device side calls cuBLAS). Family `dgemm`:
//  - baseline_openblas_all_cores: one cblas_dgemm of the whole product with OpenBLAS on all of
//    the rank's cores (what a user would call instead);
//  - hetero_device_alone: hetero's device side alone (w = 0), all cores;
//  - hetero_split: the split chosen by the (converged) default tuner;
//  - cublas_alone (CUDA builds): one cublasDgemm of the whole product on the GPU's copies, what a
//    user would call there instead (the GPU kit reports the family against it).
// In a run of the GPU kit each case's bound is its flops at the FP64 matrix rate cuBLAS reaches
// (bench/support/bounds.hpp).
// Every case's C is checked once against the baseline's, element by element.
#include <cblas.h>

#include <hetero/exec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_main.hpp"
#include "gemm_rows.hpp"

namespace {

using spaces = hetero::split_spaces;
using policy = hetero::split_policy<spaces::device, spaces::host>;
using matrix = hetero::mirrored_array<double**, spaces::device, spaces::host>;
using host_matrix = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;

// The rank's host cores: OpenBLAS's threads for the baseline (in a CPU-only build the device
// side's OpenMP runs on the same cores; in a CUDA build the device is the GPU).
int host_cores() { return static_cast<int>(Kokkos::DefaultHostExecutionSpace().concurrency()); }

struct operands {
  std::int64_t n = -1;
  matrix a, b, c;
  host_matrix reference;
};

// One set of operands per size, made once (no first touch inside a timing).
operands& operands_for(std::int64_t n) {
  static std::map<std::int64_t, operands> made;
  static const bool hooked = (Kokkos::push_finalize_hook([] { made.clear(); }), true);
  (void)hooked;
  operands& o = made[n];
  if (o.n != n) {
    o.a = matrix("A", n, n);
    o.b = matrix("B", n, n);
    o.c = matrix("C", n, n);
    o.reference = host_matrix("reference", n, n);
    std::mt19937_64 gen(std::random_device{}());
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        o.a.host_view()(i, j) = u(gen);
        o.b.host_view()(i, j) = u(gen);
      }
    o.a.modify_host();
    o.b.modify_host();
    openblas_set_num_threads(host_cores());
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(n), 1.0, o.a.host_view().data(), static_cast<int>(n), o.b.host_view().data(),
                static_cast<int>(n), 0.0, o.reference.data(), static_cast<int>(n));
    openblas_set_num_threads(1);
    o.n = n;
  }
  return o;
}

// Every element of C against the reference (the same BLAS on other row blocks: rounding alike).
void check(operands& o, const char* what) {
  o.c.sync_host();
  const auto c = o.c.host_view();
  for (std::int64_t i = 0; i < o.n; ++i)
    for (std::int64_t j = 0; j < o.n; ++j)
      if (std::abs(c(i, j) - o.reference(i, j)) > 1e-10 * static_cast<double>(o.n))
        throw std::runtime_error(std::string(what) + ": C(" + std::to_string(i) + ", " + std::to_string(j) +
                                 ") differs from OpenBLAS's product");
}

void gflops(benchmark::State& state, std::int64_t n) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) *
                             static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void openblas_all_cores(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& o = operands_for(n);
  const int cores = host_cores();
  openblas_set_num_threads(cores);
  const auto a = o.a.host_view(), b = o.b.host_view(), c = o.c.host_view();
  for (auto _ : state)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(n), 1.0, a.data(), static_cast<int>(n), b.data(), static_cast<int>(n), 0.0,
                c.data(), static_cast<int>(n));
  openblas_set_num_threads(1);
  o.c.modify_host();
  check(o, "OpenBLAS");
  gflops(state, n);
  state.counters["threads"] = cores;
}

void run_hetero(std::int64_t n, const std::string& label, policy range) {
  auto& o = operands_for(n);
  hetero::split_for(label, range, hetero::access(hetero::reads(o.a), hetero::reads_all(o.b), hetero::writes(o.c)),
                    [](const auto& space, std::int64_t begin, std::int64_t end, const auto& a, const auto& b,
                       const auto& c) { dgemm::gemm_rows(space, begin, end, a, b, c); });
}

void device_alone(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  operands_for(n);  // made (and the reference computed) outside the timing
  for (auto _ : state) run_hetero(n, "bench_dgemm_device_alone", policy(0, n).weight(0.0));
  check(operands_for(n), "hetero, device side alone");
  gflops(state, n);
  hetero::bench::report_bound(state, hetero::bench::dgemm_work(n, n, n));
}

#if HETERO_HAS_CUDA()
void cublas_alone(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& o = operands_for(n);
  o.a.sync_device();
  o.b.sync_device();
  const Kokkos::Cuda gpu;
  const auto a = o.a.device_view(), b = o.b.device_view(), c = o.c.device_view();
  for (auto _ : state) {
    dgemm::gemm_rows_cuda(gpu, static_cast<int>(n), static_cast<int>(n), a.data(), b.data(), c.data());
    gpu.fence();
  }
  o.c.modify_device();
  check(o, "cuBLAS alone");
  gflops(state, n);
  hetero::bench::report_bound(state, hetero::bench::dgemm_work(n, n, n));
}
#endif

void split(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  operands_for(n);
  const std::string label = "bench_dgemm_split_" + std::to_string(n);  // one tuner per size
  const auto labels = hetero::split_labels();
  if (std::find(labels.begin(), labels.end(), label) == labels.end())  // converge once, before any timing
    for (int k = 0; k < 4; ++k) run_hetero(n, label, policy(0, n));
  for (auto _ : state) run_hetero(n, label, policy(0, n));
  check(operands_for(n), "hetero split");
  gflops(state, n);
  state.counters["weight"] = hetero::split_statistics(label).last_weight;
  state.SetLabel(hetero::split_statistics(label).decision);
  hetero::bench::report_bound(state, hetero::bench::dgemm_work(n, n, n));
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond);
  if (hetero::bench::smoke_run()) {
    b->Arg(200);
  } else {
    b->Arg(1024)->Arg(2048);
    if (hetero::is_gpu_space<spaces::device>) b->Arg(4096);  // where a GPU has work to spare for the host
  }
};

const int registered[] = {
    hetero::bench::add("dgemm/baseline_openblas_all_cores", openblas_all_cores, sizes),
    hetero::bench::add("dgemm/hetero_device_alone", device_alone, sizes),
    hetero::bench::add("dgemm/hetero_split", split, sizes),
#if HETERO_HAS_CUDA()
    hetero::bench::add("dgemm/cublas_alone", cublas_alone, sizes),
#endif
};

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);  // both sides call BLAS at once, one thread per core each
  return hetero::bench::run_benchmarks(argc, argv);
}

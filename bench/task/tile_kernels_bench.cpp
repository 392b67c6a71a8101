// The Cholesky example's four tile kernels (examples/cholesky/tiles.hpp: LAPACKE/CBLAS on
// OpenBLAS, one BLAS thread) timed one call at a time on one core, b = 128 and 256, both
// precisions: why the factorisations run below the GEMM rate (docs/results/task.md). Baseline: a
// GEMM in the plain NoTrans/NoTrans form on the same three tiles, hot in cache. Rivals: the
// example's GEMM form (A B^T), SYRK, TRSM and POTRF on hot tiles, and the example's GEMM
// cycling through 64 MiB of tiles (every call's tiles come from memory or L3, as in a
// factorisation of N = 4096), one tile column per call (K = b) and `update_width` of them
// (K = 4b, the example's updates). The counter GFLOPs is the rate over the timed calls.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_main.hpp"
#include "tiles.hpp"

namespace {

enum class kernel { gemm_nn, gemm, gemm_cold, gemm_wide_cold, syrk, trsm, potrf };

// Tiles 64-byte aligned, as the coarray's Kokkos allocation gives them.
template <cholesky::real T>
struct tile_set {
  explicit tile_set(std::int64_t elements, std::int64_t count)
      : m_elements(elements), m_data(elements * count + 16) {}
  T* operator[](std::int64_t t) {
    auto* base = m_data.data();
    base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64 / sizeof(T);
    return base + t * m_elements;
  }
  std::int64_t m_elements;
  std::vector<T> m_data;
};

template <cholesky::real T>
void spd_tile(T* a, int b) {
  for (int c = 0; c < b; ++c)
    for (int r = 0; r < b; ++r) a[c * b + r] = cholesky::element<T>(r, c, b);
}

template <cholesky::real T>
void gemm_nn(const T* a, const T* b, T* c, int n) {
  if constexpr (std::same_as<T, double>) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, -1.0, a, n, b, n, 1.0, c, n);
  } else {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, -1.0f, a, n, b, n, 1.0f, c, n);
  }
}

template <cholesky::real T, kernel K>
void tile_kernel(benchmark::State& state) {
  const int b = static_cast<int>(state.range(0));
  const std::int64_t elements = static_cast<std::int64_t>(b) * b;
  const std::int64_t count =
      K == kernel::gemm_cold || K == kernel::gemm_wide_cold ? (64 << 20) / (elements * sizeof(T)) : 4;
  constexpr int w = cholesky::update_width;
  tile_set<T> t(elements, count);
  for (std::int64_t i = 0; i < count; ++i) spd_tile(t[i], b);
  cholesky::potrf(t[0], b);  // the triangular factor trsm uses
  openblas_set_num_threads(1);
  double flops = 2.0 * b * b * b;
  if (K == kernel::gemm_wide_cold) flops *= w;
  if (K == kernel::syrk || K == kernel::trsm) flops = 1.0 * b * b * b;
  if (K == kernel::potrf) flops = 1.0 * b * b * b / 3.0;
  std::int64_t next = 0;
  double total = 0.0;
  for (auto _ : state) {
    if (K == kernel::potrf) spd_tile(t[1], b);
    const auto start = std::chrono::steady_clock::now();
    switch (K) {
      case kernel::gemm_nn: gemm_nn(t[1], t[2], t[3], b); break;
      case kernel::gemm: cholesky::gemm(t[1], t[2], t[3], b); break;
      case kernel::gemm_cold:
        cholesky::gemm(t[next], t[(next + 1) % count], t[(next + 2) % count], b);
        next = (next + 3) % count;
        break;
      case kernel::gemm_wide_cold:  // w tiles of two rows side by side, and the output tile
        if (next + 2 * w + 1 > count) next = 0;
        cholesky::gemm(t[next], t[next + w], t[next + 2 * w], b, w);
        next += 2 * w + 1;
        break;
      case kernel::syrk: cholesky::syrk(t[1], t[2], b); break;
      case kernel::trsm: cholesky::trsm(t[0], t[2], b); break;
      case kernel::potrf: cholesky::potrf(t[1], b); break;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds);
    total += seconds;
  }
  state.counters["GFLOPs"] = flops * 1e-9 * static_cast<double>(state.iterations()) / total;
}

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Arg(128)->Arg(256);
};

template <cholesky::real T>
int add_precision(const std::string& family) {
  hetero::bench::add(family + "/baseline_gemm_nn", tile_kernel<T, kernel::gemm_nn>, configure);
  hetero::bench::add(family + "/gemm_nt", tile_kernel<T, kernel::gemm>, configure);
  hetero::bench::add(family + "/gemm_nt_cold", tile_kernel<T, kernel::gemm_cold>, configure);
  hetero::bench::add(family + "/gemm_nt_width4_cold", tile_kernel<T, kernel::gemm_wide_cold>, configure);
  hetero::bench::add(family + "/syrk", tile_kernel<T, kernel::syrk>, configure);
  hetero::bench::add(family + "/trsm", tile_kernel<T, kernel::trsm>, configure);
  hetero::bench::add(family + "/potrf", tile_kernel<T, kernel::potrf>, configure);
  return 0;
}

const int registered[] = {add_precision<double>("tile_kernel_double"), add_precision<float>("tile_kernel_float")};

}  // namespace

HETERO_BENCHMARK_MAIN()

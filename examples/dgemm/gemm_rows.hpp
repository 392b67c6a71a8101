// The per-side bodies of the DGEMM example: C[begin:end, :] = A[begin:end, :] * B, with CBLAS
// on host memory and cuBLAS on CUDA memory (backend/cuda.hpp, only in CUDA builds).
#ifndef HETERO_EXAMPLES_DGEMM_GEMM_ROWS_HPP
#define HETERO_EXAMPLES_DGEMM_GEMM_ROWS_HPP

#include <cblas.h>

#include <hetero/config.hpp>
#include <hetero/exec/spaces.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#if HETERO_HAS_CUDA()
#include "backend/cuda.hpp"
#endif

namespace dgemm {

/// Rows [begin, end) of C = A * B for row-major n x n views of one side, on `space`. On a host
/// space each of the space's threads multiplies its own block of rows with single-threaded
/// CBLAS, so the product uses exactly the cores `space` has (all of them for a plain OpenMP
/// instance, the cores the host part leaves when hetero runs it beside a host part).
template <class Space, class A, class B, class C>
void gemm_rows(const Space& space, std::int64_t begin, std::int64_t end, const A& a, const B& b, const C& c) {
  if (end <= begin) return;
  const auto n = static_cast<int>(b.extent(0));
  if constexpr (!hetero::is_gpu_space<Space>) {
    auto rows = [=](std::int64_t first, std::int64_t last) {
      if (last > first)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(last - first), n, n, 1.0,
                    a.data() + first * n, n, b.data(), n, 0.0, c.data() + first * n, n);
    };
    const auto parts = std::min<std::int64_t>(static_cast<std::int64_t>(space.concurrency()), end - begin);
    if (parts <= 1) return rows(begin, end);
    Kokkos::parallel_for(
        "dgemm rows",
        Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, parts).set_chunk_size(1),
        [=](std::int64_t part) {
          rows(begin + (end - begin) * part / parts, begin + (end - begin) * (part + 1) / parts);
        });
    space.fence();
  } else {
    const auto rows = static_cast<int>(end - begin);
#if HETERO_HAS_CUDA()
    gemm_rows_cuda(space, rows, n, a.data() + begin * n, b.data(), c.data() + begin * n);
#else
    static_assert(std::is_void_v<Space>, "dgemm example: no GEMM for this device space; add one beside cuBLAS");
#endif
  }
}

}  // namespace dgemm

#endif  // HETERO_EXAMPLES_DGEMM_GEMM_ROWS_HPP

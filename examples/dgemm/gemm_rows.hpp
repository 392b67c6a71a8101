// The per-side bodies of the DGEMM example: C[begin:end, :] = A[begin:end, :] * B, with CBLAS
// on host memory and cuBLAS on CUDA memory (backend/cuda.hpp, only in CUDA builds).
#ifndef HETERO_EXAMPLES_DGEMM_GEMM_ROWS_HPP
#define HETERO_EXAMPLES_DGEMM_GEMM_ROWS_HPP

#include <cblas.h>

#include <hetero/config.hpp>
#include <hetero/exec/spaces.hpp>

#include <cstdint>
#include <type_traits>

#if HETERO_HAS_CUDA()
#include "backend/cuda.hpp"
#endif

namespace dgemm {

/// Rows [begin, end) of C = A * B for row-major n x n views of one side, on `space`.
template <class Space, class A, class B, class C>
void gemm_rows(const Space& space, std::int64_t begin, std::int64_t end, const A& a, const B& b, const C& c) {
  if (end <= begin) return;
  const auto n = static_cast<int>(b.extent(0));
  const auto rows = static_cast<int>(end - begin);
  if constexpr (hetero::detail::host_addressable<typename Space::memory_space>) {
    (void)space;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n, n, 1.0, a.data() + begin * n, n, b.data(), n,
                0.0, c.data() + begin * n, n);
  } else {
#if HETERO_HAS_CUDA()
    gemm_rows_cuda(space, rows, n, a.data() + begin * n, b.data(), c.data() + begin * n);
#else
    static_assert(std::is_void_v<Space>, "dgemm example: no GEMM for this device space; add one beside cuBLAS");
#endif
  }
}

}  // namespace dgemm

#endif  // HETERO_EXAMPLES_DGEMM_GEMM_ROWS_HPP

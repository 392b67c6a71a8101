// cuBLAS body of the DGEMM example, compiled only in CUDA builds (HETERO_HAS_CUDA()): rows of
// C = A * B on the stream of the device instance the split loop hands over.
#ifndef HETERO_EXAMPLES_DGEMM_BACKEND_CUDA_HPP
#define HETERO_EXAMPLES_DGEMM_BACKEND_CUDA_HPP

#include <cublas_v2.h>

#include <hetero/core/error.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace dgemm {

/// One cuBLAS handle per process, created on first use.
inline cublasHandle_t cublas_handle() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw hetero::backend_error("cublasCreate failed");
    return h;
  }();
  return handle;
}

/// C (rows x n) = A (rows x n) * B (n x n), all row-major in device memory, on `space`'s stream.
/// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies B^T (n x n) by A^T.
inline void gemm_rows_cuda(const Kokkos::Cuda& space, int rows, int n, const double* a, const double* b,
                           double* c) {
  const cublasHandle_t handle = cublas_handle();
  if (cublasSetStream(handle, space.cuda_stream()) != CUBLAS_STATUS_SUCCESS)
    throw hetero::backend_error("cublasSetStream failed");
  const double one = 1.0, zero = 0.0;
  const cublasStatus_t status =
      cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, rows, n, &one, b, n, a, n, &zero, c, n);
  if (status != CUBLAS_STATUS_SUCCESS)
    throw hetero::backend_error("cublasDgemm failed (status " + std::to_string(static_cast<int>(status)) + ")");
}

}  // namespace dgemm

#endif  // HETERO_EXAMPLES_DGEMM_BACKEND_CUDA_HPP

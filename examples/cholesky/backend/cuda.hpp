// The Cholesky example's device tile kernels, compiled only in CUDA builds (HETERO_HAS_CUDA()):
// cuSOLVER's potrf and cuBLAS' trsm, syrk and gemm on the stream of the device instance a task
// runs on, in single or double precision, on column-major b x b tiles in GPU memory.
#ifndef HETERO_EXAMPLES_CHOLESKY_BACKEND_CUDA_HPP
#define HETERO_EXAMPLES_CHOLESKY_BACKEND_CUDA_HPP

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <hetero/core/error.hpp>

#include <Kokkos_Core.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

namespace cholesky {

namespace cuda {

inline void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw hetero::backend_error(std::string(call) + " failed (cuBLAS status " + std::to_string(status) + ")");
}
inline void check(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw hetero::backend_error(std::string(call) + " failed (cuSOLVER status " + std::to_string(status) + ")");
}
inline void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw hetero::backend_error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

/// The cuBLAS and cuSOLVER handles of one stream, with potrf's workspace (a device task runs on
/// one instance at a time, so each stream's handles are used by one thread at a time).
struct stream_handles {
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  int* info = nullptr;
  stream_handles(const stream_handles&) = delete;
  stream_handles& operator=(const stream_handles&) = delete;
  explicit stream_handles(cudaStream_t stream) {
    check(cublasCreate(&blas), "cublasCreate");
    check(cublasSetStream(blas, stream), "cublasSetStream");
    check(cusolverDnCreate(&solver), "cusolverDnCreate");
    check(cusolverDnSetStream(solver, stream), "cusolverDnSetStream");
    check(cudaMalloc(reinterpret_cast<void**>(&info), sizeof(int)), "cudaMalloc");
  }
  ~stream_handles() {
    cudaFree(workspace);
    cudaFree(info);
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
  }
  void* workspace_of(std::size_t bytes) {
    if (bytes > workspace_bytes) {
      cudaFree(workspace);
      check(cudaMalloc(&workspace, bytes), "cudaMalloc");
      workspace_bytes = bytes;
    }
    return workspace;
  }
};

/// The handles of `space`'s stream, made on first use and kept for the process.
inline stream_handles& handles(const Kokkos::Cuda& space) {
  static std::mutex mutex;
  static std::map<cudaStream_t, std::unique_ptr<stream_handles>> all;
  const std::lock_guard lock(mutex);
  auto& h = all[space.cuda_stream()];
  if (!h) h = std::make_unique<stream_handles>(space.cuda_stream());
  return *h;
}

}  // namespace cuda

/// A_jj = L_jj L_jj^T on the device (waits for the factorisation to report a breakdown).
template <class T>
void device_potrf(const Kokkos::Cuda& space, T* ajj, int b) {
  auto& h = cuda::handles(space);
  int lwork = 0;
  if constexpr (std::is_same_v<T, double>) {
    cuda::check(cusolverDnDpotrf_bufferSize(h.solver, CUBLAS_FILL_MODE_LOWER, b, ajj, b, &lwork),
                "cusolverDnDpotrf_bufferSize");
    auto* work = static_cast<double*>(h.workspace_of(static_cast<std::size_t>(lwork) * sizeof(double)));
    cuda::check(cusolverDnDpotrf(h.solver, CUBLAS_FILL_MODE_LOWER, b, ajj, b, work, lwork, h.info),
                "cusolverDnDpotrf");
  } else {
    cuda::check(cusolverDnSpotrf_bufferSize(h.solver, CUBLAS_FILL_MODE_LOWER, b, ajj, b, &lwork),
                "cusolverDnSpotrf_bufferSize");
    auto* work = static_cast<float*>(h.workspace_of(static_cast<std::size_t>(lwork) * sizeof(float)));
    cuda::check(cusolverDnSpotrf(h.solver, CUBLAS_FILL_MODE_LOWER, b, ajj, b, work, lwork, h.info),
                "cusolverDnSpotrf");
  }
  int info = 0;
  cuda::check(cudaMemcpyAsync(&info, h.info, sizeof(int), cudaMemcpyDeviceToHost, space.cuda_stream()),
              "cudaMemcpyAsync");
  cuda::check(cudaStreamSynchronize(space.cuda_stream()), "cudaStreamSynchronize");
  if (info != 0)
    throw std::runtime_error("potrf: tile not positive definite (cuSOLVER info " + std::to_string(info) + ")");
}

/// L_ij := A_ij L_jj^-T on the device.
template <class T>
void device_trsm(const Kokkos::Cuda& space, const T* ljj, T* aij, int b) {
  auto& h = cuda::handles(space);
  const T one = 1;
  if constexpr (std::is_same_v<T, double>) {
    cuda::check(cublasDtrsm(h.blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                            b, b, &one, ljj, b, aij, b),
                "cublasDtrsm");
  } else {
    cuda::check(cublasStrsm(h.blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                            b, b, &one, ljj, b, aij, b),
                "cublasStrsm");
  }
}

/// A_jj -= Z Z^T on the device, Z being `width` tiles side by side.
template <class T>
void device_syrk(const Kokkos::Cuda& space, const T* z, T* ajj, int b, int width) {
  auto& h = cuda::handles(space);
  const T minus_one = -1, one = 1;
  if constexpr (std::is_same_v<T, double>) {
    cuda::check(
        cublasDsyrk(h.blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, b, width * b, &minus_one, z, b, &one, ajj, b),
        "cublasDsyrk");
  } else {
    cuda::check(
        cublasSsyrk(h.blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, b, width * b, &minus_one, z, b, &one, ajj, b),
        "cublasSsyrk");
  }
}

/// A_ij -= Zi Zj^T on the device, Zi and Zj being `width` tiles side by side.
template <class T>
void device_gemm(const Kokkos::Cuda& space, const T* zi, const T* zj, T* aij, int b, int width) {
  auto& h = cuda::handles(space);
  const T minus_one = -1, one = 1;
  if constexpr (std::is_same_v<T, double>) {
    cuda::check(
        cublasDgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_T, b, b, width * b, &minus_one, zi, b, zj, b, &one, aij, b),
        "cublasDgemm");
  } else {
    cuda::check(
        cublasSgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_T, b, b, width * b, &minus_one, zi, b, zj, b, &one, aij, b),
        "cublasSgemm");
  }
}

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_BACKEND_CUDA_HPP

/// @file
/// CUDA-only helpers of the comm module: page-locked host memory for staging device buffers
/// (copies from and to it run asynchronously on a stream). Included only when
/// `HETERO_HAS_CUDA()`.
#ifndef HETERO_COMM_BACKEND_CUDA_HPP
#define HETERO_COMM_BACKEND_CUDA_HPP

#include <cuda_runtime_api.h>

#include <cstddef>

#include "hetero/core/backend/cuda.hpp"

namespace hetero::detail {

/// `bytes` of page-locked host memory.
inline std::byte* allocate_pinned(std::size_t bytes) {
  void* p = nullptr;
  HETERO_CUDA_CHECK(cudaHostAlloc, &p, bytes, cudaHostAllocDefault);
  return static_cast<std::byte*>(p);
}

/// Returns memory from `allocate_pinned`.
inline void free_pinned(std::byte* p) noexcept { cudaFreeHost(p); }

}  // namespace hetero::detail

#endif  // HETERO_COMM_BACKEND_CUDA_HPP

/// @file
/// CUDA-only helpers of the core module; included only when `HETERO_HAS_CUDA()`.
#ifndef HETERO_CORE_BACKEND_CUDA_HPP
#define HETERO_CORE_BACKEND_CUDA_HPP

#include <cuda_runtime_api.h>

#include <string_view>

#include "hetero/core/error.hpp"

namespace hetero {

/// Throws `hetero::backend_error` naming `call` when `code` is not `cudaSuccess`.
inline void check_cuda(cudaError_t code, std::string_view call) {
  if (code == cudaSuccess) return;
  detail::raise<backend_error>(call, " failed: ", cudaGetErrorString(code), " (CUDA error ",
                               static_cast<int>(code), ")");
}

namespace detail {

/// CUDA devices visible to this process (0 when the driver finds none).
inline int device_count_cuda() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

}  // namespace detail
}  // namespace hetero

/// Calls the CUDA runtime function `fn` with the remaining arguments; throws `hetero::backend_error` naming `fn`
/// when it does not return `cudaSuccess`.
#define HETERO_CUDA_CHECK(fn, ...) ::hetero::check_cuda(fn(__VA_ARGS__), #fn)

#endif  // HETERO_CORE_BACKEND_CUDA_HPP

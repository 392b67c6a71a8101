/// @file
/// HIP-only helpers of the core module; included only when `HETERO_HAS_HIP()`.
#ifndef HETERO_CORE_BACKEND_HIP_HPP
#define HETERO_CORE_BACKEND_HIP_HPP

#include <hip/hip_runtime_api.h>

#include <string_view>

#include "hetero/core/error.hpp"

namespace hetero {

/// Throws `hetero::backend_error` naming `call` when `code` is not `hipSuccess`.
inline void check_hip(hipError_t code, std::string_view call) {
  if (code == hipSuccess) return;
  detail::raise<backend_error>(call, " failed: ", hipGetErrorString(code), " (HIP error ", static_cast<int>(code),
                               ")");
}

namespace detail {

/// HIP devices visible to this process (0 when the runtime finds none).
inline int device_count_hip() {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess) return 0;
  return count;
}

}  // namespace detail
}  // namespace hetero

/// Calls the HIP runtime function `fn` with the remaining arguments; throws `hetero::backend_error` naming `fn`
/// when it does not return `hipSuccess`.
#define HETERO_HIP_CHECK(fn, ...) ::hetero::check_hip(fn(__VA_ARGS__), #fn)

#endif  // HETERO_CORE_BACKEND_HIP_HPP

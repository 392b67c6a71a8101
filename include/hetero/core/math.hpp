/// @file
/// Math for loop bodies that run on a GPU and on host cores alike.
#ifndef HETERO_CORE_MATH_HPP
#define HETERO_CORE_MATH_HPP

#include <Kokkos_Macros.hpp>

#include <cmath>

namespace hetero {

/// 1 / sqrt(x), for device and host code alike. On a GPU it is the device's reciprocal square
/// root (CUDA's and HIP's `rsqrt`, within 1 ulp in double): there a double square root and a
/// double division are each a sequence of instructions with a slow path, and an N-body force
/// loop spent most of its time in them. On host cores it is `1.0 / std::sqrt(x)`.
/// <!-- snippet: fragment
/// double dx = 1, dy = 2, dz = 3, softening2 = 1e-4;
/// -->
/// @code
/// const double inv = hetero::rsqrt(dx * dx + dy * dy + dz * dz + softening2);
/// const double inv3 = inv * inv * inv;
/// @endcode
KOKKOS_INLINE_FUNCTION double rsqrt(double x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return ::rsqrt(x);
#else
  return 1.0 / std::sqrt(x);
#endif
}

}  // namespace hetero

#endif  // HETERO_CORE_MATH_HPP

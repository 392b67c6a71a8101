/// @file
/// The number of devices of the enabled device backend, selected at the edge by config.hpp.
#ifndef HETERO_CORE_DETAIL_DEVICES_HPP
#define HETERO_CORE_DETAIL_DEVICES_HPP

#include "hetero/config.hpp"

#if HETERO_HAS_CUDA()
#include "hetero/core/backend/cuda.hpp"
#elif HETERO_HAS_HIP()
#include "hetero/core/backend/hip.hpp"
#endif

namespace hetero::detail {

/// Devices this process sees: GPUs for CUDA/HIP, 1 for SYCL/OpenMP-target (the backend picks),
/// 0 when Kokkos has no device backend.
inline int device_count() {
#if HETERO_HAS_CUDA()
  return device_count_cuda();
#elif HETERO_HAS_HIP()
  return device_count_hip();
#elif HETERO_HAS_DEVICE()
  return 1;
#else
  return 0;
#endif
}

}  // namespace hetero::detail

#endif  // HETERO_CORE_DETAIL_DEVICES_HPP

/// @file
/// Whether the dist module hands MPI the pointers of an array's memory or copies through
/// host buffers first ("staging"): needed when the array lives in device memory and MPI is
/// not GPU-aware (MPICH on this machine is not).
#ifndef HETERO_DIST_STAGING_HPP
#define HETERO_DIST_STAGING_HPP

#include <string_view>

#include "hetero/core/mpi.hpp"
#include "hetero/dist/concepts.hpp"

namespace hetero {

/// How transfers of an array reach MPI.
enum class staging_mode {
  automatic,  ///< stage when the memory is not host-accessible and MPI cannot take its pointers
  always,     ///< always copy through host buffers (also for host memory: tests the staged path)
  never       ///< always pass the memory's own pointers (you assert MPI is GPU-aware)
};

/// "automatic", "always" or "never".
inline const char* to_string(staging_mode mode) noexcept {
  switch (mode) {
    case staging_mode::automatic: return "automatic";
    case staging_mode::always: return "always";
    case staging_mode::never: return "never";
  }
  return "unknown";
}

namespace detail {

/// The device kind behind a Kokkos memory space, from its name (no backend header needed).
template <class MemorySpace>
gpu_kind device_kind_of() {
  const std::string_view name = MemorySpace::name();
  if (name.find("HIP") != std::string_view::npos) return gpu_kind::hip;
  if (name.find("SYCL") != std::string_view::npos) return gpu_kind::level_zero;
  return gpu_kind::cuda;
}

/// Whether transfers of data in `MemorySpace` go through host buffers under `mode`.
template <class MemorySpace>
bool must_stage(staging_mode mode) {
  if (mode == staging_mode::always) return true;
  if (mode == staging_mode::never) return false;
  if constexpr (host_accessible<MemorySpace>) {
    return false;
  } else {
    // Only a definite "yes" avoids staging: "unknown" MPI libraries get the safe path.
    return mpi_gpu_support(device_kind_of<MemorySpace>()) != gpu_support::yes;
  }
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_DIST_STAGING_HPP

/// @file
/// The one staging policy of hetero: whether a transfer hands MPI the pointers of a buffer's
/// memory or copies through host buffers first. Collectives (comm), array transfers
/// (distarray) and everything built on them ask the same question here.
#ifndef HETERO_CORE_MPI_STAGING_HPP
#define HETERO_CORE_MPI_STAGING_HPP

#include <Kokkos_Core.hpp>

#include <string_view>

#include "hetero/core/concepts.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"

namespace hetero {

/// How buffers the host cannot address (device memory) reach MPI, and how to force the same
/// code paths for host memory so that they are exercised on any machine.
enum class device_buffer_path {
  /// Device pointers go to MPI when it is GPU-aware (asked at run time); otherwise data is
  /// staged through host buffers. Host memory is used directly.
  automatic,
  /// Always copy through host buffers, even for host memory.
  staged,
  /// Always hand the buffer's pointers to MPI, even for host memory. For device memory this
  /// needs an MPI that says it takes that memory's pointers (else a `backend_error`).
  direct
};

/// "automatic", "staged" or "direct".
inline const char* to_string(device_buffer_path path) noexcept {
  switch (path) {
    case device_buffer_path::automatic: return "automatic";
    case device_buffer_path::staged: return "staged";
    case device_buffer_path::direct: return "direct";
  }
  return "unknown";
}

namespace detail {

/// Where a transfer finds a buffer's data.
enum class buffer_route {
  host,    ///< host memory, used in place
  staged,  ///< copied through host staging buffers
  direct   ///< pointers handed to MPI as they are (device memory with a GPU-aware MPI)
};

/// The device kind behind a Kokkos memory space, from its name (no backend header needed).
template <class MemorySpace>
gpu_kind device_kind_of() {
  const std::string_view name = MemorySpace::name();
  if (name.find("HIP") != std::string_view::npos) return gpu_kind::hip;
  if (name.find("SYCL") != std::string_view::npos) return gpu_kind::level_zero;
  return gpu_kind::cuda;
}

/// Whether MPI takes pointers to `MemorySpace`: always for host memory; for device memory only
/// on a definite "yes" from the MPI library ("unknown" gets the safe, staged path).
template <class MemorySpace>
bool mpi_takes_pointers() {
  if constexpr (host_addressable<MemorySpace>) {
    return true;
  } else {
    return mpi_gpu_support(device_kind_of<MemorySpace>()) == gpu_support::yes;
  }
}

/// The route of a buffer in `MemorySpace` under `path` (the same on every rank for host
/// buffers). `what` names the call in the error raised when `direct` cannot be honoured.
template <class MemorySpace>
buffer_route route_of(device_buffer_path path, std::string_view what) {
  switch (path) {
    case device_buffer_path::staged: return buffer_route::staged;
    case device_buffer_path::direct:
      if (!mpi_takes_pointers<MemorySpace>())
        raise<backend_error>(what, ": device_buffer_path::direct was asked for, but this MPI does not take ",
                             MemorySpace::name(), " pointers (not GPU-aware); use automatic or staged");
      return buffer_route::direct;
    case device_buffer_path::automatic: break;
  }
  if constexpr (host_addressable<MemorySpace>) return buffer_route::host;
  return mpi_takes_pointers<MemorySpace>() ? buffer_route::direct : buffer_route::staged;
}

/// Whether transfers of data in `MemorySpace` go through host buffers under `path`.
template <class MemorySpace>
bool must_stage(device_buffer_path path, std::string_view what) {
  return route_of<MemorySpace>(path, what) == buffer_route::staged;
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_CORE_MPI_STAGING_HPP

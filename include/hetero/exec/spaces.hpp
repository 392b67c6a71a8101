/// @file
/// The two execution spaces of a work-sharing loop (device and host), and what hetero needs to
/// know about them: whether they are one space (no split), whether they share memory, whether a
/// space must be driven from the thread that initialised it.
#ifndef HETERO_EXEC_SPACES_HPP
#define HETERO_EXEC_SPACES_HPP

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "hetero/config.hpp"
#include "hetero/core/concepts.hpp"

namespace hetero {

/// The space that runs the device part by default: Kokkos' default execution space (the GPU in
/// a GPU build).
using default_device_space = Kokkos::DefaultExecutionSpace;

/// The space that runs the host part by default: Kokkos' default host execution space. In a
/// CPU-only build it is the same as `default_device_space`, and loops are not split.
using default_host_space = Kokkos::DefaultHostExecutionSpace;

/// True when `Device` and `Host` are one space: the loop runs whole on it, with no split.
template <execution_space Device, execution_space Host>
inline constexpr bool is_single_space = std::is_same_v<Device, Host>;

/// True when the two spaces use the same memory, so a mirrored array needs one allocation.
template <execution_space Device, execution_space Host>
inline constexpr bool shares_memory = std::is_same_v<typename Device::memory_space, typename Host::memory_space>;

/// True for a space whose memory the host cannot address (a GPU): such a device is driven by one
/// host core, which work sharing can leave out of the host part (`split_config`).
template <execution_space Space>
inline constexpr bool is_gpu_space =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

/// Two spaces between which a loop really splits in any build: the default device and host
/// spaces when the build has a device; in a CPU-only build with OpenMP and Serial, OpenMP stands
/// in for the device and Serial is the host. For examples, benchmarks and development on a
/// machine without a GPU.
struct split_spaces {
#if HETERO_HAS_DEVICE() || !(HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL())
  /// The device side: the default device space (`Kokkos::OpenMP` in a CPU-only build with OpenMP and Serial).
  using device = default_device_space;
  /// The host side: the default host space (`Kokkos::Serial` in a CPU-only build with OpenMP and Serial).
  using host = default_host_space;
#else
  /// The device side: the default device space (`Kokkos::OpenMP` in a CPU-only build with OpenMP and Serial).
  using device = Kokkos::OpenMP;
  /// The host side: the default host space (`Kokkos::Serial` in a CPU-only build with OpenMP and Serial).
  using host = Kokkos::Serial;
#endif
};

namespace detail {

/// True for a space that runs in parallel only when launched from the thread that initialised
/// Kokkos: Kokkos 3's OpenMP and Threads keep their thread pool in a thread-local of the master
/// thread, and a launch from any other thread silently runs serially on that thread. Such a
/// side runs on the calling thread; the other side goes to the helper thread.
template <class Space>
inline constexpr bool runs_on_master_thread = false;
#if defined(KOKKOS_ENABLE_OPENMP)
template <>
inline constexpr bool runs_on_master_thread<Kokkos::OpenMP> = true;
#endif
#if defined(KOKKOS_ENABLE_THREADS)
template <>
inline constexpr bool runs_on_master_thread<Kokkos::Threads> = true;
#endif

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_EXEC_SPACES_HPP

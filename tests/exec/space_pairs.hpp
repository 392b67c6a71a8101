// The device/host space pairs the exec tests run over: two different spaces (a real concurrent
// split on this CPU-only machine, in both thread arrangements), one space named twice, and the
// defaults.
#ifndef HETERO_TESTS_EXEC_SPACE_PAIRS_HPP
#define HETERO_TESTS_EXEC_SPACE_PAIRS_HPP

#include <hetero/exec/spaces.hpp>

#include <tuple>
#include <type_traits>

namespace hetero::testing {

template <class Device, class Host>
struct space_pair {
  using device = Device;
  using host = Host;
};

using split_space_pairs = std::tuple<
#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
    space_pair<Kokkos::OpenMP, Kokkos::Serial>, space_pair<Kokkos::Serial, Kokkos::OpenMP>,
#endif
    space_pair<default_device_space, default_host_space>>;

using all_space_pairs = std::tuple<
#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
    space_pair<Kokkos::OpenMP, Kokkos::Serial>, space_pair<Kokkos::Serial, Kokkos::OpenMP>,
    space_pair<Kokkos::Serial, Kokkos::Serial>,
#endif
    space_pair<default_device_space, default_host_space>>;

/// Memory both spaces of a pair can read and write: the host's when the device reaches it,
/// else managed memory (a GPU device with a host partner).
template <class Pair>
using shared_memory = std::conditional_t<
    Kokkos::SpaceAccessibility<typename Pair::device, typename Pair::host::memory_space>::accessible,
    typename Pair::host::memory_space,
#if defined(KOKKOS_ENABLE_CUDA)
    Kokkos::CudaUVMSpace
#else
    typename Pair::host::memory_space
#endif
    >;

}  // namespace hetero::testing

#endif  // HETERO_TESTS_EXEC_SPACE_PAIRS_HPP

/// @file
/// Concepts shared by the modules (one definition, so that `hetero/hetero.hpp` can include them
/// all).
#ifndef HETERO_CORE_CONCEPTS_HPP
#define HETERO_CORE_CONCEPTS_HPP

#include <Kokkos_Core.hpp>

namespace hetero {

/// A Kokkos execution space type (`Kokkos::Cuda`, `Kokkos::OpenMP`, `Kokkos::Serial`, ...).
template <class Space>
concept execution_space = Kokkos::is_execution_space<Space>::value;

namespace detail {
/// Memory a host thread can read and write with plain loads, stores and memcpy.
template <class MemorySpace>
inline constexpr bool host_addressable = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
}  // namespace detail

}  // namespace hetero

#endif  // HETERO_CORE_CONCEPTS_HPP

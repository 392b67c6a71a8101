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

}  // namespace hetero

#endif  // HETERO_CORE_CONCEPTS_HPP

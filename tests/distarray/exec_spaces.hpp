// The host execution spaces this Kokkos was built with, for TEMPLATE_LIST_TEST_CASE.
#ifndef HETERO_TESTS_DIST_EXEC_SPACES_HPP
#define HETERO_TESTS_DIST_EXEC_SPACES_HPP

#include <hetero/config.hpp>

#include <Kokkos_Core.hpp>

#include <tuple>

namespace dist_test {

#if HETERO_HAS_SERIAL() && HETERO_HAS_OPENMP()
using host_exec_spaces = std::tuple<Kokkos::Serial, Kokkos::OpenMP>;
#elif HETERO_HAS_OPENMP()
using host_exec_spaces = std::tuple<Kokkos::OpenMP>;
#else
using host_exec_spaces = std::tuple<Kokkos::DefaultHostExecutionSpace>;
#endif

}  // namespace dist_test

#endif  // HETERO_TESTS_DIST_EXEC_SPACES_HPP

// The device and host spaces of the trace tests' split loop: two spaces where the build has two
// (a real split on the CPU: a part on each side), else the defaults.
#ifndef HETERO_TOOLS_TRACE_TESTS_SPLIT_SPACES_HPP
#define HETERO_TOOLS_TRACE_TESTS_SPLIT_SPACES_HPP

#include <hetero/exec/spaces.hpp>

namespace hetero::testing {

#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
using split_device = Kokkos::OpenMP;
using split_host = Kokkos::Serial;
#else
using split_device = hetero::default_device_space;
using split_host = hetero::default_host_space;
#endif

}  // namespace hetero::testing

#endif  // HETERO_TOOLS_TRACE_TESTS_SPLIT_SPACES_HPP

// Must not compile: a mirrored array of one pair of spaces in a loop over another pair.
#include <hetero/exec.hpp>

#include <cstdint>

using host = Kokkos::DefaultHostExecutionSpace;

void wrong_spaces(hetero::mirrored_array<double*, host, host>& x) {
  hetero::parallel_for("wrong", hetero::split_policy<Kokkos::DefaultExecutionSpace, Kokkos::Serial>(0, 10),
                       hetero::access(hetero::writes(x)), [](std::int64_t, hetero::loop_view<double*>) {});
}

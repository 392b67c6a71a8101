// Must not compile: gmove between arrays of different element types.
#include <hetero/distarray.hpp>

void wrong_types(const hetero::distributed_array<double, 1, Kokkos::HostSpace>& a,
                 const hetero::distributed_array<float, 1, Kokkos::HostSpace>& b) {
  hetero::gmove(a.section({hetero::slice{0, 4}}), b.section({hetero::slice{0, 4}}));
}

// Must not compile: a GPU space as the host side of a split loop.
#include <hetero/exec.hpp>

void gpu_as_host() { const hetero::split_policy<Kokkos::DefaultHostExecutionSpace, Kokkos::Cuda> policy(0, 10); }

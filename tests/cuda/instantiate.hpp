// The compile-only CUDA check: one function per module, each instantiating the module's public
// templates with Kokkos::Cuda and Kokkos::CudaSpace (the device code paths), called from
// main.cpp. The program is built in the test command's CUDA stage and never run (no GPU here).
#ifndef HETERO_TESTS_CUDA_INSTANTIATE_HPP
#define HETERO_TESTS_CUDA_INSTANTIATE_HPP

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace cuda_check {

using device = Kokkos::Cuda;
using device_memory = Kokkos::CudaSpace;
using host = Kokkos::DefaultHostExecutionSpace;

static_assert(!Kokkos::SpaceAccessibility<Kokkos::HostSpace, device_memory>::accessible,
              "the CUDA check needs a device memory the host cannot address");

void core();
void exec();
void dist();
void comm();
void linalg();
void task();
void power();

}  // namespace cuda_check

#endif  // HETERO_TESTS_CUDA_INSTANTIATE_HPP

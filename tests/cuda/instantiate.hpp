// The CUDA check: one function per module, each instantiating the module's public templates with
// Kokkos::Cuda and Kokkos::CudaSpace (the device code paths), called from main.cpp. The program
// is built in the test command's CUDA stage and run (`--run`) by the GPU kit on a GPU node.
#ifndef HETERO_TESTS_CUDA_INSTANTIATE_HPP
#define HETERO_TESTS_CUDA_INSTANTIATE_HPP

#include "gpu_support.hpp"  // tests/gpu: the spaces, shared with the GPU tests

namespace cuda_check {

using gpu_test::device;
using gpu_test::device_memory;
using gpu_test::host;

void core();
void exec();
void dist();
void comm();
void linalg();
void task();
void power();

}  // namespace cuda_check

#endif  // HETERO_TESTS_CUDA_INSTANTIATE_HPP

// Helpers of the GPU tests (tests/gpu): the spaces they run on, and copies between device and
// host memory for checks on the host.
#ifndef HETERO_TESTS_GPU_SUPPORT_HPP
#define HETERO_TESTS_GPU_SUPPORT_HPP

#include <hetero/exec/spaces.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace gpu_test {

using device = Kokkos::Cuda;
using device_memory = Kokkos::CudaSpace;
using managed_memory = Kokkos::CudaUVMSpace;
using host = Kokkos::DefaultHostExecutionSpace;

static_assert(hetero::is_gpu_space<device> && !hetero::is_gpu_space<host>);
static_assert(!Kokkos::SpaceAccessibility<Kokkos::HostSpace, device_memory>::accessible,
              "the GPU tests need a device memory the host cannot address");

/// A device View holding `values`.
template <class T, class Memory = device_memory>
Kokkos::View<T*, Memory> to_device(const std::vector<T>& values, const char* label = "to_device") {
  Kokkos::View<T*, Memory> d(std::string(label), values.size());
  const Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(values.data(),
                                                                                             values.size());
  Kokkos::deep_copy(d, h);
  return d;
}

/// The values of a rank-1 View of any memory, on the host.
template <class View>
std::vector<typename View::non_const_value_type> to_host(const View& v) {
  std::vector<typename View::non_const_value_type> values(v.extent(0));
  const Kokkos::View<typename View::non_const_value_type*, Kokkos::HostSpace,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      h(values.data(), values.size());
  Kokkos::deep_copy(h, v);
  return values;
}

}  // namespace gpu_test

#endif  // HETERO_TESTS_GPU_SUPPORT_HPP

/// @file
/// `data_ops` for a graph's device execution space: how its memory is allocated and how task
/// data is copied there and back (on the device instance's stream), and which device memory an
/// instance runs on (instances of one GPU share it). A host space standing in for a device gets
/// device copies in separate host memory, so that every move happens without a GPU too.
#ifndef HETERO_TASK_DETAIL_DATA_OPS_HPP
#define HETERO_TASK_DETAIL_DATA_OPS_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "hetero/config.hpp"
#include "hetero/core/concepts.hpp"
#include "hetero/task/detail/data_memory.hpp"

#if HETERO_HAS_CUDA()
#include "hetero/task/backend/cuda.hpp"
#endif

namespace hetero::detail {

/// The bytes to allocate for a copy of `bytes`: at least one, so that an empty piece (a rank's
/// empty share) still gets a block of its own (Kokkos gives null for none, which the registry
/// would take for "no room now", and wait forever).
constexpr std::size_t block_bytes(std::size_t bytes) noexcept { return bytes == 0 ? 1 : bytes; }

/// The data operations of device space `Space`.
template <class Space>
data_ops make_data_ops() {
  using memory = typename Space::memory_space;
  data_ops ops;
  ops.host_memory = host_addressable<memory>;
  if constexpr (host_addressable<memory>) {
    ops.allocate = [](std::size_t bytes) -> void* {
      return Kokkos::kokkos_malloc<Kokkos::HostSpace>("hetero::task data (device copy)", block_bytes(bytes));
    };
    ops.deallocate = [](void* p) noexcept { Kokkos::kokkos_free<Kokkos::HostSpace>(p); };
  } else {
    ops.allocate = [](std::size_t bytes) -> void* {
      return Kokkos::kokkos_malloc<memory>("hetero::task data (device copy)", block_bytes(bytes));
    };
    ops.deallocate = [](void* p) noexcept { Kokkos::kokkos_free<memory>(p); };
    ops.copy = [](void* to, const void* from, std::size_t bytes, bool to_device, const void* instance) {
      using device_bytes = Kokkos::View<unsigned char*, memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      using host_bytes = Kokkos::View<unsigned char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      auto* source = static_cast<unsigned char*>(const_cast<void*>(from));
      auto* target = static_cast<unsigned char*>(to);
      const auto& space = *static_cast<const Space*>(instance);
      if (to_device) {
        Kokkos::deep_copy(space, device_bytes(target, bytes), host_bytes(source, bytes));
      } else {
        Kokkos::deep_copy(space, host_bytes(target, bytes), device_bytes(source, bytes));
      }
    };
#if HETERO_HAS_CUDA()
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>)
      ops.capacity = [](const void*) -> std::size_t { return cuda_task_data_capacity(); };
#endif
  }
  return ops;
}

/// The device memory instance `space` runs on: the GPU's number for CUDA, 0 otherwise (every
/// instance of a host space standing in for a device shares one stand-in memory).
template <class Space>
int device_memory_of([[maybe_unused]] const Space& space) {
  if constexpr (requires { space.cuda_device(); }) {
    return static_cast<int>(space.cuda_device());
  } else {
    return 0;
  }
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_OPS_HPP

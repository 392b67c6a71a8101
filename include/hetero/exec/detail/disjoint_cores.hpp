/// @file
/// Work sharing on a CPU-only node without oversubscription. When the device side is itself a
/// CPU space (OpenMP standing in for a GPU), both sides of a split run on the rank's cores: the
/// host part on its `host_cores`, the device part on the rest. Alone (w = 0) the device part has
/// every core. Kokkos 3 holds OpenMP kernels to fewer threads with a partition of its pool
/// (`OpenMP::partition_master`, which needs nested OpenMP); Kokkos 4 and later with an OpenMP
/// instance of its own pool size.
#ifndef HETERO_EXEC_DETAIL_DISJOINT_CORES_HPP
#define HETERO_EXEC_DETAIL_DISJOINT_CORES_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <type_traits>

#include "hetero/core/detail/cpu.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/exec/spaces.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace hetero::detail {

/// True for a device space that runs on the host's cores (no GPU): a split must divide the cores.
template <class Device>
inline constexpr bool device_on_host_cores = !is_gpu_space<Device>;

/// True for a device space whose kernels hetero can hold to fewer threads than its pool.
template <class Device>
inline constexpr bool can_narrow =
#if defined(KOKKOS_ENABLE_OPENMP)
    std::is_same_v<Device, Kokkos::OpenMP>;
#else
    false;
#endif

/// The threads the device part keeps while the host part runs on `host_cores` of the rank's
/// `rank_cores` cores: the cores left, at most the device space's pool; 0 when nothing is left
/// (a split would oversubscribe). The rank's cores, not the pool: a rank of 2 cores whose OpenMP
/// pool has 1 thread (`--kokkos-threads=1`) leaves that thread its own core beside a host part.
template <class Device>
int device_threads_beside(const Device& device, int rank_cores, int host_cores) {
  return std::clamp(rank_cores - host_cores, 0, static_cast<int>(device.concurrency()));
}

/// The cores this rank may use: `configured` (`split_config::host_cores`) when set, else the
/// launcher's binding (its affinity mask) where it has one, else the node's cores over the ranks
/// on the node (`hetero::runtime`'s count, or the launcher's).
inline int rank_cores(int configured) {
  return configured > 0 ? configured : cores_per_rank(process_node_ranks());
}

#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION >= 40000
/// Kokkos 4+: an OpenMP instance with a pool of `threads`, made once per size and released when
/// Kokkos finalises.
inline Kokkos::OpenMP openmp_with_threads(int threads) {
  static std::mutex mutex;
  static std::map<int, Kokkos::OpenMP>* instances = nullptr;
  std::scoped_lock lock(mutex);
  if (instances == nullptr) {
    instances = new std::map<int, Kokkos::OpenMP>();
    Kokkos::push_finalize_hook([] {
      std::scoped_lock inner(mutex);
      delete instances;
      instances = nullptr;
    });
  }
  auto it = instances->find(threads);
  if (it == instances->end()) it = instances->emplace(threads, Kokkos::OpenMP(threads)).first;
  return it->second;
}
#endif

/// The instance on which the device part of a split launches: `device` itself, or under Kokkos
/// 4+ an OpenMP instance of `threads` threads when the part is held to fewer (`threads` > 0).
template <class Device>
Device device_instance(const Device& device, int threads) {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION >= 40000
  if constexpr (std::is_same_v<Device, Kokkos::OpenMP>) {
    if (threads > 0 && threads < device.concurrency()) return openmp_with_threads(threads);
  }
#endif
  (void)threads;
  return device;
}

/// Calls `f(instance)` with `device_instance(device, threads)`, without a copy of `device` when
/// it is the instance itself (threads 0: a Kokkos 4 instance copy is two atomic operations).
template <class Device, class F>
void with_device_instance(const Device& device, int threads, const F& f) {
  if (threads > 0) {
    const Device narrowed = device_instance(device, threads);
    f(narrowed);
  } else {
    f(device);
  }
}

/// Runs `part()` so that the kernels it launches on `Device`'s default instance use `threads`
/// threads (Kokkos 3 OpenMP: inside a one-partition `partition_master` of that size; nested
/// OpenMP is enabled for the call). Otherwise (`threads` 0, or Kokkos 4+ where the instance
/// carries its size) it just runs `part()`. `part` must not throw (it runs in an OpenMP region).
template <class Device, class Part>
void run_with_threads(int threads, Part& part) {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  if constexpr (std::is_same_v<Device, Kokkos::OpenMP>) {
    if (threads > 0 && threads < Kokkos::OpenMP::concurrency()) {
      const int levels = omp_get_max_active_levels();
      if (levels < 2) omp_set_max_active_levels(2);
      Kokkos::OpenMP::partition_master([&](int, int) { part(); }, 1, threads);
      if (levels < 2) omp_set_max_active_levels(levels);
      return;
    }
  }
#endif
  (void)threads;
  part();
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_DISJOINT_CORES_HPP

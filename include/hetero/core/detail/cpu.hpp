/// @file
/// How many cores this process may use, from its CPU affinity mask; which machine it runs on;
/// a pause for spin loops.
#ifndef HETERO_CORE_DETAIL_CPU_HPP
#define HETERO_CORE_DETAIL_CPU_HPP

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace hetero::detail {

/// Tells the core that this thread is spinning (lets a sibling hyper-thread run); used inside
/// spin loops.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// The node's online cores, read once: `std::thread::hardware_concurrency()` opens and reads a
/// sysfs file on every call with glibc 2.34 and later, which cost a reflect of a small array
/// five times its time when every wait asked it (`make_wait_policy`).
inline int online_cores() noexcept {
  static const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  return cores;
}

/// The kernel this process runs on, as a number: a hash of the boot id the kernel draws at each
/// boot (`/proc/sys/kernel/random/boot_id`; 0 where it cannot be read). Processes with the same
/// number share one kernel and its cores, even where MPI sees them on different nodes
/// (containers with their own host names, emulated nodes: docs/nodes.md).
inline std::uint64_t machine_id() noexcept {
  std::uint64_t hash = 0;
#if defined(__linux__)
  if (std::FILE* file = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    hash = 14695981039346656037ULL;  // FNV-1a
    for (int c = std::fgetc(file); c != EOF && c != '\n'; c = std::fgetc(file))
      hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    std::fclose(file);
  }
#endif
  return hash;
}

/// Cores in this process's affinity mask (all online cores where there is no mask).
inline int affinity_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return online_cores();
}

/// Host threads for one of `ranks_on_node` ranks sharing a node: when a launcher already
/// bound this process to fewer cores than the node has, that binding is this rank's share;
/// otherwise the node's cores are divided evenly (at least one each).
inline int cores_per_rank(int ranks_on_node) {
  const int online = online_cores();
  const int mine = affinity_cores();
  if (mine < online) return mine;
  return std::max(1, online / std::max(1, ranks_on_node));
}

}  // namespace hetero::detail

#endif  // HETERO_CORE_DETAIL_CPU_HPP

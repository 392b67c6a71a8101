/// @file
/// The memory side of task data: how a graph's device space allocates and copies (`data_ops`,
/// made from the space by `task_graph`), each device memory with its cap and its recency list
/// (`device_memory`), and the move queue of each device slot (`slot_moves`): moves to a device
/// are enqueued on the slot's instance, in order with the kernels launched there, and known to
/// have arrived once the slot is fenced. Where the "device" is host memory (a host execution
/// space standing in for a GPU), the moves are kept in the queue and copied when the slot is
/// fenced or launches a task, so that moves in flight happen on every machine.
#ifndef HETERO_TASK_DETAIL_DATA_MEMORY_HPP
#define HETERO_TASK_DETAIL_DATA_MEMORY_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <vector>

#include "hetero/task/detail/data_state.hpp"
#include "hetero/task/detail/device_queues.hpp"

namespace hetero::detail {

/// Reads the `bytes` at `p` once, front to back (the word at every 64th byte from `p`), so that
/// the task about to run on this core finds them in its caches; returns the sum of those words. For a tile that
/// another rank wrote here (with streaming stores, or through MPI) long before its first reader ran: a kernel
/// reading it cold in its own order (a GEMM packing a panel) waits far longer than this sweep, which the hardware
/// prefetchers follow (docs/results/task.md, "Block Cholesky on task data").
inline std::uint64_t read_through(const void* p, std::size_t bytes) noexcept {
  constexpr std::size_t line = 64;
  const auto* b = static_cast<const std::byte*>(p);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i + sizeof(std::uint64_t) <= bytes; i += line) {
    std::uint64_t word;
    std::memcpy(&word, b + i, sizeof word);
    sum += word;
  }
  // Kept, so that the loads are not dropped where the caller ignores the sum; never read.
  static std::atomic<std::uint64_t> sink{0};
  sink.fetch_add(sum, std::memory_order_relaxed);
  return sum;
}

/// What a graph's device execution space provides to move task data (type-erased).
struct data_ops {
  /// The device memory is host memory (the device is a host execution space standing in for a
  /// GPU): copies are `memcpy`, and moves to the device wait in the slot's queue until it is
  /// fenced or launches a task.
  bool host_memory = true;
  void* (*allocate)(std::size_t bytes) = nullptr;    ///< device memory
  void (*deallocate)(void* ptr) noexcept = nullptr;  ///< ... given back
  /// Copies on `instance`'s stream, in order with its kernels (not host memory only).
  void (*copy)(void* to, const void* from, std::size_t bytes, bool to_device, const void* instance) = nullptr;
  /// What one device memory holds (0: unknown).
  std::size_t (*capacity)(const void* instance) = nullptr;
};

/// One device memory of this rank: what it may hold, what is allocated, and its copies from the
/// least to the most recently used.
struct device_memory {
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
  std::mutex mutex;      ///< guards the rest; taken before any data_state's mutex
  std::size_t used = 0;  ///< allocated, free blocks included
  std::list<data_state*> recency;
  std::multimap<std::size_t, void*> free_blocks;
  std::vector<int> slots;              ///< the device slots whose instances run on it
  std::atomic<std::size_t> pinned{0};  ///< bytes of its copies that tasks use now
};

/// The moves enqueued on one device slot, numbered; `completed` says how far they arrived.
struct slot_moves {
  struct deferred {
    void* to;
    const void* from;
    std::size_t bytes;
    data_state* data;
  };
  std::mutex mutex;
  std::uint64_t enqueued = 0;
  std::atomic<std::uint64_t> completed{0};
  std::deque<deferred> waiting;  ///< host memory only: copied at the next `complete`
};

/// Whether a copy marked arriving on `moves` as `ticket` has arrived.
inline bool arrived(const data_copy& c, const std::vector<std::unique_ptr<slot_moves>>& moves) noexcept {
  return c.arriving_slot < 0 || moves[static_cast<std::size_t>(c.arriving_slot)]->completed.load(
                                    std::memory_order_acquire) >= c.arriving_ticket;
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_MEMORY_HPP

/// @file
/// The device tasks of a task graph: one queue of tasks pinned to each device execution space
/// instance, one shared queue of tasks any device may run, and a busy flag per device so that
/// each device runs one task at a time. A device task is launched on its instance and fenced
/// before its successors are released, as the macro-task scheduling of StarPU-like runtimes
/// does.
#ifndef HETERO_TASK_DETAIL_DEVICE_QUEUES_HPP
#define HETERO_TASK_DETAIL_DEVICE_QUEUES_HPP

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "hetero/task/detail/idle.hpp"
#include "hetero/task/detail/node.hpp"

namespace hetero::detail {

/// One device execution space instance with its queue of pinned tasks.
struct device_slot {
  int index = 0;
  int memory = 0;  ///< the device memory its tasks' data lives in (instances of one GPU share one)
  const void* instance = nullptr;
  void (*fence)(const void*) = nullptr;
  /// Only the declaring thread (worker 0) may start its tasks: Kokkos 3's OpenMP runs kernels
  /// in parallel only from the thread that initialised Kokkos, and on one thread from any other.
  bool master_only = false;
  std::atomic<bool> busy{false};
  std::mutex mutex;
  std::deque<node*> pinned;
  std::atomic<int> pinned_count{0};
};

/// The device queues of one graph. An idle worker looks here first while a device is idle, so
/// that the devices are kept busy (their tasks are the long ones); pinned tasks go before shared
/// ones (their data is on that device).
class device_queues {
 public:
  device_queues(std::vector<std::unique_ptr<device_slot>>& devices, idle_event& idle)
      : m_devices(devices), m_idle(idle) {}
  device_queues(const device_queues&) = delete;
  device_queues& operator=(const device_queues&) = delete;

  /// Queues the device task `n` (pinned when `n->device >= 0`) and wakes a worker to take it.
  void push(node* n) {
    if (n->device >= 0) {
      device_slot& d = *m_devices[static_cast<std::size_t>(n->device)];
      std::lock_guard lock(d.mutex);
      d.pinned.push_back(n);
      d.pinned_count.fetch_add(1, std::memory_order_relaxed);
    } else {
      std::lock_guard lock(m_shared_mutex);
      m_shared.push_back(n);
      m_shared_count.fetch_add(1, std::memory_order_relaxed);
    }
    // After the count above: a sleeper whose visible() reads this increment sees that count too;
    // one that read an earlier value is woken below (idle_event's waiter count).
    m_queued.fetch_add(1, std::memory_order_seq_cst);
    wake();
  }

  /// Whether a device task is queued (relaxed: a hint for the worker's own fast path).
  [[nodiscard]] bool queued() const noexcept { return m_queued.load(std::memory_order_relaxed) > 0; }

  /// Whether worker `w` may start device tasks (all devices of a graph are of one space).
  [[nodiscard]] bool may_start(int w) const noexcept {
    return w == 0 || m_devices.empty() || !m_devices.front()->master_only;
  }

  /// A queued task and the idle device it now holds (starting with worker `w`'s own device),
  /// or {nullptr, nullptr}. The device stays busy until `complete`.
  std::pair<node*, device_slot*> take(int w) {
    if (m_queued.load(std::memory_order_seq_cst) == 0 || !may_start(w)) return {nullptr, nullptr};
    return take_queued(w);
  }

  /// Runs the body of `n` on `d`'s instance and fences it: on return its results are in place.
  /// A body that throws is fenced too: what it launched may still use its data.
  static void launch(node& n, const device_slot& d) {
    try {
      n.invoke(n, d.instance);
    } catch (...) {
      d.fence(d.instance);
      throw;
    }
    d.fence(d.instance);
  }

  /// `d` finished its task: it is idle again, and a worker is woken for the next queued one.
  void complete(device_slot& d) {
    d.busy.store(false, std::memory_order_seq_cst);
    if (m_queued.load(std::memory_order_seq_cst) > 0) wake();
  }

  /// Whether worker `w` (any worker: -1) could take a device task now: an idle device it may
  /// start has a task pinned to it, or a task any device may run is queued. A task pinned to a
  /// busy device is no work for the others (they sleep, not spin; `complete` wakes one when the
  /// device frees), nor is a task that only the declaring thread may start, for the other workers.
  [[nodiscard]] bool visible(int w) const noexcept {
    if (m_queued.load(std::memory_order_seq_cst) == 0) return false;
    for (const auto& d : m_devices)
      if ((w <= 0 || !d->master_only) && !d->busy.load(std::memory_order_seq_cst) && has_task_for(*d)) return true;
    return false;
  }

 private:
  // The part of `take` past the check for queued tasks: out of line, so that the check stays
  // inlined into every worker's look for work (device tasks are rare in most graphs).
  [[gnu::noinline]] std::pair<node*, device_slot*> take_queued(int w) {
    const std::size_t count = m_devices.size();
    for (std::size_t i = 0; i < count; ++i) {
      device_slot& d = *m_devices[(static_cast<std::size_t>(w) + i) % count];
      if (d.busy.load(std::memory_order_relaxed) || d.busy.exchange(true, std::memory_order_acquire)) continue;
      if (node* n = take_from(d)) return {n, &d};
      // Nothing for d: idle again. A task pushed while it was held here woke a worker that saw d
      // busy and may sleep again (visible()): this thread wakes one, having seen the task.
      d.busy.store(false, std::memory_order_seq_cst);
      if (m_queued.load(std::memory_order_seq_cst) > 0 && has_task_for(d)) wake();
    }
    return {nullptr, nullptr};
  }

  // Whether a queued task may run on `d`: one pinned to it, or one any device may run (read
  // after m_queued, seq_cst, whose increment follows the counts' in push).
  [[nodiscard]] bool has_task_for(const device_slot& d) const noexcept {
    return d.pinned_count.load(std::memory_order_seq_cst) > 0 ||
           m_shared_count.load(std::memory_order_seq_cst) > 0;
  }

  // Where only the declaring thread may start device tasks, wake every sleeper, so that it is
  // among them.
  void wake() {
    if (m_devices.empty() || !m_devices.front()->master_only) {
      m_idle.notify_one();
    } else {
      m_idle.notify_all();
    }
  }

  node* take_from(device_slot& d) {
    if (d.pinned_count.load(std::memory_order_relaxed) > 0) {
      std::lock_guard lock(d.mutex);
      if (!d.pinned.empty()) {
        node* n = d.pinned.front();
        d.pinned.pop_front();
        d.pinned_count.fetch_sub(1, std::memory_order_relaxed);
        m_queued.fetch_sub(1, std::memory_order_relaxed);
        return n;
      }
    }
    std::lock_guard lock(m_shared_mutex);
    if (m_shared.empty()) return nullptr;
    node* n = m_shared.front();
    m_shared.pop_front();
    m_shared_count.fetch_sub(1, std::memory_order_relaxed);
    m_queued.fetch_sub(1, std::memory_order_relaxed);
    return n;
  }

  std::vector<std::unique_ptr<device_slot>>& m_devices;
  idle_event& m_idle;
  alignas(64) std::atomic<int> m_queued{0};
  std::mutex m_shared_mutex;
  std::deque<node*> m_shared;          // tasks any device may run
  std::atomic<int> m_shared_count{0};  // its size, read without the lock (visible)
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DEVICE_QUEUES_HPP

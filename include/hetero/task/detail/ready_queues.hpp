/// @file
/// The ready CPU tasks of a task graph: one work-stealing deque per worker (the owner pushes
/// and pops the newest, thieves take the oldest), a mailbox per worker for the roots of a
/// replay, and one shared queue for tasks with a priority above 0, which every worker looks at
/// before its own deque.
#ifndef HETERO_TASK_DETAIL_READY_QUEUES_HPP
#define HETERO_TASK_DETAIL_READY_QUEUES_HPP

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "hetero/task/detail/idle.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/spin_mutex.hpp"
#include "hetero/task/detail/work_deque.hpp"

namespace hetero::detail {

/// The CPU ready queues. Every operation that makes a task visible wakes one sleeper through
/// `idle` (one load when nobody sleeps); nothing on the deque paths locks or allocates once the
/// deques have grown to the graph's width.
class ready_queues {
  struct alignas(64) worker_queue {
    work_deque<node*> deque;
    std::uint64_t random = 0x853c49e6748fea9bULL;  // xorshift state: the first victim to rob
    // Roots of a replay handed to this worker by the declaring thread.
    std::atomic<bool> mail_ready{false};
    node* const* mail = nullptr;
    std::size_t mail_count = 0;
  };

 public:
  ready_queues(int workers, idle_event& idle) : m_idle(idle) {
    for (int w = 0; w < workers; ++w) {
      m_workers.push_back(std::make_unique<worker_queue>());
      m_workers.back()->random += static_cast<std::uint64_t>(w) * 0x9e3779b97f4a7c15ULL;
    }
  }
  ready_queues(const ready_queues&) = delete;
  ready_queues& operator=(const ready_queues&) = delete;

  [[nodiscard]] std::size_t workers() const noexcept { return m_workers.size(); }

  /// Worker `w` queues the CPU task `n`: a priority task in the shared queue, any other in its
  /// own deque.
  void push(int w, node* n) {
    if (n->urgent) {
      push_urgent(n);
    } else {
      push_own(w, n);
    }
  }

  /// Worker `w` queues `n` in its own deque (whatever its priority).
  void push_own(int w, node* n) {
    m_workers[static_cast<std::size_t>(w)]->deque.push(n);
    m_idle.notify_one();
  }

  /// Declaring thread: ordinary roots of a replay, split evenly among the workers (each takes
  /// its share from its mailbox, so that no root has to be stolen). Wakes every sleeper. A
  /// replay of fewer than `min_share` roots per worker stays in the declaring thread's deque:
  /// it starts them at once, where a mailbox would wait for its owner to wake (~20 us).
  void deal(std::span<node* const> roots) {
    constexpr std::size_t min_share = 4;
    const std::size_t count = m_workers.size();
    const std::size_t share = roots.size() / count >= min_share ? roots.size() / count : 0;
    for (std::size_t w = 1; w < count && share > 0; ++w) {
      worker_queue& other = *m_workers[w];
      other.mail = roots.data() + roots.size() - w * share;
      other.mail_count = share;
      other.mail_ready.store(true, std::memory_order_seq_cst);
    }
    m_workers[0]->deque.push_bulk(roots.first(roots.size() - (count - 1) * share));
    m_idle.notify_all();
  }

  /// Declaring thread (or a worker starting a composed recording): the priority tasks among
  /// `nodes` (those that are not device tasks; `count` of them) enter the shared queue under
  /// one lock, so that a replay of many priority roots is not a lock hand-off per root.
  void push_urgent_all(std::span<node* const> nodes, std::size_t count) {
    if (count == 0) return;
    {
      std::lock_guard lock(m_urgent_mutex);
      const std::size_t before = m_urgent.size();
      for (node* n : nodes)
        if (n->kind != node_kind::device) m_urgent.push_back(n);
      if (before == 0) {
        std::make_heap(m_urgent.begin(), m_urgent.end(), runs_after);
      } else {
        for (auto it = m_urgent.begin() + static_cast<std::ptrdiff_t>(before); it != m_urgent.end();)
          std::push_heap(m_urgent.begin(), ++it, runs_after);
      }
    }
    m_urgent_queued.fetch_add(static_cast<int>(count), std::memory_order_seq_cst);
    m_idle.notify_all();
  }

  /// Tasks in worker `w`'s own deque (a hint: thieves may be taking some).
  [[nodiscard]] std::int64_t own_size(int w) const noexcept {
    return m_workers[static_cast<std::size_t>(w)]->deque.size_hint();
  }
  /// Worker `w`'s newest task, or nullptr.
  node* pop_own(int w) { return m_workers[static_cast<std::size_t>(w)]->deque.pop(); }

  /// What worker `w` runs next: the first priority task, then its mail, then its own newest
  /// task, then the oldest task of another worker (victims in random order). nullptr if none.
  node* take(int w) {
    if (m_urgent_queued.load(std::memory_order_seq_cst) > 0)
      if (node* n = take_urgent()) return n;
    worker_queue& me = *m_workers[static_cast<std::size_t>(w)];
    if (me.mail_ready.load(std::memory_order_acquire)) {
      me.mail_ready.store(false, std::memory_order_relaxed);
      me.deque.push_bulk(std::span<node* const>(me.mail, me.mail_count));
    }
    if (node* n = me.deque.pop()) return n;
    return steal(w, me);
  }

  /// The continuation `next` of worker `w`, or a queued priority task that goes before it (then
  /// `next` is queued). An ordinary task always yields to a queued priority task: nullptr then,
  /// and `take` finds the priority task.
  node* keep_or_swap(int w, node* next) {
    if (m_urgent_queued.load(std::memory_order_seq_cst) == 0) return next;
    return yield_to_urgent(w, next);
  }

  /// Whether any worker could take a task now (seq_cst: pairs with `idle_event::prepare_wait`).
  [[nodiscard]] bool visible() const noexcept {
    if (m_urgent_queued.load(std::memory_order_seq_cst) > 0) return true;
    for (const auto& other : m_workers)
      if (other->deque.size_hint() > 0 || other->mail_ready.load(std::memory_order_seq_cst)) return true;
    return false;
  }

 private:
  // `keep_or_swap` once a priority task is queued: out of line, so that the check above stays
  // inlined into the run of a chain of tasks.
  [[gnu::noinline]] node* yield_to_urgent(int w, node* next) {
    if (!next->urgent) {
      push_own(w, next);
      return nullptr;
    }
    std::lock_guard lock(m_urgent_mutex);
    if (m_urgent.empty() || !runs_after(next, m_urgent.front())) return next;
    std::pop_heap(m_urgent.begin(), m_urgent.end(), runs_after);
    std::swap(next, m_urgent.back());
    std::push_heap(m_urgent.begin(), m_urgent.end(), runs_after);
    m_idle.notify_one();  // the queued task may go to an idle worker
    return next;
  }

  // Highest priority first and, within a priority, in declaration order (the oldest first, as a
  // serial run would reach it).
  // (A function object, not a function: the heap algorithms then inline the comparison.)
  static constexpr auto runs_after = [](const node* a, const node* b) noexcept {
    return a->priority != b->priority ? a->priority < b->priority : a->sequence > b->sequence;
  };

  void push_urgent(node* n) {
    {
      std::lock_guard lock(m_urgent_mutex);
      m_urgent.push_back(n);
      std::push_heap(m_urgent.begin(), m_urgent.end(), runs_after);
    }
    m_urgent_queued.fetch_add(1, std::memory_order_seq_cst);
    m_idle.notify_one();
  }

  node* take_urgent() {
    std::lock_guard lock(m_urgent_mutex);
    if (m_urgent.empty()) return nullptr;
    std::pop_heap(m_urgent.begin(), m_urgent.end(), runs_after);
    node* n = m_urgent.back();
    m_urgent.pop_back();
    m_urgent_queued.fetch_sub(1, std::memory_order_relaxed);
    return n;
  }

  node* steal(int w, worker_queue& me) {
    const std::size_t count = m_workers.size();
    if (count < 2) return nullptr;
    me.random ^= me.random << 13;
    me.random ^= me.random >> 7;
    me.random ^= me.random << 17;
    const std::size_t start = static_cast<std::size_t>(me.random % count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t victim = (start + i) % count;
      if (victim == static_cast<std::size_t>(w)) continue;
      if (node* n = m_workers[victim]->deque.steal()) return n;
    }
    return nullptr;
  }

  idle_event& m_idle;
  std::vector<std::unique_ptr<worker_queue>> m_workers;
  alignas(64) std::atomic<int> m_urgent_queued{0};
  alignas(64) spin_mutex m_urgent_mutex;
  std::vector<node*> m_urgent;  // a heap: runs_after
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_READY_QUEUES_HPP

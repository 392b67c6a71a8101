/// @file
/// How idle workers sleep without losing a wake-up: an event count. A worker announces that it
/// is about to sleep (`prepare_wait`), looks for work once more, and sleeps only if nobody
/// notified in between. Whoever makes work visible calls `notify_one`, which costs one load
/// when nobody sleeps.
#ifndef HETERO_TASK_DETAIL_IDLE_HPP
#define HETERO_TASK_DETAIL_IDLE_HPP

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "hetero/core/detail/cpu.hpp"

namespace hetero::detail {

/// Sleep and wake-up for idle threads.
///
/// Lost wake-ups are impossible because both sides use sequentially consistent operations in
/// opposite orders (Dekker): the sleeper increments `m_waiters` and then looks for work; the
/// producer publishes work (a seq_cst store, e.g. the deque's bottom) and then loads
/// `m_waiters`. One of them sees the other.
class idle_event {
 public:
  using ticket = std::uint64_t;

  /// Announces that the calling thread is about to sleep; look for work once more afterwards.
  ticket prepare_wait() noexcept {
    m_waiters.fetch_add(1, std::memory_order_seq_cst);
    // The epoch is read before the flag is cleared, never after. Otherwise a notify could set
    // the flag and bump the epoch between the two: the ticket would include that bump, the
    // flag would stay set, and every later notify_one would skip this sleeper.
    const ticket t = m_epoch.load(std::memory_order_seq_cst);
    m_signalled.store(false, std::memory_order_seq_cst);  // a new sleeper: the next notify signals again
    return t;
  }

  /// Gives up sleeping after `prepare_wait` (work was found).
  void cancel_wait() noexcept { m_waiters.fetch_sub(1, std::memory_order_seq_cst); }

  /// Sleeps until a notification after `t` was taken, or `timeout` (when positive) elapsed.
  void wait(ticket t, std::chrono::nanoseconds timeout) {
    {
      std::unique_lock lock(m_mutex);
      const auto notified = [&] { return m_epoch.load(std::memory_order_relaxed) != t; };
      if (timeout.count() > 0) {
        m_cv.wait_for(lock, timeout, notified);
      } else {
        m_cv.wait(lock, notified);
      }
    }
    m_signalled.store(false, std::memory_order_seq_cst);
    m_waiters.fetch_sub(1, std::memory_order_seq_cst);
  }

  /// Wakes one sleeper, if any. Call after making work visible with a seq_cst store. While a
  /// wake-up is on its way (the woken thread has not run yet) further calls cost one exchange,
  /// not a system call each.
  void notify_one() {
    if (m_waiters.load(std::memory_order_seq_cst) == 0) return;
    if (m_signalled.exchange(true, std::memory_order_seq_cst)) return;
    bump();
    m_cv.notify_one();
  }

  /// Wakes every sleeper, if any.
  void notify_all() {
    if (m_waiters.load(std::memory_order_seq_cst) == 0) return;
    bump();
    m_cv.notify_all();
  }

  /// Threads between `prepare_wait` and the end of `wait` or `cancel_wait`.
  [[nodiscard]] int waiters() const noexcept { return m_waiters.load(std::memory_order_relaxed); }

 private:
  void bump() {
    // Under the mutex: a sleeper that checked the epoch is then inside cv.wait, so it is woken.
    // seq_cst: the bump follows the notify's exchange in the single total order, so a ticket
    // read before the flag was cleared cannot already include it.
    std::lock_guard lock(m_mutex);
    m_epoch.fetch_add(1, std::memory_order_seq_cst);
  }

  std::atomic<int> m_waiters{0};
  std::atomic<bool> m_signalled{false};  // a notify_one whose sleeper has not woken yet
  std::atomic<ticket> m_epoch{0};
  std::mutex m_mutex;
  std::condition_variable m_cv;
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_IDLE_HPP

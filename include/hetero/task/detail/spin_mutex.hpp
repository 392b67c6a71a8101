/// @file
/// A lock for critical sections of a few dozen instructions taken by every worker (the shared
/// priority queue): it spins instead of sleeping in the kernel, and yields the core after a
/// while in case the holder was preempted (more threads than cores).
#ifndef HETERO_TASK_DETAIL_SPIN_MUTEX_HPP
#define HETERO_TASK_DETAIL_SPIN_MUTEX_HPP

#include <atomic>
#include <thread>

#include "hetero/core/detail/cpu.hpp"

namespace hetero::detail {

/// Test-and-test-and-set lock; meets BasicLockable (use it with std::lock_guard).
class spin_mutex {
 public:
  void lock() noexcept {
    for (int spins = 0; m_locked.exchange(true, std::memory_order_acquire);) {
      while (m_locked.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
          cpu_relax();
        } else {
          spins = 0;
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() noexcept {
    return !m_locked.load(std::memory_order_relaxed) && !m_locked.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { m_locked.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> m_locked{false};
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_SPIN_MUTEX_HPP

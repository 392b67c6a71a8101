/// @file
/// The watchdog: a thread, started by `hetero::runtime`, that ends the job when one of this
/// process's threads has been blocked too long in an MPI call that cannot give up. MPI can
/// neither time out nor cancel such a call (a window's flush or free, a blocking step of a
/// set-up, a collective whose ranks were all seen to arrive), so the alternative is a hang.
/// The call records itself with its limit, twice the wait limit (`blocking_call` in
/// core/mpi/wait.hpp); the watchdog looks every 100 ms, and past it prints what blocked, then
/// this rank's waits, and calls `MPI_Abort` (with `MPI_THREAD_MULTIPLE`; `_exit` otherwise, or
/// when the abort has not ended the process a second later), after which the launcher ends
/// the other ranks. Waits that give up by themselves are not watched.
#ifndef HETERO_CORE_MPI_WATCHDOG_HPP
#define HETERO_CORE_MPI_WATCHDOG_HPP

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "hetero/core/detail/wait_registry.hpp"
#include "hetero/core/mpi.hpp"

namespace hetero::detail {

/// The exit status of a process the watchdog ends (EX_SOFTWARE).
inline constexpr int blocked_call_exit_code = 70;

/// The first watched call of this process that has blocked past its limit at `now`, or null.
inline const wait_slot* overdue_blocked_call(std::int64_t now) noexcept {
  for (const wait_slot* s = g_wait_registry.head.load(std::memory_order_acquire); s; s = s->next) {
    if (!s->active.load(std::memory_order_acquire)) continue;
    const std::int64_t limit = s->limit_ns.load(std::memory_order_relaxed);
    if (limit > 0 && now - s->since_ns.load(std::memory_order_relaxed) > limit) return s;
  }
  return nullptr;
}

/// Writes why the process ends (the overdue call `s`), then every wait in progress, to `fd`.
inline void report_blocked_call(int fd, const wait_slot& s, std::int64_t now) noexcept {
  signal_safe_line line;
  line.text("hetero: rank ");
  line.number(g_wait_registry.world_rank.load(std::memory_order_relaxed));
  line.text(" (pid ");
  line.number(static_cast<long long>(::getpid()));
  line.text(", thread ");
  line.number(s.thread_number);
  line.text("): blocked ");
  line.seconds(now - s.since_ns.load(std::memory_order_relaxed));
  line.text(" s in ");
  describe(line, s.words.get());
  line.text(", past ");
  line.seconds(s.limit_ns.load(std::memory_order_relaxed));
  if (const int limits = s.limits.load(std::memory_order_relaxed); limits == 2) {
    line.text(" s (twice the wait limit)");
  } else {
    line.text(" s (");
    line.number(limits);
    line.text(" times the wait limit)");
  }
  line.text("; MPI cannot abandon this call, so hetero ends the job");
  line.write(fd);
  line.text(
      "hetero: a rank this call needs is stuck outside MPI or gone; if it is only slow, raise the limit "
      "(HETERO_WAIT_TIMEOUT, runtime_options::wait_timeout or hetero::set_wait_timeout; 0 waits forever). "
      "This rank's waits:");
  line.write(fd);
  write_pending_waits(fd);
}

/// Looks for overdue blocking calls while it lives (one per process: `hetero::runtime`'s).
class blocked_call_watchdog {
 public:
  /// `may_abort_mpi`: MPI runs with `MPI_THREAD_MULTIPLE`, so this thread may call `MPI_Abort`.
  explicit blocked_call_watchdog(bool may_abort_mpi) : m_abort_mpi(may_abort_mpi), m_thread([this] { run(); }) {}
  ~blocked_call_watchdog() {
    {
      const std::lock_guard lock(m_mutex);
      m_stop = true;
    }
    m_wake.notify_one();
    m_thread.join();
  }
  blocked_call_watchdog(const blocked_call_watchdog&) = delete;
  blocked_call_watchdog& operator=(const blocked_call_watchdog&) = delete;

  /// How often it looks.
  static constexpr std::chrono::milliseconds period{100};

 private:
  void run() {
    std::unique_lock lock(m_mutex);
    while (!m_wake.wait_for(lock, period, [this] { return m_stop; })) {
      const std::int64_t now = monotonic_ns();
      if (const wait_slot* s = overdue_blocked_call(now)) end_job(*s, now);
    }
  }

  [[noreturn]] void end_job(const wait_slot& s, std::int64_t now) const {
    report_blocked_call(STDERR_FILENO, s, now);
    if (m_abort_mpi && !mpi_finalized()) {
      // MPI_Abort waits for MPICH's lock while the blocked thread holds it in some calls (a
      // put's flush): the process ends either way, by _exit one second later.
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        ::_exit(blocked_call_exit_code);
      }).detach();
      MPI_Abort(MPI_COMM_WORLD, blocked_call_exit_code);
    }
    ::_exit(blocked_call_exit_code);
  }

  bool m_abort_mpi;
  bool m_stop = false;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::thread m_thread;  // last: starts once the rest is made
};

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_WATCHDOG_HPP

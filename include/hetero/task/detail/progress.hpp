/// @file
/// Progress of what a task graph waits for outside itself: messages from other ranks, adopted
/// completion sources and the end-of-wait barrier, all completed by polling the graph's
/// `remote_channel`. Idle workers poll in turn: the declaring thread whenever it is idle, and
/// of the other workers only the one holding the progress baton, so that one core, not all,
/// spins on MPI while nothing else is to be done.
#ifndef HETERO_TASK_DETAIL_PROGRESS_HPP
#define HETERO_TASK_DETAIL_PROGRESS_HPP

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <vector>

#include "hetero/task/detail/idle.hpp"
#include "hetero/task/detail/remote.hpp"

namespace hetero::detail {

/// How idle workers poll.
struct progress_settings {
  std::chrono::nanoseconds mpi_poll{std::chrono::milliseconds(2)};   ///< poll this long after the last arrival
  std::chrono::nanoseconds poll_min{std::chrono::microseconds(50)};  ///< then wake a sleeping poller this often,
  std::chrono::nanoseconds poll_max{std::chrono::milliseconds(1)};   ///< doubling up to this
};

/// The polling duty of one graph's workers, and the count of nodes waiting for a message or an
/// adopted operation (which are not ready, so the ready count does not see them).
class progress_duty {
  using clock = std::chrono::steady_clock;
  struct alignas(64) poll_backoff {
    std::chrono::nanoseconds interval{0};  // how long a sleeping poller sleeps next
  };

 public:
  /// What an idle worker remembers about its polling between two looks for work.
  struct poller {
    bool baton = false;  // holds the baton: polls for the idle workers
    clock::time_point last_arrival;
  };
  /// What an idle worker's turn at polling gave.
  enum class turn { progressed, keep_polling, nothing };

  progress_duty(remote_channel& remote, int workers, const progress_settings& settings, idle_event& idle)
      : m_remote(remote), m_settings(settings), m_idle(idle), m_backoff(static_cast<std::size_t>(workers)) {}
  progress_duty(const progress_duty&) = delete;
  progress_duty& operator=(const progress_duty&) = delete;

  /// Whether anything waits for MPI or an adopted operation (polling is worth it).
  [[nodiscard]] bool active() const noexcept { return m_remote.active(); }
  /// Messages received and operations completed so far.
  [[nodiscard]] std::uint64_t arrivals() const noexcept { return m_remote.arrivals(); }
  /// Whether another rank reported a deadlock.
  [[nodiscard]] bool report_arrived() const noexcept { return m_remote.report_arrived(); }

  /// Tells the ranks `n` notifies that its remote writes happened (of run `run` of plan `plan`
  /// when `n` was recorded, else 0 and 0).
  void notify(const node& n, std::uint64_t plan, std::uint64_t run, bool cancelled) {
    m_remote.send_notifications(n, plan, run, cancelled);
  }

  /// `k` more (or fewer) nodes wait for messages or adopted operations; wakes the sleepers when
  /// none is left (`wait()` may be done).
  void add_waiting(std::int64_t k) {
    if (m_waiting.fetch_add(k, std::memory_order_seq_cst) + k == 0) m_idle.notify_all();
  }
  /// Whether no node waits for a message or an adopted operation.
  [[nodiscard]] bool nothing_waiting() const noexcept { return m_waiting.load(std::memory_order_seq_cst) == 0; }

  /// One round of polling by worker `w`; `blocking` waits for the baton of the channel rather
  /// than giving up when another thread polls. `on_arrival(n, last, cancelled)` is called for
  /// each satisfied wait, `on_error(exception_ptr)` when MPI or an adopted operation failed.
  /// Returns whether anything arrived.
  template <class Arrival, class Error>
  bool poll(int w, bool blocking, Arrival& on_arrival, Error& on_error) {
    try {
      const bool progressed = blocking ? m_remote.progress(on_arrival) : m_remote.try_progress(on_arrival);
      if (progressed) m_backoff[static_cast<std::size_t>(w)].interval = std::chrono::nanoseconds(0);
      return progressed;
    } catch (...) {
      on_error(std::current_exception());
      return false;
    }
  }

  /// An idle worker `w` (first idle at `p.last_arrival`) takes its turn: while something waits,
  /// the declaring thread always polls and the others poll when they hold or win the baton;
  /// after an arrival they keep polling for `mpi_poll` (remote dependencies are on the critical
  /// path). A worker with nothing to poll for gives the baton back.
  template <class Arrival, class Error>
  turn idle_turn(int w, poller& p, clock::time_point now, Arrival& on_arrival, Error& on_error) {
    if (!active()) {
      if (w != 0) release(p);
      return turn::nothing;
    }
    if (w != 0 && !p.baton) {
      if (m_baton.exchange(true, std::memory_order_acq_rel)) return turn::nothing;
      p.baton = true;
      m_backoff[static_cast<std::size_t>(w)].interval = std::chrono::nanoseconds(0);  // a new turn: poll often
    }
    if (poll(w, w == 0, on_arrival, on_error)) {
      p.last_arrival = now;
      return turn::progressed;
    }
    return now - p.last_arrival < m_settings.mpi_poll ? turn::keep_polling : turn::nothing;
  }

  /// Whether something waits for MPI or an adopted operation and no idle worker holds the
  /// baton (a worker about to sleep then takes it: one without it sleeps until woken). The
  /// channel's count is read and raised in sequential consistency, as the sleepers' count of
  /// `prepare_wait` is, so that a registering thread and a worker going to sleep cannot both
  /// miss the other (no fence: GCC's ThreadSanitizer refuses `atomic_thread_fence`).
  [[nodiscard]] bool unclaimed() const noexcept { return active() && !m_baton.load(std::memory_order_seq_cst); }

  /// Something to poll for was registered (a receive, an adopted operation), or the worker
  /// holding the baton gave it back to run a task: wakes a sleeping worker to take the baton,
  /// unless one holds it (it polls on its timer). Without it, workers that fell asleep while
  /// nothing was pending would leave the message unread until the declaring thread enters the
  /// graph again (wait(), a full window) or a running task ends.
  void wake_poller() {
    if (unclaimed()) m_idle.notify_one();
  }

  /// Gives the baton back (the worker found work, or stops). Sequentially consistent, as the
  /// loads of `unclaimed()` that follow it here and in a worker about to sleep are: one of the
  /// two sees the other (a release store could pass this thread's later load of the sleepers).
  void release(poller& p) noexcept {
    if (!p.baton) return;
    p.baton = false;
    m_baton.store(false, std::memory_order_seq_cst);
  }

  /// How long worker `w` may sleep before it must poll again: from `poll_min`, doubling up to
  /// `poll_max` while nothing arrives. Zero (sleep until woken) when it has no polling duty. A
  /// worker holding the baton always sleeps on the timer: what it polls for may be registered
  /// while it sleeps, and `wake_poller` then wakes nobody (the baton is taken).
  std::chrono::nanoseconds sleep_limit(int w, const poller& p) {
    if (w != 0 ? !p.baton : !active()) return std::chrono::nanoseconds(0);
    auto& interval = m_backoff[static_cast<std::size_t>(w)].interval;
    interval = interval.count() == 0 ? m_settings.poll_min : std::min(interval * 2, m_settings.poll_max);
    return interval;
  }

 private:
  remote_channel& m_remote;
  progress_settings m_settings;
  idle_event& m_idle;
  std::vector<poll_backoff> m_backoff;  // per worker
  alignas(64) std::atomic<std::int64_t> m_waiting{0};
  alignas(64) std::atomic<bool> m_baton{false};
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_PROGRESS_HPP

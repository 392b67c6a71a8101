/// @file
/// The workers of a task graph. They take work from the device queues (while a device is
/// idle), then from the CPU ready queues, run it, release its successors (running the first one
/// released next, without queueing it), poll MPI and adopted operations when idle, and sleep
/// when there is nothing to do.
///
/// Worker 0 is the thread that declares the graph: it runs tasks only inside `wait()`, while
/// the insertion window is full, and in `wait(event)`. Workers 1 ... n-1 are threads of their
/// own.
///
/// Completion is counted without a shared counter per task: `m_active` counts ready and
/// running nodes, but each worker keeps a private delta that is never positive (it borrows
/// credit from `m_active` when it must go up) and returns it when it runs out of work. So
/// `m_active` never reads 0 while a node is ready or running, and a chain of tasks touches no
/// shared counter at all.
#ifndef HETERO_TASK_DETAIL_SCHEDULER_HPP
#define HETERO_TASK_DETAIL_SCHEDULER_HPP

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetero/core/observer.hpp"
#include "hetero/task/detail/body_error.hpp"
#include "hetero/task/detail/data_registry.hpp"
#include "hetero/task/detail/device_queues.hpp"
#include "hetero/task/detail/idle.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/node_pool.hpp"
#include "hetero/task/detail/progress.hpp"
#include "hetero/task/detail/ready_queues.hpp"
#include "hetero/task/detail/remote.hpp"

namespace hetero::detail {

/// Whether the calling thread is running a task body (tasks cannot declare tasks).
inline thread_local bool t_inside_task = false;
/// The device the calling thread's task runs on, or -1.
inline thread_local int t_current_device = -1;
/// The worker the calling thread is while it runs a task (a subgraph's body queues its inner
/// tasks there).
inline thread_local int t_worker = 0;
/// Set by a task body that started a group of nodes (a subgraph, a composed recording) not all
/// finished yet: the worker then leaves the task to the group's last member to finish.
inline thread_local bool t_finish_deferred = false;

/// Tuning of the workers.
struct scheduler_settings {
  int workers = 1;
  std::chrono::nanoseconds spin{std::chrono::microseconds(50)};      ///< look for work this long before sleeping
  std::chrono::nanoseconds wait_spin{std::chrono::milliseconds(1)};  ///< wait(): longer while tasks run elsewhere
  progress_settings polling;                                         ///< MPI and adopted operations
};

/// The workers and the counters `wait()` watches, over the device queues, the CPU ready queues
/// and the polling duty.
class scheduler {
  struct alignas(64) worker_state {
    std::int64_t active_delta = 0;  // owner only, never positive
    std::atomic<std::uint64_t> finished{0};
    std::atomic<bool> running{false};
    // Finished nodes given back to the pool in batches (one CAS per batch).
    node* released_first = nullptr;
    node* released_last = nullptr;
    int released = 0;
  };
  static constexpr std::int64_t credit = 64;
  using clock = std::chrono::steady_clock;

 public:
  /// What `help_until` ended with.
  enum class outcome { done, stuck, report_arrived };

  scheduler(const scheduler_settings& settings, std::vector<std::unique_ptr<device_slot>>& devices,
            node_pool& pool, remote_channel& remote, data_registry& data)
      : m_settings(settings),
        m_pool(pool),
        m_data(data),
        m_devices(devices, m_idle),
        m_ready(settings.workers, m_idle),
        m_progress(remote, settings.workers, settings.polling, m_idle) {
    for (int w = 0; w < settings.workers; ++w) m_workers.push_back(std::make_unique<worker_state>());
    // libgomp's throttle: past 64 queued tasks per worker the declaring thread runs one.
    m_throttle = 64 * static_cast<std::int64_t>(settings.workers);
    m_release_batch = static_cast<int>(std::clamp<std::size_t>(pool.window() / (4 * m_workers.size()), 1, 32));
    for (int w = 1; w < settings.workers; ++w) m_threads.emplace_back([this, w] { worker_loop(w); });
  }
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  ~scheduler() { stop(); }

  /// Stops and joins the worker threads (tasks not started are left alone).
  void stop() {
    m_stop.store(true, std::memory_order_seq_cst);
    m_idle.notify_all();
    for (auto& t : m_threads)
      if (t.joinable()) t.join();
  }

  [[nodiscard]] int workers() const noexcept { return static_cast<int>(m_workers.size()); }

  /// The replay whose notifications finishing recorded nodes send (set before its roots run).
  void set_replay(std::uint64_t plan, std::uint64_t run) noexcept {
    m_plan = plan;
    m_run = run;
  }

  /// `n` can run: counts it and queues it (worker `w` is the calling thread).
  void make_ready(int w, node* n) {
    take_credit(w, 1);
    queue(w, n);
  }

  /// Worker `w` (the calling thread, running a task) makes the roots of a group ready.
  void make_ready_all(int w, std::span<node* const> roots, std::span<node* const> queued_roots) {
    take_credit(w, static_cast<std::int64_t>(roots.size() + queued_roots.size()));
    queue_all(queued_roots);
    for (node* n : roots) queue(w, n);
  }

  /// Declaring thread: the roots of a replay can run. Ordinary CPU roots are dealt to the
  /// workers; device and high-priority roots go to their queues.
  void start_replay(std::span<node* const> roots, std::span<node* const> queued_roots) {
    take_credit(0, static_cast<std::int64_t>(roots.size() + queued_roots.size()));
    queue_all(queued_roots);
    m_ready.deal(roots);
  }

  /// Declaring thread, after declaring a task: past the throttle it runs one of its own tasks
  /// (the newest), as libgomp does, so a flood of ready tasks stays on one core.
  void throttle() {
    if (m_ready.own_size(0) <= m_throttle) return;
    if (node* n = m_ready.pop_own(0)) execute(0, n, nullptr);
  }

  /// One message (or an adopted operation) that `n` waits for arrived.
  void on_arrival(int w, node* n, bool last, bool cancelled) {
    if (cancelled) cancel();
    if (n->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) make_ready(w, n);
    if (last) add_waiting_remote(-1);
  }

  /// Nodes waiting for messages or adopted operations (not counted as active).
  void add_waiting_remote(std::int64_t k) { m_progress.add_waiting(k); }
  /// The declaring thread registered a receive or an adopted operation: a sleeping worker
  /// polls for it.
  void wake_poller() { m_progress.wake_poller(); }

  /// Whether nothing is ready, running or waiting for a message (after every flush).
  [[nodiscard]] bool quiescent() const noexcept {
    return m_progress.nothing_waiting() && m_active.load(std::memory_order_seq_cst) == 0;
  }

  /// Worker `w` gives back the nodes it finished and the credit it borrowed (call when it has
  /// nothing to run).
  void flush(int w) {
    worker_state& me = *m_workers[static_cast<std::size_t>(w)];
    if (me.released > 0) give_back_batch(me);
    if (me.active_delta == 0) return;
    const std::int64_t delta = std::exchange(me.active_delta, 0);
    // Only the declaring thread (worker 0) waits for 0, and it looks again right after its own
    // flush: it need not wake the sleeping workers (a wake-up costs it tens of microseconds).
    if (m_active.fetch_add(delta, std::memory_order_seq_cst) + delta == 0 && w != 0) m_idle.notify_all();
  }

  /// Records the first exception thrown by a task and cancels the tasks not yet started.
  void record_error(std::exception_ptr e) {
    {
      std::lock_guard lock(m_error_mutex);
      if (!m_error) m_error = std::move(e);
    }
    cancel();
  }
  /// What the first recorded exception says (its `what()`), or "" when none was recorded.
  [[nodiscard]] std::string error_text() const {
    std::exception_ptr e;
    {
      std::lock_guard lock(m_error_mutex);
      e = m_error;
    }
    if (!e) return {};
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      return x.what();
    } catch (...) {
      return "an exception not derived from std::exception";
    }
  }
  /// Skips the bodies of tasks not yet started (they still release successors and notify).
  void cancel() noexcept { m_cancelled.store(true, std::memory_order_release); }
  [[nodiscard]] bool cancelled() const noexcept { return m_cancelled.load(std::memory_order_acquire); }
  /// The first exception of a task (and clears it and the cancellation), or nullptr.
  std::exception_ptr take_error() {
    std::lock_guard lock(m_error_mutex);
    m_cancelled.store(false, std::memory_order_release);
    return std::exchange(m_error, nullptr);
  }

  /// Whether the last `wait(event)` marker finished; `arm_marker` resets it.
  [[nodiscard]] bool marker_done() const noexcept { return m_marker_done.load(std::memory_order_seq_cst); }
  void arm_marker() noexcept { m_marker_done.store(false, std::memory_order_seq_cst); }

  /// Tasks finished and messages received so far (the watchdog's notion of progress).
  [[nodiscard]] std::uint64_t progress_stamp() const noexcept {
    std::uint64_t sum = m_progress.arrivals();
    for (const auto& w : m_workers) sum += w->finished.load(std::memory_order_relaxed);
    return sum;
  }
  /// Whether a worker runs a task body right now.
  [[nodiscard]] bool any_running() const noexcept {
    for (const auto& w : m_workers)
      if (w->running.load(std::memory_order_relaxed)) return true;
    return false;
  }

  /// The declaring thread (worker 0) runs tasks, progresses MPI and sleeps until `done()`.
  /// Returns `stuck` when nothing ran, arrived or was ready for `timeout`, and `report_arrived`
  /// when another rank reported a deadlock. `watch_window` wakes it when a node is given back.
  template <class Done>
  outcome help_until(Done&& done, std::chrono::nanoseconds timeout, bool watch_window = false) {
    std::uint64_t stamp = 0;
    clock::time_point last_progress;
    bool watching = false;  // the watchdog starts the first time nothing is left to run
    idle_state idle;
    // Back to the caller, outside the graph: a wake-up it took may have been meant for a poller.
    const auto leave = [this] {
      m_progress.wake_poller();
      return outcome::done;
    };
    while (true) {
      if (done()) return leave();
      if (auto [n, dev] = find_work(0); n) {
        if (idle.woken) pass_wake_on(idle);
        execute(0, n, dev);
        idle.busy();
        continue;
      }
      flush(0);
      if (done()) return leave();
      if (m_progress.report_arrived()) return outcome::report_arrived;
      const auto now = clock::now();
      if (const std::uint64_t s = progress_stamp(); !watching || s != stamp || any_running()) {
        watching = true;
        stamp = s;
        last_progress = now;
      } else if (now - last_progress >= timeout) {
        return outcome::stuck;
      }
      if (keep_looking(0, idle, now)) continue;
      // Tasks running elsewhere will soon finish the graph or release work: keep looking.
      if (now - idle.since < m_settings.wait_spin && any_running()) {
        pause();
        continue;
      }
      // Sleep; timed while MPI or the watchdog need this thread to look again.
      const auto ticket = m_idle.prepare_wait();
      if (watch_window) m_window_waiter.store(true, std::memory_order_seq_cst);
      // With `watch_window`, done() is the caller's look at the pool (acquire_node), taken again
      // here after the waiter was announced, so that a node given back now is not missed.
      if (done() || has_visible_work(0)) {
        m_idle.cancel_wait();
      } else {
        wait_scope waiting(wait_kind::task, "task_graph::wait");
        auto interval = std::min<std::chrono::nanoseconds>(timeout / 4 + std::chrono::microseconds(1),
                                                           std::chrono::milliseconds(100));
        if (const auto limit = m_progress.sleep_limit(0, idle.polling); limit.count() > 0)
          interval = std::min(interval, limit);
        m_idle.wait(ticket, interval);
        idle.woken = true;
      }
      if (watch_window) m_window_waiter.store(false, std::memory_order_relaxed);
    }
  }

 private:
  void take_credit(int w, std::int64_t k) {
    worker_state& me = *m_workers[static_cast<std::size_t>(w)];
    me.active_delta += k;
    if (me.active_delta > 0) {
      m_active.fetch_add(me.active_delta + credit, std::memory_order_seq_cst);
      me.active_delta = -credit;
    }
  }

  void queue(int w, node* n) {
    prepare(n);
    push(w, n);
  }

  void push(int w, node* n) {
    if (n->kind == node_kind::device) {
      m_devices.push(n);
    } else {
      m_ready.push(w, n);
    }
  }

  // A ready node with task data: its side is picked (a host_or_device body) and, for a device
  // task, its inputs start moving.
  void prepare(node* n) {
    const std::uint8_t f = n->flags.load(std::memory_order_relaxed);
    if ((f & node::data_bit) == 0) [[likely]]
      return;
    m_data.ready(*n, (f & node::either_bit) != 0);
  }

  [[nodiscard]] static bool has_data(const node* n) noexcept {
    return (n->flags.load(std::memory_order_relaxed) & node::data_bit) != 0;
  }

  // Queues device and priority roots: the device ones one by one, the priority ones in one step.
  void queue_all(std::span<node* const> queued) {
    std::size_t urgent = 0;
    for (node* n : queued) {
      if (n->kind == node_kind::device) {
        m_devices.push(n);
      } else {
        ++urgent;
      }
    }
    m_ready.push_urgent_all(queued, urgent);
  }

  // A device task first while a device is idle (devices run the long tasks), then CPU work.
  std::pair<node*, device_slot*> find_work(int w) {
    if (auto found = m_devices.take(w); found.first) return found;
    return {m_ready.take(w), nullptr};
  }

  // Whether worker `w` (any worker: -1) could find work now.
  [[nodiscard]] bool has_visible_work(int w) const noexcept {
    return m_stop.load(std::memory_order_seq_cst) || m_ready.visible() || m_devices.visible(w);
  }

  // Runs the body of `n`: launched on `dev` if given, else here; its task data made valid there
  // first.
  void run_body(node* n, device_slot* dev) {
    if (has_data(n)) [[unlikely]]
      m_data.acquire(*n, dev);
    if (dev)
      device_queues::launch(*n, *dev);
    else
      n->invoke(*n, nullptr);
  }

  // `run_body` inside a region named by the task's label, for a Kokkos Tools library or hetero's
  // trace.
  void run_in_region(node* n, device_slot* dev) {
    const region running("task", n->extra.label.empty() ? std::string_view("(no label)") : n->extra.label,
                         dev ? std::string_view("device") : std::string_view());
    run_body(n, dev);
  }

  // Runs `n` and then the successor it released first, as long as there is one.
  // Whether anyone looks at regions is asked once per call, not per task (a chain of tiny tasks
  // runs in one call), and the loop is compiled apart for each answer: the loop nobody looks at
  // is the loop of a build without regions (a branch in it costs a chain of empty tasks).
  void execute(int w, node* n, device_slot* dev) {
    if (regions_observed()) [[unlikely]]
      execute_loop<true>(w, n, dev);
    else
      execute_loop<false>(w, n, dev);
  }

  template <bool Observed>
  void execute_loop(int w, node* n, device_slot* dev) {
    worker_state& me = *m_workers[static_cast<std::size_t>(w)];
    me.running.store(true, std::memory_order_relaxed);
    t_worker = w;
    while (n) {
      // A transfer's start runs even when cancelled: the rank at the other end waits for it.
      if (n->invoke && (!m_cancelled.load(std::memory_order_relaxed) || n->kind == node_kind::transfer)) {
        t_inside_task = true;
        t_current_device = dev ? dev->index : -1;
        try {
          if constexpr (Observed)
            run_in_region(n, dev);
          else
            run_body(n, dev);
        } catch (...) {
          record_error(task_body_error(std::current_exception()));
        }
        t_inside_task = false;
        t_current_device = -1;
      }
      const bool was_device = dev != nullptr;
      if (dev) m_devices.complete(*std::exchange(dev, nullptr));
      if (t_finish_deferred) [[unlikely]] {  // its group's last member finishes n (n may be gone already)
        t_finish_deferred = false;
        break;
      }
      n = finish(w, n, !was_device);
      // Notifications other ranks wait for are not left waiting behind a long chain of tasks.
      if (m_progress.active()) (void)poll(w, false);
      // A queued device task on an idle device goes first: give up the continuation (not for
      // tasks that wait behind busy devices: the continuation would go back and forth).
      if (n && m_devices.queued() && m_devices.may_start(w) && m_devices.visible(w)) {
        m_ready.push_own(w, n);
        n = nullptr;
      }
      if (n) n = m_ready.keep_or_swap(w, n);
    }
    me.running.store(false, std::memory_order_relaxed);
  }

  // Releases the successors of `n`; returns one ready CPU successor to run next (when
  // `continue_with_successor`), queues the others.
  node* finish(int w, node* n, bool continue_with_successor) {
    worker_state& me = *m_workers[static_cast<std::size_t>(w)];
    const bool cancelled = m_cancelled.load(std::memory_order_relaxed);
    // Read before mark_done clears the flags.
    const std::uint8_t f = n->flags.load(std::memory_order_relaxed);
    const bool grouped = (f & node::grouped_bit) != 0;
    if ((f & node::data_bit) != 0) [[unlikely]]
      m_data.finish(*n);  // new versions current before any successor runs
    if (!n->recorded) n->drop_body();
    if (n->notifies) {
      try {
        m_progress.notify(*n, n->recorded ? m_plan : 0, n->recorded ? m_run : 0, cancelled);
      } catch (...) {
        record_error(std::current_exception());
      }
    }
    if (n->recorded) {
      n->pending.store(n->reset_pending, std::memory_order_relaxed);
      n->finished_run.store(static_cast<std::uint32_t>(m_run), std::memory_order_relaxed);
    } else {
      n->mark_done();  // closes the successor list: read its length only now
    }
    const std::uint32_t count = n->successor_count;
    node* next = nullptr;
    for (std::uint32_t i = 0; i < count; ++i) {
      node* s = n->successor(i);
      if (s->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
      prepare(s);
      take_credit(w, 1);
      if (continue_with_successor && !next && s->kind != node_kind::device) {
        next = s;
      } else {
        push(w, s);
      }
    }
    // Only now does n stop counting as active: a successor released above may already have run
    // and finished elsewhere, and wait() must not see 0 while n still releases the others.
    --me.active_delta;
    me.finished.store(me.finished.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    const bool marker = n->kind == node_kind::marker;
    if (!n->recorded && !grouped) release_node(w, me, n);  // n may be reused from here on
    if (marker) {
      m_marker_done.store(true, std::memory_order_seq_cst);
      m_idle.notify_all();
    }
    if (grouped) [[unlikely]]
      return leave_group(w, *n->group, next, continue_with_successor);
    return next;
  }

  // A member of `group` finished (its last access to the group's memory: a subgraph may be
  // freed by another member right after). The last one closes the group and finishes its owner.
  [[gnu::noinline]] node* leave_group(int w, node_group& group, node* next, bool continue_with_successor) {
    if (group.outstanding.fetch_sub(1, std::memory_order_acq_rel) != 1) return next;
    // Every member finished: none released a successor (they are all members), so next is null.
    node* owner = group.owner;
    group.close(group);
    return finish(w, owner, continue_with_successor);
  }

  // The declaring thread gives its finished nodes straight back; the others collect a batch.
  void release_node(int w, worker_state& me, node* n) {
    if (w == 0) {
      m_pool.give_back(n);
      return;
    }
    n->next_finished = nullptr;
    if (me.released_last) {
      me.released_last->next_finished = n;
    } else {
      me.released_first = n;
    }
    me.released_last = n;
    if (++me.released >= m_release_batch) give_back_batch(me);
  }

  void give_back_batch(worker_state& me) {
    m_pool.release_list(me.released_first, me.released_last);
    me.released_first = me.released_last = nullptr;
    me.released = 0;
    if (m_window_waiter.load(std::memory_order_seq_cst)) m_idle.notify_all();
  }

  // What an idle thread remembers between its attempts to find work.
  struct idle_state {
    bool idle = false;
    clock::time_point since;
    progress_duty::poller polling;
    bool woken = false;  // slept since it last found work
    void busy() noexcept { idle = false; }
  };

  // A thread that slept and found work wakes one more sleeper if work is left: notify_one
  // coalesces the notifications sent while a wake-up is on its way, so a burst of ready tasks
  // wakes the sleepers one after the other instead of all from the producer.
  void pass_wake_on(idle_state& idle) {
    idle.woken = false;
    // Also when something waits to be polled: a wake-up for it sent while this one was on its
    // way was merged with this one (idle_event::notify_one).
    if (has_visible_work(-1) || m_progress.unclaimed()) m_idle.notify_one();
  }

  // An idle thread takes its turn at polling, then spins `spin` for local work. False: time to
  // sleep.
  bool keep_looking(int w, idle_state& idle, clock::time_point now) {
    if (!idle.idle) {
      idle.idle = true;
      idle.since = idle.polling.last_arrival = now;
    }
    auto arrival = [this, w](node* n, bool last, bool cancelled) { on_arrival(w, n, last, cancelled); };
    auto error = [this](std::exception_ptr e) { record_error(std::move(e)); };
    switch (m_progress.idle_turn(w, idle.polling, now, arrival, error)) {
      case progress_duty::turn::progressed: return true;
      case progress_duty::turn::keep_polling: pause(); return true;
      case progress_duty::turn::nothing: break;
    }
    if (now - idle.since < m_settings.spin) {
      pause();
      return true;
    }
    return false;
  }

  // A short pause between two looks for work (~0.5 us): fewer clock reads and fewer probes of
  // the other workers' deques, whose cache lines the owners need.
  static void pause() noexcept {
    for (int i = 0; i < 16; ++i) cpu_relax();
  }

  // One round of polling; `blocking` waits for the baton of the channel.
  bool poll(int w, bool blocking) {
    auto arrival = [this, w](node* n, bool last, bool cancelled) { on_arrival(w, n, last, cancelled); };
    auto error = [this](std::exception_ptr e) { record_error(std::move(e)); };
    return m_progress.poll(w, blocking, arrival, error);
  }

  void worker_loop(int w) {
    idle_state idle;
    while (!m_stop.load(std::memory_order_acquire)) {
      if (auto [n, dev] = find_work(w); n) {
        if (idle.woken) pass_wake_on(idle);
        if (idle.polling.baton) {
          m_progress.release(idle.polling);
          m_progress.wake_poller();  // a sleeping worker polls while this one runs the task
        }
        execute(w, n, dev);
        idle.busy();
        // The task may have posted a send or a receive (a tile move, a notification) while the
        // other workers slept: one of them polls it while this one goes on.
        m_progress.wake_poller();
        continue;
      }
      flush(w);
      if (keep_looking(w, idle, clock::now())) continue;
      const auto ticket = m_idle.prepare_wait();
      if (has_visible_work(w) || (!idle.polling.baton && m_progress.unclaimed())) {
        m_idle.cancel_wait();
        continue;
      }
      // The poller sleeps on a timer to look at MPI again; the others until they are woken.
      {
        wait_scope waiting(wait_kind::task, idle_worker_wait);
        m_idle.wait(ticket, m_progress.sleep_limit(w, idle.polling));
      }
      idle.woken = true;
    }
    m_progress.release(idle.polling);
  }

  scheduler_settings m_settings;
  node_pool& m_pool;
  data_registry& m_data;
  // Written by sleepers and wakers: a line of its own, away from what every look for work reads.
  alignas(64) idle_event m_idle;  // before the queues, which wake sleepers through it
  device_queues m_devices;
  ready_queues m_ready;
  progress_duty m_progress;
  std::vector<std::unique_ptr<worker_state>> m_workers;
  std::vector<std::thread> m_threads;

  alignas(64) std::atomic<std::int64_t> m_active{0};
  alignas(64) std::atomic<bool> m_stop{false};  // read per task, written rarely: not beside m_active
  std::atomic<bool> m_cancelled{false};
  std::atomic<bool> m_marker_done{false};
  std::atomic<bool> m_window_waiter{false};
  mutable std::mutex m_error_mutex;
  std::exception_ptr m_error;
  std::uint64_t m_plan = 0;
  std::uint64_t m_run = 0;
  std::int64_t m_throttle = 64;
  int m_release_batch = 32;
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_SCHEDULER_HPP

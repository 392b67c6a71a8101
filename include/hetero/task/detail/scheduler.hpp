/// @file
/// The workers of a task graph: per-worker work-stealing deques for CPU tasks, a shared device
/// queue and one pinned queue per device (seed 002), successors released by the task that
/// finishes, idle workers that sleep, and MPI progress done by idle workers.
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
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "hetero/core/observer.hpp"
#include "hetero/task/detail/idle.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/node_pool.hpp"
#include "hetero/task/detail/remote.hpp"
#include "hetero/task/detail/spin_mutex.hpp"
#include "hetero/task/detail/work_deque.hpp"

namespace hetero::detail {

/// Whether the calling thread is running a task body (tasks cannot declare tasks).
inline thread_local bool t_inside_task = false;
/// The device the calling thread's task runs on, or -1.
inline thread_local int t_current_device = -1;

/// One device execution space instance with its pinned-task queue (seed 002).
struct device_slot {
  int index = 0;
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

/// Tuning of the workers.
struct scheduler_settings {
  int workers = 1;
  std::chrono::nanoseconds spin{std::chrono::microseconds(50)};      ///< look for work this long before sleeping
  std::chrono::nanoseconds wait_spin{std::chrono::milliseconds(1)};  ///< wait(): longer while tasks run elsewhere
  std::chrono::nanoseconds mpi_poll{std::chrono::milliseconds(2)};   ///< poll MPI this long after the last arrival
  std::chrono::nanoseconds poll_min{std::chrono::microseconds(50)};  ///< then wake a sleeping poller this often,
  std::chrono::nanoseconds poll_max{std::chrono::milliseconds(1)};   ///< doubling up to this
};

/// The workers, their queues and the counters `wait()` watches.
class scheduler {
  struct alignas(64) worker_state {
    work_deque<node*> deque;
    std::int64_t active_delta = 0;  // owner only, never positive
    std::atomic<std::uint64_t> finished{0};
    std::atomic<bool> running{false};
    std::uint64_t random = 0x853c49e6748fea9bULL;
    std::chrono::nanoseconds poll_interval{0};
    // Finished nodes given back to the pool in batches (one CAS per batch).
    node* released_first = nullptr;
    node* released_last = nullptr;
    int released = 0;
    // Roots of a replay handed to this worker by the declaring thread.
    std::atomic<bool> mail_ready{false};
    node* const* mail = nullptr;
    std::size_t mail_count = 0;
  };
  static constexpr std::int64_t credit = 64;
  using clock = std::chrono::steady_clock;

 public:
  /// What `help_until` ended with.
  enum class outcome { done, stuck, report_arrived };

  scheduler(const scheduler_settings& settings, std::vector<std::unique_ptr<device_slot>>& devices,
            node_pool& pool, remote_channel& remote)
      : m_settings(settings), m_devices(devices), m_pool(pool), m_remote(remote) {
    for (int w = 0; w < settings.workers; ++w) {
      m_workers.push_back(std::make_unique<worker_state>());
      m_workers.back()->random += static_cast<std::uint64_t>(w) * 0x9e3779b97f4a7c15ULL;
    }
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

  /// Declaring thread: the roots of a replay can run. Ordinary CPU roots are split among the
  /// workers (each takes its share from its mailbox), so that no root has to be stolen; device
  /// and high-priority roots go to their queues.
  void start_replay(std::span<node* const> roots, std::span<node* const> queued_roots) {
    take_credit(0, static_cast<std::int64_t>(roots.size() + queued_roots.size()));
    for (node* n : queued_roots) queue(0, n);
    const std::size_t count = m_workers.size();
    const std::size_t share = roots.size() / count;
    for (std::size_t w = 1; w < count; ++w) {
      worker_state& other = *m_workers[w];
      if (share == 0) break;
      other.mail = roots.data() + roots.size() - w * share;
      other.mail_count = share;
      other.mail_ready.store(true, std::memory_order_seq_cst);
    }
    m_workers[0]->deque.push_bulk(roots.first(roots.size() - (count - 1) * share));
    m_idle.notify_all();
  }

  /// Declaring thread, after declaring a task: past the throttle it runs one of its own tasks
  /// (the newest), as libgomp does, so a flood of ready tasks stays on one core.
  void throttle() {
    worker_state& me = *m_workers[0];
    if (me.deque.size_hint() <= m_throttle) return;
    if (node* n = me.deque.pop()) execute(0, n, nullptr);
  }

  /// One message (or an adopted operation) that `n` waits for arrived.
  void on_arrival(int w, node* n, bool last, bool cancelled) {
    if (cancelled) cancel();
    if (n->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) make_ready(w, n);
    if (last) add_waiting_remote(-1);
  }

  /// Nodes waiting for messages or adopted operations (not counted as active).
  void add_waiting_remote(std::int64_t k) {
    if (m_waiting_remote.fetch_add(k, std::memory_order_seq_cst) + k == 0) m_idle.notify_all();
  }

  /// Whether nothing is ready, running or waiting for a message (after every flush).
  [[nodiscard]] bool quiescent() const noexcept {
    return m_waiting_remote.load(std::memory_order_seq_cst) == 0 && m_active.load(std::memory_order_seq_cst) == 0;
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
    std::uint64_t sum = m_remote.arrivals();
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
    while (true) {
      if (done()) return outcome::done;
      if (auto [n, dev] = find_work(0); n) {
        if (idle.woken) pass_wake_on(idle);
        execute(0, n, dev);
        idle.busy();
        continue;
      }
      flush(0);
      if (done()) return outcome::done;
      if (m_remote.report_arrived()) return outcome::report_arrived;
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
      if (done() || has_visible_work(0) || (watch_window && m_pool.has_released())) {
        m_idle.cancel_wait();
      } else {
        wait_scope waiting(wait_kind::task, "task_graph::wait");
        auto interval = std::min<std::chrono::nanoseconds>(timeout / 4 + std::chrono::microseconds(1),
                                                           std::chrono::milliseconds(100));
        if (m_remote.active()) interval = std::min(interval, next_poll_interval(0));
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
    if (n->kind == node_kind::device) {
      queue_device(n);
    } else if (n->urgent) {
      queue_urgent(n);
    } else {
      m_workers[static_cast<std::size_t>(w)]->deque.push(n);
      m_idle.notify_one();
    }
  }

  // CPU tasks with a priority above 0: one shared queue that every worker looks at before its
  // own deque, highest priority first and, within a priority, in declaration order (the
  // oldest first, as a serial run would reach it).
  static bool runs_after(const node* a, const node* b) noexcept {
    return a->priority != b->priority ? a->priority < b->priority : a->sequence > b->sequence;
  }

  void queue_urgent(node* n) {
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

  // The continuation `next` of worker `w`, or a queued priority task that goes before it (then
  // `next` is queued). An ordinary task always yields to a queued priority task.
  node* keep_or_swap(int w, node* next) {
    if (m_urgent_queued.load(std::memory_order_seq_cst) == 0) return next;
    if (!next->urgent) {
      m_workers[static_cast<std::size_t>(w)]->deque.push(next);
      m_idle.notify_one();
      return nullptr;  // find_work takes the priority task
    }
    std::lock_guard lock(m_urgent_mutex);
    if (m_urgent.empty() || !runs_after(next, m_urgent.front())) return next;
    std::pop_heap(m_urgent.begin(), m_urgent.end(), runs_after);
    std::swap(next, m_urgent.back());
    std::push_heap(m_urgent.begin(), m_urgent.end(), runs_after);
    m_idle.notify_one();  // the queued task may go to an idle worker
    return next;
  }

  void queue_device(node* n) {
    if (n->device >= 0) {
      device_slot& d = *m_devices[static_cast<std::size_t>(n->device)];
      std::lock_guard lock(d.mutex);
      d.pinned.push_back(n);
      d.pinned_count.fetch_add(1, std::memory_order_relaxed);
    } else {
      std::lock_guard lock(m_shared_mutex);
      m_shared_device.push_back(n);
    }
    m_device_queued.fetch_add(1, std::memory_order_seq_cst);
    wake_for_device();
  }

  // Whether worker `w` may start device tasks (all devices of a graph are of one space).
  [[nodiscard]] bool may_start_device_tasks(int w) const noexcept {
    return w == 0 || m_devices.empty() || !m_devices.front()->master_only;
  }

  // A device task is queued or a device became idle: wake a worker to take it. Where only the
  // declaring thread may start device tasks, wake every sleeper, so that it is among them.
  void wake_for_device() {
    if (m_devices.empty() || !m_devices.front()->master_only) {
      m_idle.notify_one();
    } else {
      m_idle.notify_all();
    }
  }

  // Pinned tasks first (their data is on this device), then the shared device queue.
  node* take_device_task(device_slot& d) {
    if (d.pinned_count.load(std::memory_order_relaxed) > 0) {
      std::lock_guard lock(d.mutex);
      if (!d.pinned.empty()) {
        node* n = d.pinned.front();
        d.pinned.pop_front();
        d.pinned_count.fetch_sub(1, std::memory_order_relaxed);
        m_device_queued.fetch_sub(1, std::memory_order_relaxed);
        return n;
      }
    }
    std::lock_guard lock(m_shared_mutex);
    if (m_shared_device.empty()) return nullptr;
    node* n = m_shared_device.front();
    m_shared_device.pop_front();
    m_device_queued.fetch_sub(1, std::memory_order_relaxed);
    return n;
  }

  // Seed 002: an idle worker takes a device task first while a device is idle, then the first
  // priority task, then its own newest task, then the oldest task of another worker.
  std::pair<node*, device_slot*> find_work(int w) {
    if (m_device_queued.load(std::memory_order_seq_cst) > 0 && may_start_device_tasks(w)) {
      const std::size_t count = m_devices.size();
      for (std::size_t i = 0; i < count; ++i) {
        device_slot& d = *m_devices[(static_cast<std::size_t>(w) + i) % count];
        if (d.busy.load(std::memory_order_relaxed) || d.busy.exchange(true, std::memory_order_acquire)) continue;
        if (node* n = take_device_task(d)) return {n, &d};
        d.busy.store(false, std::memory_order_release);
      }
    }
    if (m_urgent_queued.load(std::memory_order_seq_cst) > 0)
      if (node* n = take_urgent()) return {n, nullptr};
    worker_state& me = *m_workers[static_cast<std::size_t>(w)];
    if (me.mail_ready.load(std::memory_order_acquire)) {
      me.mail_ready.store(false, std::memory_order_relaxed);
      me.deque.push_bulk(std::span<node* const>(me.mail, me.mail_count));
    }
    if (node* n = me.deque.pop()) return {n, nullptr};
    const std::size_t count = m_workers.size();
    if (count > 1) {
      me.random ^= me.random << 13;
      me.random ^= me.random >> 7;
      me.random ^= me.random << 17;
      const std::size_t start = static_cast<std::size_t>(me.random % count);
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t victim = (start + i) % count;
        if (victim == static_cast<std::size_t>(w)) continue;
        if (node* n = m_workers[victim]->deque.steal()) return {n, nullptr};
      }
    }
    return {nullptr, nullptr};
  }

  // Whether worker `w` (any worker: -1) could find work now; a device task that only the
  // declaring thread may start is work for worker 0 alone (the others sleep instead of spinning).
  [[nodiscard]] bool has_visible_work(int w) const noexcept {
    if (m_stop.load(std::memory_order_seq_cst) || m_urgent_queued.load(std::memory_order_seq_cst) > 0) return true;
    for (const auto& other : m_workers)
      if (other->deque.size_hint() > 0 || other->mail_ready.load(std::memory_order_seq_cst)) return true;
    if (m_device_queued.load(std::memory_order_seq_cst) > 0)
      for (const auto& d : m_devices)
        if (!d->busy.load(std::memory_order_seq_cst) && (w <= 0 || !d->master_only)) return true;
    return false;
  }

  // Runs `n` and then the successor it released first, as long as there is one.
  void execute(int w, node* n, device_slot* dev) {
    worker_state& me = *m_workers[static_cast<std::size_t>(w)];
    me.running.store(true, std::memory_order_relaxed);
    while (n) {
      if (n->invoke && !m_cancelled.load(std::memory_order_relaxed)) {
        t_inside_task = true;
        t_current_device = dev ? dev->index : -1;
        try {
          n->invoke(*n, dev ? dev->instance : nullptr);
          if (dev) dev->fence(dev->instance);
        } catch (...) {
          record_error(std::current_exception());
        }
        t_inside_task = false;
        t_current_device = -1;
      }
      const bool was_device = dev != nullptr;
      if (dev) {
        dev->busy.store(false, std::memory_order_seq_cst);
        dev = nullptr;
        if (m_device_queued.load(std::memory_order_seq_cst) > 0) wake_for_device();
      }
      n = finish(w, n, !was_device);
      // Notifications other ranks wait for are not left waiting behind a long chain of tasks.
      if (m_remote.active()) (void)progress(w, false);
      // A queued device task on an idle device goes first (seed 002): give up the continuation.
      if (n && m_device_queued.load(std::memory_order_relaxed) > 0 && may_start_device_tasks(w)) {
        me.deque.push(n);
        n = nullptr;
      }
      if (n) n = keep_or_swap(w, n);
    }
    me.running.store(false, std::memory_order_relaxed);
  }

  // Releases the successors of `n`; returns one ready CPU successor to run next (when
  // `continue_with_successor`), queues the others.
  node* finish(int w, node* n, bool continue_with_successor) {
    worker_state& me = *m_workers[static_cast<std::size_t>(w)];
    const bool cancelled = m_cancelled.load(std::memory_order_relaxed);
    if (!n->recorded) n->drop_body();
    if (n->notifies) {
      try {
        m_remote.send_notifications(*n, n->recorded ? m_plan : 0, n->recorded ? m_run : 0, cancelled);
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
      if (continue_with_successor && !next && s->kind != node_kind::device) {
        take_credit(w, 1);
        next = s;
      } else {
        make_ready(w, s);
      }
    }
    // Only now does n stop counting as active: a successor released above may already have run
    // and finished elsewhere, and wait() must not see 0 while n still releases the others.
    --me.active_delta;
    me.finished.store(me.finished.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    const bool marker = n->kind == node_kind::marker;
    if (!n->recorded) release_node(w, me, n);  // n may be reused from here on
    if (marker) {
      m_marker_done.store(true, std::memory_order_seq_cst);
      m_idle.notify_all();
    }
    return next;
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
    bool poller = false;  // holds m_poller: polls MPI for the idle workers
    clock::time_point since;
    clock::time_point last_remote;
    bool woken = false;  // slept since it last found work
    void busy() noexcept { idle = false; }
  };

  // A thread that slept and found work wakes one more sleeper if work is left: notify_one
  // coalesces the notifications sent while a wake-up is on its way, so a burst of ready tasks
  // wakes the sleepers one after the other instead of all from the producer.
  void pass_wake_on(idle_state& idle) {
    idle.woken = false;
    if (has_visible_work(-1)) m_idle.notify_one();
  }

  void release_poller(idle_state& idle) {
    if (!idle.poller) return;
    idle.poller = false;
    m_poller.store(false, std::memory_order_release);
  }

  // An idle thread: polls MPI while notifications are pending (one thread at a time, without
  // sleeping for `mpi_poll` after the last arrival: remote dependencies are on the critical
  // path), then spins `spin` for local work. False: time to sleep.
  bool keep_looking(int w, idle_state& idle, clock::time_point now) {
    if (!idle.idle) {
      idle.idle = true;
      idle.since = idle.last_remote = now;
    }
    if (m_remote.active()) {
      // The declaring thread may always poll; of the others, the one holding m_poller.
      const bool may_poll =
          w == 0 || idle.poller || (idle.poller = !m_poller.exchange(true, std::memory_order_acq_rel));
      if (may_poll) {
        if (progress(w, w == 0)) {
          idle.last_remote = now;
          return true;
        }
        if (now - idle.last_remote < m_settings.mpi_poll) {
          pause();
          return true;
        }
      }
    } else if (w != 0) {
      release_poller(idle);
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

  // MPI and adopted operations; `blocking` waits for the baton.
  bool progress(int w, bool blocking) {
    auto arrival = [this, w](node* n, bool last, bool cancelled) { on_arrival(w, n, last, cancelled); };
    try {
      const bool progressed = blocking ? m_remote.progress(arrival) : m_remote.try_progress(arrival);
      if (progressed) m_workers[static_cast<std::size_t>(w)]->poll_interval = std::chrono::nanoseconds(0);
      return progressed;
    } catch (...) {
      record_error(std::current_exception());
      return false;
    }
  }

  std::chrono::nanoseconds next_poll_interval(int w) {
    auto& interval = m_workers[static_cast<std::size_t>(w)]->poll_interval;
    interval = interval.count() == 0 ? m_settings.poll_min : std::min(interval * 2, m_settings.poll_max);
    return interval;
  }

  void worker_loop(int w) {
    idle_state idle;
    while (!m_stop.load(std::memory_order_acquire)) {
      if (auto [n, dev] = find_work(w); n) {
        if (idle.woken) pass_wake_on(idle);
        release_poller(idle);  // another idle worker may poll meanwhile
        execute(w, n, dev);
        idle.busy();
        continue;
      }
      flush(w);
      if (keep_looking(w, idle, clock::now())) continue;
      const auto ticket = m_idle.prepare_wait();
      if (has_visible_work(w)) {
        m_idle.cancel_wait();
        continue;
      }
      // The poller sleeps on a timer to look at MPI again; the others until they are woken.
      {
        wait_scope waiting(wait_kind::task, "task worker idle");
        m_idle.wait(ticket,
                    idle.poller && m_remote.active() ? next_poll_interval(w) : std::chrono::nanoseconds(0));
      }
      idle.woken = true;
    }
    release_poller(idle);
  }

  scheduler_settings m_settings;
  std::vector<std::unique_ptr<device_slot>>& m_devices;
  node_pool& m_pool;
  remote_channel& m_remote;
  std::vector<std::unique_ptr<worker_state>> m_workers;
  std::vector<std::thread> m_threads;
  idle_event m_idle;

  alignas(64) std::atomic<std::int64_t> m_active{0};
  alignas(64) std::atomic<std::int64_t> m_waiting_remote{0};
  alignas(64) std::atomic<int> m_device_queued{0};
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_cancelled{false};
  std::atomic<bool> m_marker_done{false};
  std::atomic<bool> m_window_waiter{false};
  std::atomic<bool> m_poller{false};
  alignas(64) std::atomic<int> m_urgent_queued{0};
  std::mutex m_shared_mutex;
  std::deque<node*> m_shared_device;
  alignas(64) spin_mutex m_urgent_mutex;
  std::vector<node*> m_urgent;  // a heap: runs_after
  std::mutex m_error_mutex;
  std::exception_ptr m_error;
  std::uint64_t m_plan = 0;
  std::uint64_t m_run = 0;
  std::int64_t m_throttle = 64;
  int m_release_batch = 32;
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_SCHEDULER_HPP

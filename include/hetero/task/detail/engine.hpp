/// @file
/// The untyped core of `hetero::task_graph`: declares tasks in program order on every rank
/// (SPMD), keeps what each event's accesses imply on this rank, creates the nodes that wait for
/// remote notifications, and runs `wait()`, recordings and replays on the scheduler.
#ifndef HETERO_TASK_DETAIL_ENGINE_HPP
#define HETERO_TASK_DETAIL_ENGINE_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/mpi/world_nodes.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/task/detail/data_registry.hpp"
#include "hetero/task/detail/data_transfer.hpp"
#include "hetero/task/detail/node_pool.hpp"
#include "hetero/task/detail/remote.hpp"
#include "hetero/task/detail/report.hpp"
#include "hetero/task/detail/scheduler.hpp"
#include "hetero/task/detail/tracker.hpp"
#include "hetero/task/options.hpp"
#include "hetero/task/recording.hpp"

namespace hetero::detail {

/// Checks the options every rank passes and returns the number of workers to start.
inline int checked_workers(const task_options& o, int comm_size) {
  HETERO_EXPECTS(o.workers >= 0, "task_options::workers is ", o.workers,
                 "; allowed: 0 (the host threads Kokkos was given) or a positive thread count");
  HETERO_EXPECTS(o.window >= 1, "task_options::window is 0; allowed: 1 or more tasks");
  (void)policy_seconds(o.no_progress_timeout, "task_options::no_progress_timeout");
  HETERO_EXPECTS(o.spin.count() >= 0, "task_options::spin is ", o.spin.count(), " s; allowed: 0 or more");
  HETERO_EXPECTS(o.wait_spin.count() >= 0, "task_options::wait_spin is ", o.wait_spin.count(),
                 " s; allowed: 0 or more");
  HETERO_EXPECTS(o.mpi_poll.count() >= 0, "task_options::mpi_poll is ", o.mpi_poll.count(),
                 " s; allowed: 0 or more");
  const int workers = o.workers > 0 ? o.workers : std::max(1, Kokkos::DefaultHostExecutionSpace().concurrency());
  if (comm_size > 1 && workers > 1)
    require_thread_multiple(message("a task graph on ", comm_size, " ranks with ", workers,
                                    " workers calls MPI from several threads and"),
                            " or use 1 worker");
  return workers;
}

/// Raises unless MPI lets the workers of a graph (threads other than the caller's) call it
/// while the caller may too: an adopted operation that calls MPI is polled by them.
inline void check_workers_may_call_mpi(std::string_view label) {
  require_thread_multiple(message("task_graph::adopt(..., \"", label,
                                  "\"): the graph's workers poll the adopted operation, whose test() calls MPI, "
                                  "from threads other than this one, which"),
                          ", use 1 worker, or, for an operation whose test() makes no MPI call, say so in it: "
                          "static constexpr bool calls_mpi = false");
}

/// The scheduler's settings from the options.
inline scheduler_settings settings(const task_options& o, int comm_size) {
  scheduler_settings s;
  s.workers = checked_workers(o, comm_size);
  s.spin = std::chrono::duration_cast<std::chrono::nanoseconds>(o.spin);
  s.wait_spin = std::chrono::duration_cast<std::chrono::nanoseconds>(o.wait_spin);
  s.polling.mpi_poll = std::chrono::duration_cast<std::chrono::nanoseconds>(o.mpi_poll);
  return s;
}

/// Whether a graph's no-progress timeout is the process-wide wait timeout (named in messages).
inline bool inherits_timeout(const task_options& o) noexcept { return o.no_progress_timeout.inherits(); }

/// How a graph's collective waits (its set-up, remote_events' check) wait: with its no-progress
/// timeout, or the process-wide one it inherits.
inline wait_policy wait_policy_of(const task_options& o) {
  constexpr std::string_view option = "task_options::no_progress_timeout";
  return make_wait_policy(o.comm.get(), policy_seconds(o.no_progress_timeout, option), option);
}

/// The state of one task graph on this rank.
class graph_engine {
  using clock = std::chrono::steady_clock;

 public:
  graph_engine(const task_options& options, std::vector<std::unique_ptr<device_slot>> devices,
               const data_ops& ops = {})
      : m_channel(options.comm.get(), wait_policy_of(options)),
        m_timeout(
            ::hetero::detail::resolve_timeout(options.no_progress_timeout, "task_options::no_progress_timeout")),
        m_timeout_inherited(inherits_timeout(options)),
        m_node_shared_copies(options.node_shared_copies),
        m_pool(options.window),
        m_devices(std::move(devices)),
        m_data(ops, m_devices, options.device_memory, checked_workers(options, m_channel.size()),
               m_channel.rank()),
        m_scheduler(settings(options, m_channel.size()), m_devices, m_pool, m_channel, m_data) {}

  graph_engine(const graph_engine&) = delete;
  graph_engine& operator=(const graph_engine&) = delete;

  // Tasks not started are cancelled; running ones (and the notifications of the cancelled ones,
  // which other ranks wait for) are finished before the workers stop.
  ~graph_engine() {
    if (!m_broken && !mpi_finalized()) {
      m_scheduler.cancel();
      try {
        // The owners of tiles read here in place wait for their release, once no task reads them.
        (void)release_pulls_when_read();
        const auto settled = m_scheduler.help_until([&] { return m_scheduler.quiescent(); }, m_timeout);
        (void)m_scheduler.take_error();
        // Nothing runs any more (a declaration that threw may have left the count above 0).
        if (settled == scheduler::outcome::done || m_data.pull_users_done()) m_data.release_open_pulls();
        m_channel.flush_answers();
      } catch (...) {  // nothing may escape a destructor; the graph is going away anyway
      }
    }
    // Tile moves still in flight (a broken run) end before the copies they use are freed.
    m_scheduler.stop();
    const auto cut = m_channel.cancel_transfers();
    if (cut.sends_left) m_data.keep_host_copies();
    if (m_broken || cut.any) {
      // Other ranks' messages may still arrive on the graph's communicators (tiles carry no
      // graph instance): freed, their ids could go to new ones, whose receives would take them.
      keep_communicator(comm());
      if (m_data_comm.get() != MPI_COMM_NULL) keep_communicator(m_data_comm.get());
    }
    // A registration dropped after the last wait() whose release failed: no wait is left to
    // raise it, and a destructor raises nothing. Never silent.
    if (std::exception_ptr dropped = m_data.take_drop_failure())
      report_drop_failure(dropped, "with the graph destroyed before a wait() could raise it");
  }

  /// Prints a release failure of a dropped registration that no wait() can raise.
  static void report_drop_failure(const std::exception_ptr& failure, const char* when) noexcept {
    const auto print = [when](const char* what) {
      std::fprintf(stderr, "hetero: releasing a dropped task data registration failed (%s): %s\n", when, what);
    };
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      print(e.what());
    } catch (...) {
      print("an exception that is not a std::exception");
    }
  }

  [[nodiscard]] int rank() const noexcept { return m_channel.rank(); }
  [[nodiscard]] int size() const noexcept { return m_channel.size(); }
  [[nodiscard]] MPI_Comm comm() const noexcept { return m_channel.comm(); }
  [[nodiscard]] int workers() const noexcept { return m_scheduler.workers(); }
  [[nodiscard]] int devices() const noexcept { return static_cast<int>(m_devices.size()); }
  /// The workers (subgraphs and composed recordings queue their tasks there).
  [[nodiscard]] scheduler& runner() noexcept { return m_scheduler; }

  /// `plan` is composed as a task (`compose(recording)`): checks that it can be, and adds to
  /// `spec` a write of the event of `plan` and of every recording composed in it, so that the
  /// runs of one plan follow one another in program order.
  void add_composition(task_spec& spec, recorded_plan& plan) {
    check_declaring("task_graph::spawn(..., compose(recording))");
    if (plan.owner != this)
      raise<invalid_argument>(
          "compose(recording) of a recording made by another task_graph; allowed: a "
          "recording of the graph it is composed into");
    if (plan.talks_to_other_ranks())
      raise<invalid_argument>(
          "compose(recording) of recording #", plan.id,
          ", which sends or waits for notifications of other ranks (out(...).to(...) in its tasks); a composed "
          "recording must be local to each rank: replay it with task_graph::replay, or put the notification "
          "on the composing task");
    if (!plan.order) {
      auto block = std::make_unique<event_block>();
      block->name = "recording #" + std::to_string(plan.id);
      block->owner = this;
      block->count = 1;
      block->events = std::make_unique<event_state[]>(1);
      block->events[0].block = block.get();
      plan.order = std::move(block);
    }
    spec.add({&plan.order->events[0], event_access::write, nullptr});
    for (recorded_plan* inner : plan.composes) spec.add({&inner->order->events[0], event_access::write, nullptr});
    if (!m_recording) return;
    const auto note = [&](recorded_plan* p) {
      if (std::find(m_recording->composes.begin(), m_recording->composes.end(), p) == m_recording->composes.end())
        m_recording->composes.push_back(p);
    };
    note(&plan);
    for (recorded_plan* inner : plan.composes) note(inner);
  }

  /// Creates the events named `name` with `extents`; remote blocks are made collectively
  /// and checked to be the same on every rank.
  const event_block* make_block(std::string name, std::vector<std::size_t> extents, bool remote) {
    check_usable("creating events");
    auto block = event_block::create(std::move(name), std::move(extents), this);
    block->remote = remote;
    if (remote) {
      block->first_id = m_next_remote_id;
      check_same_on_every_rank(*block);  // throws on every rank alike, before anything changed
      m_next_remote_id += block->count;
    }
    m_blocks.push_back(std::move(block));
    return m_blocks.back().get();
  }

  /// Declares one task (program order, every rank): `set_body(node&)` stores the body when this
  /// rank runs it.
  template <class SetBody>
  void declare(task_spec& spec, SetBody&& set_body) {
    static_assert(std::is_nothrow_invocable_v<SetBody&, node&>,
                  "hetero: set_body runs once the node is taken and counted: it must not throw (prepared_body)");
    if (spec.data == 0 && !spec.either) [[likely]] {
      const declared_task t = begin_task(spec);
      if (t.n) std::forward<SetBody>(set_body)(*t.n);
      end_task(spec, t);
      return;
    }
    declare_with_data(spec, std::forward<SetBody>(set_body));
  }

  /// The task data of this graph.
  [[nodiscard]] data_registry& data() noexcept { return m_data; }

  /// Registers piece `s` with this graph (declaring thread).
  void add_data(const std::shared_ptr<data_state>& s) {
    check_usable("registering task data");
    check_declaring("task_graph::data");
    m_data.add(s, this);
  }

  /// Collective: the first id of a new tile array of `count` tiles of `bytes` each, named
  /// `name` and shaped `shape` alike on every rank (checked; a mismatch throws
  /// `invalid_argument` on every rank).
  std::uint64_t new_tiles(const std::string& name, std::uint64_t count, std::size_t bytes,
                          std::vector<std::int64_t> shape, bool peer_views) {
    check_declaring("task_graph::tiles");
    if (size() > 1 && bytes > static_cast<std::size_t>(INT_MAX))
      raise<invalid_argument>("tile array '", name, "' has tiles of ", bytes,
                              " bytes; tiles that move between ranks have at most ", INT_MAX, " bytes");
    std::vector<std::int64_t> key(name.begin(), name.end());
    key.insert(key.end(), shape.begin(), shape.end());
    key.push_back(static_cast<std::int64_t>(bytes));
    key.push_back(static_cast<std::int64_t>(m_next_tile_id));
    key.push_back(m_node_shared_copies ? 1 : 0);  // both ends of a move must take the same path
    key.push_back(peer_views ? 1 : 0);            // ... the owner offers what the reader pulls
    agree(key, "tiles('" + name + "', ...)",
          "was declared differently on different ranks (name, tile counts, tile extents or element type, the "
          "number of tile arrays made before, peer_view_of given or not, or task_options::node_shared_copies); "
          "tile arrays are made collectively, in the same order and shape on every rank, by graphs with the "
          "same node_shared_copies");
    if (size() > 1 && m_data_comm.get() == MPI_COMM_NULL) {
      m_data_comm = duplicate_on_arrival(comm(), m_channel.policy(), "hetero::task_graph::tiles (communicator)");
      // Tiles move between ranks of one node through shared memory (node_copies.hpp); the
      // nodes are the runtime's (emulated ones included), none known without it.
      const std::vector<int> leaders = world_nodes::leaders_of(m_data_comm.get());
      std::vector<char> same_node(static_cast<std::size_t>(size()), 0);
      if (!leaders.empty())
        for (int r = 0; r < size(); ++r)
          same_node[static_cast<std::size_t>(r)] =
              r != rank() && leaders[static_cast<std::size_t>(r)] == leaders[static_cast<std::size_t>(rank())];
      m_data.share_node(std::move(same_node), m_node_shared_copies);
      m_data.answer_pulls_with(
          [channel = &m_channel](int owner, std::uint64_t id, std::uint64_t version) {
            channel->tile_copied(owner, id, version);
          },
          [channel = &m_channel](int owner) { channel->release_pulls(owner); });
    }
    const std::uint64_t first = m_next_tile_id;
    const auto bound = static_cast<std::uint64_t>(size() > 1 ? mpi_tag_bound(m_data_comm.get()) : INT_MAX);
    if (first + count > bound + 1)
      raise<invalid_argument>(
          "tile array '", name, "' would number tiles up to ", first + count - 1, ", past the ", bound + 1,
          " tiles that MPI's tags can name on this communicator; allowed: fewer tiles per graph");
    m_next_tile_id += count;
    return first;
  }

  /// `wait(data)`: runs tasks until the last writer of `s` declared so far finished, then
  /// makes its host copy current.
  void wait(data_state& s) {
    if (s.registry != &m_data)
      raise<invalid_argument>("task_graph::wait(data) names task data '", s.name,
                              "' of another task_graph (or of one that no longer exists)");
    if (s.owner >= 0 && s.owner != rank())
      raise<invalid_argument>("task_graph::wait(data) of tile ", s.name, " on rank ", rank(), ", which rank ",
                              s.owner,
                              " owns; allowed: wait(data) on the owner of a tile, or of data local to each rank "
                              "(graph.data)");
    HETERO_EXPECTS(!m_replaying, "task_graph::wait(data) during a replay: call wait() first");
    wait(s.event());
    m_data.read_back(s);
  }

  /// `set_source(node&)` stores an operation completing outside the graph that writes `e`;
  /// `calls_mpi`: its `test()` calls MPI.
  template <class SetSource>
  void adopt(event_state* e, std::string_view label, bool calls_mpi, SetSource&& set_source) {
    static_assert(std::is_nothrow_invocable_v<SetSource&, node&>,
                  "hetero: set_source runs once the node is taken and counted: it must not throw (prepared_body)");
    check_declaring("task_graph::adopt");
    check_event(e, "adopt");
    if (calls_mpi && m_scheduler.workers() > 1) check_workers_may_call_mpi(label);
    HETERO_EXPECTS(!m_recording,
                   "task_graph::adopt cannot be recorded: an adopted operation completes once; adopt "
                   "it before or after record()");
    HETERO_EXPECTS(!m_replaying, "task_graph::adopt during a replay: call wait() first");
    node* x = acquire_node();
    x->kind = node_kind::external;
    x->sequence = ++m_declared;
    x->extra.label.assign(label);
    x->extra.uses.push_back({e, event_access::write});
    std::forward<SetSource>(set_source)(*x);
    const int edges = dependency_tracker::write(e->live, x, false);
    e->live.unseen_write = 0;
    m_scheduler.add_waiting_remote(1);
    m_channel.add_external(x);
    m_scheduler.wake_poller();
    release(x, edges + 1);
  }

  /// Runs tasks until every task declared (or replayed) on every rank finished; rethrows the
  /// first exception of a task.
  void wait() {
    check_declaring("task_graph::wait");
    HETERO_EXPECTS(!m_recording, "task_graph::wait inside record(): the recording only declares tasks");
    expect(release_pulls_when_read(), false);
    expect(m_scheduler.help_until([&] { return m_scheduler.quiescent(); }, m_timeout), false);
    std::exception_ptr data_error;
    try {
      m_data.end_of_graph();  // the newest version of each piece back in its host memory
    } catch (...) {
      data_error = std::current_exception();
    }
    m_channel.forget_peer_slabs();  // no tile of this rank is on its way
    // What releasing a dropped registration raised since the last wait, and a handle dropped
    // while its data was in use, belong to this wait: raised after the errors above, printed
    // where one of them (or the barrier's) is raised instead (not left for a later wait).
    struct dropped_handles {
      std::exception_ptr failure;
      std::string in_use;  // `take_drop_error`
      ~dropped_handles() {
        if (failure) report_drop_failure(failure, "while this wait raised another error");
        if (!in_use.empty())
          std::fprintf(stderr, "hetero: %s (while this wait raised another error)\n", in_use.c_str());
      }
    } dropped{m_data.take_drop_failure(), m_data.take_drop_error()};
    bool any_failed = false;
    if (size() > 1) {
      m_channel.start_barrier(m_scheduler.cancelled() || data_error || dropped.failure);
      expect(m_scheduler.help_until([&] { return m_channel.barrier_done(any_failed); }, m_timeout), true);
    }
    m_replaying.reset();
    m_declared_since_wait = false;
    const bool cancelled = m_scheduler.cancelled();
    if (std::exception_ptr e = m_scheduler.take_error()) std::rethrow_exception(e);
    if (data_error) std::rethrow_exception(data_error);
    if (dropped.failure) std::rethrow_exception(std::exchange(dropped.failure, nullptr));
    if (!dropped.in_use.empty()) raise<invalid_argument>(std::exchange(dropped.in_use, {}));
    if (any_failed || cancelled)
      raise<error>("a task failed on another rank of the task graph; tasks on rank ", rank(),
                   " not started when it learnt of that were skipped (it learns from the failed task's "
                   "notifications and tile moves, else only here, at the end of wait()); the failing "
                   "rank's wait() rethrows its exception");
  }

  /// Runs tasks until the last writer of `e` declared so far finished (on this rank only).
  void wait(event_state* e) {
    check_declaring("task_graph::wait(event)");
    check_event(e, "wait");
    HETERO_EXPECTS(!m_recording, "task_graph::wait inside record(): the recording only declares tasks");
    // A replay's tasks are not tracked per event (the event would look finished at once).
    HETERO_EXPECTS(!m_replaying, "task_graph::wait(event) during a replay: call wait() first");
    if (!dependency_tracker::unfinished_writer(e->live)) return;
    node* marker = acquire_node();  // may run tasks (window full): look for the writer again after
    marker->kind = node_kind::marker;
    marker->sequence = ++m_declared;
    m_scheduler.arm_marker();
    node* writer = dependency_tracker::unfinished_writer(e->live);
    release(marker, writer && writer->add_successor(marker) ? 1 : 0);
    expect(m_scheduler.help_until([&] { return m_scheduler.marker_done(); }, m_timeout), false,
           "wait(event) or wait(data)");
  }

  /// Declares the tasks of `build()` into a recording instead of running them.
  template <class Build>
  task_recording record(Build&& build) {
    check_declaring("task_graph::record");
    HETERO_EXPECTS(!m_recording, "task_graph::record inside record(): recordings do not nest");
    auto plan = std::make_shared<recorded_plan>();
    plan->id = ++m_next_plan;
    plan->owner = this;
    m_recording = plan.get();
    ++m_recording_id;
    try {
      std::forward<Build>(build)();
    } catch (...) {
      m_recording = nullptr;
      throw;
    }
    m_recording = nullptr;
    plan->for_each([](node& n) { n.pending.store(n.reset_pending, std::memory_order_relaxed); });
    return task_recording(std::move(plan));
  }

  /// Starts a replay of `recording`; `wait()` finishes it.
  void replay(const task_recording& recording) {
    check_declaring("task_graph::replay");
    HETERO_EXPECTS(recording.m_plan, "task_graph::replay of an empty task_recording");
    HETERO_EXPECTS(recording.m_plan->owner == this,
                   "task_graph::replay of a recording made by another task_graph");
    HETERO_EXPECTS(!m_recording, "task_graph::replay inside record()");
    HETERO_EXPECTS(
        !m_replaying && !m_declared_since_wait,
        "task_graph::replay needs an idle graph: call wait() for the tasks declared or replayed before");
    recorded_plan& plan = *recording.m_plan;
    plan.leave_composition();
    m_replaying = recording.m_plan;
    ++plan.runs;
    m_scheduler.set_replay(plan.id, plan.runs);
    for (node* r : plan.receives) {
      r->extra.receive->key.run = plan.runs;
      const int expected = r->extra.receive->expected;
      m_scheduler.add_waiting_remote(1);
      const auto [remaining, cancelled] = m_channel.register_receive(r, r->extra.receive->key, expected);
      if (cancelled) m_scheduler.cancel();
      if (remaining == 0) m_scheduler.add_waiting_remote(-1);
      m_scheduler.wake_poller();
      const int arrived = expected - remaining;
      if (arrived > 0 && r->pending.fetch_sub(arrived, std::memory_order_acq_rel) == arrived)
        m_scheduler.make_ready(0, r);
    }
    m_scheduler.start_replay(plan.roots, plan.queued_roots);
  }

 private:
  void check_usable(const char* what) const {
    if (m_broken)
      raise<runtime_error>(what,
                           " on a task graph that raised hetero::deadlock_error: its pending tasks can never "
                           "finish; destroy the graph and build a new one");
  }

  void check_declaring(const char* what) const {
    check_usable(what);
    if (t_inside_task)
      raise<invalid_argument>(what,
                              " called from inside a task: tasks are declared in program order by the thread that "
                              "created the graph, not by other tasks (a task whose body takes a hetero::subgraph "
                              "declares inner tasks through it)");
    if (std::this_thread::get_id() != m_owner_thread)
      raise<invalid_argument>(what, " called from a thread other than the one that created the task graph");
  }

  void check_event(const event_state* e, const char* clause) const {
    if (!e)
      raise<invalid_argument>(clause, "(...) names a null hetero::event; create events with graph.event(...)");
    if (e->block->subgraph)
      raise<invalid_argument>(clause, "(", e->name(),
                              ") names an event of a subgraph; a subgraph's events order only the inner tasks of "
                              "that subgraph: name an event of the task_graph (graph.event(s)) instead");
    if (e->block->owner != this)
      raise<invalid_argument>(clause, "(...) names event ", e->name(), " of another task_graph");
  }

  // A task's node on this rank (none where it runs elsewhere), and whether end_task declares the
  // task's receives of its own notifications outside the insertion window.
  struct declared_task {
    node* n = nullptr;
    bool receives_outside = false;
  };

  // The refusals of a task that every rank makes alike: before anything of the task is
  // declared (a data task's tile moves too, which would otherwise stay declared, and run, for a
  // task that was refused).
  void check_task(const task_spec& spec) {
    check_declaring("task_graph::spawn");
    HETERO_EXPECTS(!m_replaying || m_recording,
                   "task_graph::spawn during a replay: call wait() first (tasks declared now would not be ordered "
                   "after the replayed ones)");
    const int world = size();
    if (spec.on) spec.on->check(world, "on(...)");
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      check_event(a.event, a.mode == event_access::read ? "in" : "out");
      if (!a.targets) continue;
      if (!a.event->remote_capable() && !a.targets->empty())
        raise<invalid_argument>("out(", a.event->name(), ").to(", a.targets->to_string(),
                                ") names ranks to notify, but the event is not remote-capable; create it with "
                                "graph.remote_events(...) (collectively on every rank)");
      a.targets->check(world, "out(...).to(...)");
    }
    if (spec.device) {
      HETERO_EXPECTS(!m_devices.empty(), "a device task on a task_graph without devices");
      HETERO_EXPECTS(spec.pinned >= -1 && spec.pinned < devices(), "device(", spec.pinned,
                     ") pins a task to a device the graph does not have; allowed: -1 (any) or 0 to ",
                     devices() - 1);
    }
  }

  declared_task begin_task(const task_spec& spec) {
    check_task(spec);
    ++m_spawned;
    if (spec.on && !spec.on->contains(rank())) return {};
    check_remote_reads(spec);
    // The task's receives of its own notifications here are declared while its node is held:
    // it waits for room for them too, unless the window cannot hold them all, where they come
    // outside it (end_task).
    declared_task t;
    if (m_recording) {
      t.n = m_recording->new_node();
    } else {
      const std::size_t group = 1 + receives_beside(spec);
      const std::size_t room = m_pool.room_for(group);
      t.n = acquire_node(false, room);
      t.receives_outside = room < group;
    }
    start_node(*t.n, spec, ++m_declared);
    return t;
  }

  // How many receive nodes end_task declares on this rank for a task that runs here: one per
  // `out(e).to(...)` naming this rank when the task runs on other ranks too.
  [[nodiscard]] std::size_t receives_beside(const task_spec& spec) const {
    std::size_t k = 0;
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      if (a.mode == event_access::read || !a.targets || !a.targets->contains(rank())) continue;
      const int senders = spec.on ? spec.on->size(size()) - (spec.on->contains(rank()) ? 1 : 0) : size() - 1;
      if (senders > 0) ++k;
    }
    return k;
  }

  // A task this rank runs may not read a remote-capable event whose last write ran on other
  // ranks without notifying this one: no message would come, and the reader would run at once,
  // before the write (ordering silently lost). Raised on the reading rank, before anything changed.
  void check_remote_reads(const task_spec& spec) {
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      if ((a.mode != event_access::read && !a.reads_too) || !a.event->remote_capable()) continue;
      const std::uint64_t unseen = history(*a.event).unseen_write;
      if (unseen == 0) continue;
      raise<invalid_argument>("task '", spec.label.empty() ? std::string_view("(unnamed)") : spec.label,
                              "' (spawn number ", m_spawned, ") reads remote event ", a.event->name(), " on rank ",
                              rank(), ", but the last task writing it (spawn number ", unseen,
                              ") runs on other ranks and does not notify rank ", rank(),
                              ": the read would not wait for that write. Name rank ", rank(),
                              " in that task's out(", a.event->name(),
                              ").to(...), or run the reader on the writer's ranks");
    }
  }

  void end_task(const task_spec& spec, const declared_task& t) {
    node* const n = t.n;
    const bool recording = m_recording != nullptr;
    const int me = rank();
    const int world = size();
    int edges = 0;
    // Receives declared while `n` is held: begin_task waited for room for them, unless the
    // window is too small for the task and them, where they come outside it.
    const bool receives_outside = t.receives_outside;
    const repeated_accesses repeated(spec);
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      access_history& h = history(*a.event);
      if (a.mode == event_access::read) {
        if (repeated(i)) continue;  // a second access of one event in one task adds nothing
        if (n) {
          edges += dependency_tracker::read(h, n, recording);
          n->extra.uses.push_back({a.event, event_access::read});
        }
        continue;
      }
      if (n) {
        edges += dependency_tracker::write(h, n, recording);
        n->extra.uses.push_back({a.event, event_access::write});
      }
      if (a.event->remote_capable()) h.unseen_write = n || (a.targets && a.targets->contains(me)) ? 0 : m_spawned;
      if (!a.targets || a.targets->empty()) continue;
      // Every rank counts this write, so sender and receivers number it alike.
      const std::uint64_t generation = h.remote_writes++;
      if (n) {
        rank_set others = a.targets->without(me, world);
        if (!others.empty()) {
          n->extra.notifications.push_back({a.event, generation, std::move(others)});
          n->notifies = true;
        }
      }
      if (a.targets->contains(me)) {
        rank_set senders = (spec.on ? *spec.on : rank_set::all()).without(me, world);
        if (!senders.empty())
          declare_receive(*a.event, h, generation, std::move(senders), spec.label, receives_outside);
      }
    }
    if (!n) return;
    if (recording) {
      n->reset_pending = edges;
      ++m_recording->tasks;
      if (edges == 0)
        (n->kind == node_kind::device || n->urgent ? m_recording->queued_roots : m_recording->roots).push_back(n);
    } else {
      release(n, edges);
      m_scheduler.throttle();
    }
  }

  // A node standing for the remote write number `generation` of `e` by the ranks `senders`;
  // `outside_window`: see end_task.
  void declare_receive(event_state& e, access_history& h, std::uint64_t generation, rank_set senders,
                       std::string_view writer, bool outside_window) {
    const bool recording = m_recording != nullptr;
    node* r = recording ? m_recording->new_node() : acquire_node(outside_window);
    r->kind = node_kind::receive;
    r->sequence = ++m_declared;
    if (!r->extra.receive) r->extra.receive = std::make_unique<receive_info>();
    receive_info& info = *r->extra.receive;
    info.key = {e.global_id(), generation, recording ? m_recording->id : 0, 0};
    info.expected = senders.size(size());
    info.senders = std::move(senders);
    info.writer_label.assign(writer);
    r->extra.uses.push_back({&e, event_access::write});
    const int edges = dependency_tracker::write(h, r, recording);
    if (recording) {
      r->reset_pending = edges + info.expected;
      m_recording->receives.push_back(r);
      return;
    }
    m_scheduler.add_waiting_remote(1);
    const auto [remaining, cancelled] = m_channel.register_receive(r, info.key, info.expected);
    if (cancelled) m_scheduler.cancel();
    if (remaining == 0) m_scheduler.add_waiting_remote(-1);
    m_scheduler.wake_poller();
    release(r, edges + remaining);
  }

  access_history& history(event_state& e) {
    if (!m_recording) return e.live;
    if (e.recording_id != m_recording_id) {
      e.recorded.clear();
      e.recording_id = m_recording_id;
    }
    return e.recorded;
  }

  // Drops the declaration bias; the node runs once `waits` predecessors/messages are done.
  void release(node* n, int waits) {
    if (waits == 0) {  // no predecessor and no message holds n: nobody else touches its counter
      n->pending.store(0, std::memory_order_relaxed);
      m_scheduler.make_ready(0, n);
      return;
    }
    const std::int32_t bias = node::declaring - waits;
    if (n->pending.fetch_sub(bias, std::memory_order_acq_rel) == bias) m_scheduler.make_ready(0, n);
  }

  // A node from the pool; runs tasks until `room` nodes fit in the insertion window (unless
  // `outside_window`: see node_pool).
  node* acquire_node(bool outside_window = false, std::size_t room = 1) {
    m_declared_since_wait = true;
    node* n = m_pool.acquire(outside_window, room);
    while (!n) {
      expect(m_scheduler.help_until([&] { return m_pool.has_released(room); }, m_timeout, true), false,
             "a spawn, adopt or wait(event) held by a full insertion window (task_options::window)");
      n = m_pool.acquire(false, room);
    }
    return n;
  }

  // Declaring thread, nothing more declared: runs tasks until every one here that reads tiles in
  // their owners' memory finished (or nothing runs), then releases those versions (one message
  // per owner). Their owners wait for that before their own wait ends, as this rank waits for its
  // readers. Nothing is released unless the outcome is `done`.
  [[nodiscard]] scheduler::outcome release_pulls_when_read() {
    if (size() == 1) return scheduler::outcome::done;
    const scheduler::outcome outcome =
        m_scheduler.help_until([&] { return m_scheduler.quiescent() || m_data.pull_users_done(); }, m_timeout);
    if (outcome == scheduler::outcome::done) m_data.release_open_pulls();
    return outcome;
  }

  // `where`: what this thread was waiting in, for the message.
  void expect(scheduler::outcome outcome, bool in_barrier, const char* where = "wait()") {
    if (outcome != scheduler::outcome::done) deadlock(outcome, in_barrier, where);
  }

  void check_same_on_every_rank(const event_block& block) {
    std::vector<std::int64_t> shape(block.name.begin(), block.name.end());
    shape.insert(shape.end(), block.extents.begin(), block.extents.end());
    shape.push_back(static_cast<std::int64_t>(block.first_id));
    const std::uint64_t h = hash_of(shape);
    // Waited with the graph's timeout, so that a rank that skips this call does not hang the others.
    const std::string what = "hetero::task_graph::remote_events('" + block.name + "')";
    std::array<std::uint64_t, 2> all{};
    try {
      all = allreduce_max<2>({h, ~h}, comm(), m_channel.policy(), what, wait_kind::task);
    } catch (const deadlock_error&) {
      m_broken = true;  // the ranks' collective calls on the graph's communicator are out of step
      throw;
    }
    if (all[0] != h || all[1] != ~h)
      raise<invalid_argument>(
          "remote_events('", block.name, "', ...) was declared differently on different ranks (",
          "name, extents or the number of remote events declared before); remote events must be "
          "declared collectively, in the same order and shape on every rank");
  }

  // Every rank passes the same `key` (a hash compared with an allreduce on the graph's
  // communicator); otherwise `invalid_argument` on every rank: "<what> <mismatch>".
  void agree(const std::vector<std::int64_t>& key, const std::string& what, const char* mismatch) {
    if (size() == 1) return;
    const std::uint64_t h = hash_of(key);
    std::array<std::uint64_t, 2> all{};
    try {
      all = allreduce_max<2>({h, ~h}, comm(), m_channel.policy(), "hetero::task_graph::" + what, wait_kind::task);
    } catch (const deadlock_error&) {
      m_broken = true;
      throw;
    }
    if (all[0] != h || all[1] != ~h) raise<invalid_argument>(what, " ", mismatch);
  }

  // A task with task data (or a host and a device body): checks its data, runs it on the owner
  // of the tile it writes unless on(...) says otherwise, declares the moves of tiles between
  // ranks it needs, then the task itself.
  template <class SetBody>
  void declare_with_data(task_spec& spec, SetBody&& set_body) {
    check_declaring("task_graph::spawn");
    HETERO_EXPECTS(!m_replaying, "task_graph::spawn during a replay: call wait() first");
    if (m_recording)
      raise<invalid_argument>("task '", spec.label,
                              "' has data clauses (reads, writes, updates) or a host_or_device body, which "
                              "record() cannot record yet; declare such tasks outside record()");
    // Every refusal comes before anything is declared (on every rank alike where it can;
    // check_task's too): a node taken and then left without a body would never finish. Only
    // the running rank's check of its remote reads (begin_task) comes after the tile moves,
    // which are declared on both ends alike.
    if (spec.data > max_data_uses)
      raise<invalid_argument>("task '", spec.label, "' names ", spec.data,
                              " pieces of task data; allowed: at most ", max_data_uses, " per task");
    rank_set owner_only;
    int writer_owner = -1;
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      if (!a.data) continue;
      if (a.data->registry != &m_data)
        raise<invalid_argument>("a data clause names task data '", a.data->name,
                                "' of another task_graph (or of one that no longer exists); allowed: data "
                                "registered with this graph (graph.data, graph.tiles)");
      if (writes_new(a.use) && a.data->owner >= 0 && writer_owner < 0) writer_owner = a.data->owner;
    }
    // A piece's clauses share its hidden event, which no event clause can name.
    const repeated_accesses repeated(spec);
    for (std::size_t i = 0; i < spec.size(); ++i)
      if (spec[i].data && repeated(i))
        raise<invalid_argument>("task '", spec.label, "' names task data '", spec[i].data->name,
                                "' in two data clauses; name each piece once (updates(...) reads and writes)");
    if (!spec.on && writer_owner >= 0) {
      owner_only = rank_set(writer_owner);
      spec.on = &owner_only;
    }
    if (spec.on) spec.on->check(size(), "on(...)");
    const bool runs_here = !spec.on || spec.on->contains(rank());
    if (runs_here)
      for (std::size_t i = 0; i < spec.size(); ++i) {
        const access_spec& a = spec[i];
        if (a.data && writes_new(a.use) && a.data->owner >= 0 && a.data->owner != rank())
          raise<invalid_argument>(
              "task '", spec.label, "' (spawn number ", m_spawned + 1, ") writes tile ", a.data->name, " on rank ",
              rank(), ", but rank ", a.data->owner,
              " owns it; allowed: tasks that write a tile run on its owner (leave out on(...), "
              "or name the owner in it)");
        if (a.data && spec.device && a.data->bytes > m_data.device_capacity())
          raise<invalid_argument>("device task '", spec.label, "' uses task data '", a.data->name, "' of ",
                                  a.data->bytes, " bytes, more than a device memory may hold (",
                                  m_data.device_capacity(), " bytes, task_options::device_memory)");
      }
    if (runs_here && spec.device) {
      std::size_t total = 0;
      for (std::size_t i = 0; i < spec.size(); ++i)
        if (spec[i].data) total += spec[i].data->bytes;
      if (total > m_data.device_capacity())
        raise<invalid_argument>("device task '", spec.label, "' uses ", total,
                                " bytes of task data, more than a device memory may hold (",
                                m_data.device_capacity(), " bytes, task_options::device_memory)");
    }
    check_task(spec);
    declare_tile_moves(spec);
    const declared_task t = begin_task(spec);
    node* n = t.n;
    if (n) {
      node_data& d = n->extra.data;
      d.kind = data_node_kind::task;
      d.label = m_data.label(spec.label.empty() ? std::string_view("(no label)") : spec.label);
      for (std::size_t i = 0; i < spec.size(); ++i) {
        const access_spec& a = spec[i];
        if (!a.data) continue;
        d.uses.push_back({a.data, a.use});
        m_data.add_pull_user(*a.data, data_node_kind::task, a.use);
        d.bytes += a.data->bytes;
        a.data->unfinished.fetch_add(1, std::memory_order_relaxed);
      }
      if (spec.either) {
        n->kind = node_kind::cpu;
        m_data.placing();
      }
      mark(*n, spec.either);
      std::forward<SetBody>(set_body)(*n);
    }
    end_task(spec, t);
    for (std::size_t i = 0; i < spec.size(); ++i) {
      if (!spec[i].data || !writes_new(spec[i].use)) continue;
      // A new version of a tile whose current one tasks here read in its owner's memory: the
      // owner may write it once they finished (declared with the write; where the write was
      // refused on some rank only, the ranks' versions differ already, and a version left open
      // is released in wait()).
      declare_pull_release(*spec[i].data);
      ++spec[i].data->declared_writes;
    }
  }

  static void mark(node& n, bool either) {
    std::uint8_t f = n.flags.load(std::memory_order_relaxed) | node::data_bit;
    if (either) f |= node::either_bit;
    n.flags.store(f, std::memory_order_relaxed);
  }

  // The tiles the task reads on ranks that do not own them: the owner sends each version once
  // to each such rank, which receives it into its copy (every rank sees the same declarations,
  // so both ends declare the move alike).
  void declare_tile_moves(const task_spec& spec) {
    const int world = size();
    const rank_set everyone = rank_set::all();
    const rank_set& runners = spec.on ? *spec.on : everyone;
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      if (!a.data || a.data->owner < 0 || !reads_old(a.use)) continue;
      data_state& s = *a.data;
      const std::uint64_t version = s.declared_writes;
      runners.for_each(world, [&](int r) {
        if (r == s.owner) return;
        if (rank() == s.owner && s.sent[static_cast<std::size_t>(r)] != version) {
          declare_send(s, r, version);
          s.sent[static_cast<std::size_t>(r)] = version;
        }
        if (rank() == r && s.fetched != version) {
          declare_receive(s, version);
          s.fetched = version;
        }
      });
    }
  }

  // A node that moves or releases a version of tile `s`, using it and its hidden event in `mode`.
  // A transfer another rank waits for (posting a move, a release) is short: it goes before every
  // ready task.
  node* data_node(data_state& s, node_kind kind, data_node_kind data_kind, data_mode mode, std::string label,
                  bool outside_window = false, std::size_t room = 1) {
    node* x = acquire_node(outside_window, room);
    x->kind = kind;
    x->sequence = ++m_declared;
    x->extra.label = std::move(label);
    if (kind == node_kind::transfer) {
      x->urgent = true;
      x->priority = std::numeric_limits<std::int32_t>::max();
    }
    x->extra.data.kind = data_kind;
    x->extra.data.uses.push_back({&s, mode});
    x->extra.data.bytes = s.bytes;
    x->extra.uses.push_back({s.event(), mode == data_mode::read ? event_access::read : event_access::write});
    mark(*x, false);
    s.unfinished.fetch_add(1, std::memory_order_relaxed);
    return x;
  }

  // Two nodes per move: a start that posts it (a transfer: runs even in a cancelled graph, the
  // other rank waits for it) and a done node, which the channel completes with the operation.
  // The start is released only once both are declared, so the pair is taken together: room for
  // both in the window, or, in a window of one node, the done node outside it.
  // `done_outside_window`: the done node waits for another rank's release of a tile it reads in
  // place, perhaps until that rank's wait() (see node_pool).
  std::pair<node*, node*> transfer_nodes(data_state& s, data_node_kind start_kind, data_node_kind done_kind,
                                         data_mode mode, std::string label, bool done_outside_window = false) {
    const std::size_t room = m_pool.room_for(2);
    node* start = data_node(s, node_kind::transfer, start_kind, mode, label, false, room);
    node* done =
        data_node(s, node_kind::external, done_kind, mode, std::move(label), done_outside_window || room < 2);
    return {start, done};
  }

  // The body of a transfer's start: posts the move (a failed post still completes its done
  // node, so that wait() ends and reports the failure).
  template <class Buffer>
  void set_transfer_body(node& start, node* done, data_state& s, bool receive, int peer, Buffer buffer,
                         std::uint64_t version) {
    if (m_data.shares_node_with(peer)) {  // the reader's copy is shared memory, or the reader says not
      set_body<void>(start, [data = &m_data, channel = &m_channel, piece = &s, done, receive, peer, buffer,
                             version, comm = m_data_comm.get()] {
        const tile_move move{peer,         piece->id, version,
                             piece->bytes, comm,      receive ? buffer(*data, *piece) : nullptr};
        if (receive && piece->node_source) {  // this rank reads the version in the owner's memory
          channel->expect_tile_pull(move, done, &piece->pull_version, &data->node_memory_moves(),
                                    &data->pulled_moves());
          data->count_transfer(true, piece->bytes);
          return;
        }
        if (receive && piece->shared_slab != 0) {
          channel->expect_tile(move, done, data->slab_nonce(), piece->shared_slab - 1, &data->node_memory_moves());
          data->count_transfer(true, piece->bytes);
          return;
        }
        if (receive) {
          channel->expect_tile_by_mpi(move, done, move.into);
        } else {
          // The reader copies the version from this rank's memory (peer_view_of), or this rank
          // copies it into the reader's slab; null: the move completes, cancelled, on both ranks.
          const auto hand_over = [&](const void* from) {
            if (piece->peer_views) {
              channel->offer_tile(move, done, from);
            } else {
              channel->push_tile(move, done, from);
            }
          };
          void* from = nullptr;
          try {
            from = buffer(*data, *piece);
          } catch (...) {
            hand_over(nullptr);
            throw;
          }
          hand_over(from);
        }
        data->count_transfer(receive, piece->bytes);
      });
      return;
    }
    set_body<void>(start, [data = &m_data, channel = &m_channel, piece = &s, done, receive, peer, buffer,
                           comm = m_data_comm.get()] {
      MPI_Request request = MPI_REQUEST_NULL;
      try {
        request = post_transfer(receive, buffer(*data, *piece), piece->bytes, peer, tile_tag(piece->id), comm);
      } catch (...) {
        if (receive) {
          // The owner sends this version anyway (or its empty message, where its send failed
          // too): drained here, it cannot wait in MPI for this tile's next receive from it.
          channel->drain_tile(done, peer, tile_tag(piece->id), piece->bytes, comm);
        } else {
          // The reader's receive would wait for this version until its timeout: an empty message
          // ends it, and its move, cancelled.
          (void)send_cancelled(peer, tile_tag(piece->id), comm);
          channel->add_transfer(done, MPI_REQUEST_NULL, receive);
        }
        throw;
      }
      channel->add_transfer(done, request, receive, false, receive ? piece->bytes : 0);
      data->count_transfer(receive, piece->bytes);
    });
  }

  void declare_send(data_state& s, int to, std::uint64_t version) {
    auto [start, done] = transfer_nodes(s, data_node_kind::send_start, data_node_kind::send_done, data_mode::read,
                                        "send " + s.name + " to rank " + std::to_string(to),
                                        s.peer_views && m_data.shares_node_with(to));
    set_transfer_body(
        *start, done, s, false, to,
        [](data_registry& data, data_state& piece) { return data.host_for_send(piece); }, version);
    start->append_successor(done);
    access_history& h = history(*s.event());
    const int start_edges = dependency_tracker::read(h, start, false);
    const int done_edges = dependency_tracker::read(h, done, false);
    m_scheduler.add_waiting_remote(1);
    release(start, start_edges);
    release(done, done_edges + 2);  // + the start, + the operation
  }

  // The release of the version of tile `s` read here in its owner's memory, if one is open: a
  // node after every task here that reads it (a write of the piece's hidden event), which tells
  // the owner. It runs in a cancelled graph too: the owner waits for it.
  void declare_pull_release(data_state& s) {
    if (s.pull_open == data_state::none) return;
    const std::uint64_t version = std::exchange(s.pull_open, data_state::none);
    node* x = data_node(s, node_kind::transfer, data_node_kind::pull_release, data_mode::write,
                        "release " + s.name + " to rank " + std::to_string(s.owner));
    set_body<void>(*x, [data = &m_data, piece = &s, version] { data->release_pull(*piece, version); });
    const int edges = dependency_tracker::write(history(*s.event()), x, false);
    release(x, edges);
  }

  void declare_receive(data_state& s, std::uint64_t version) {
    declare_pull_release(s);
    m_data.ensure_host_copy(s);
    auto [start, done] =
        transfer_nodes(s, data_node_kind::receive_start, data_node_kind::receive_done, data_mode::write,
                       "receive " + s.name + " from rank " + std::to_string(s.owner));
    set_transfer_body(
        *start, done, s, true, s.owner,
        [](data_registry&, data_state& piece) { return data_registry::host_for_receive(piece); }, version);
    if (s.node_source) s.pull_open = version;  // read here in the owner's memory until released
    m_data.add_pull_user(s, data_node_kind::receive_done, data_mode::write);
    access_history& h = history(*s.event());
    const int start_edges = dependency_tracker::write(h, start, false);
    const int done_edges = dependency_tracker::write(h, done, false);  // after the start (output dependency)
    m_scheduler.add_waiting_remote(1);
    release(start, start_edges);
    release(done, done_edges + 1);  // + the operation
  }

  [[noreturn]] void deadlock(scheduler::outcome outcome, bool in_barrier, const char* where);

  remote_channel m_channel;
  std::chrono::nanoseconds m_timeout;
  bool m_timeout_inherited;  // m_timeout is the process-wide wait timeout (named in deadlock messages)
  std::thread::id m_owner_thread = std::this_thread::get_id();
  std::deque<std::unique_ptr<event_block>> m_blocks;
  std::uint64_t m_next_remote_id = 0;
  std::uint64_t m_declared = 0;
  std::uint64_t m_spawned = 0;  // spawn calls so far, on every rank alike (names tasks in errors)
  recorded_plan* m_recording = nullptr;
  std::uint64_t m_recording_id = 0;
  std::uint64_t m_next_plan = 0;
  bool m_broken = false;
  bool m_declared_since_wait = false;
  owned_comm m_data_comm;            // tiles moving between ranks (their requests live in m_channel)
  bool m_node_shared_copies = true;  // task_options::node_shared_copies
  std::uint64_t m_next_tile_id = 0;
  node_pool m_pool;
  std::vector<std::unique_ptr<device_slot>> m_devices;
  data_registry m_data;  // after the devices (it fences them when it goes), before the workers
  std::shared_ptr<recorded_plan> m_replaying;  // alive while its replay runs
  scheduler m_scheduler;                       // last: its threads stop first
};

// Builds this rank's report, exchanges reports with the other ranks, and throws.
inline void graph_engine::deadlock(scheduler::outcome outcome, bool in_barrier, const char* where) {
  const double seconds = std::chrono::duration<double>(m_timeout).count();
  pending_report mine(rank(), m_channel);
  m_pool.for_each_live([&](node& n) {
    if (!n.done()) mine.add(n);
  });
  if (m_replaying)
    m_replaying->for_each([&](node& n) {
      if (n.finished_run.load(std::memory_order_relaxed) != static_cast<std::uint32_t>(m_replaying->runs))
        mine.add(n);
    });
  std::string text = mine.text(in_barrier);
  if (outcome == scheduler::outcome::stuck)
    text.insert(text.find(':'), " (made no progress for " + std::to_string(seconds) + " s)");
  // What failed here (a task, a notification's send) may be why the others wait: every rank says
  // it, right below this rank's first line (a long report is cut at its end when sent).
  if (const std::string failed = m_scheduler.error_text(); !failed.empty())
    text.insert(text.find('\n') + 1, "  failed here first: " + failed + "\n");
  m_broken = true;
  m_scheduler.cancel();
  std::map<int, std::string> reports;
  try {
    m_channel.send_report(text);
    const auto grace = clock::now() + std::min<std::chrono::nanoseconds>(std::chrono::seconds(1), 2 * m_timeout);
    while (clock::now() < grace) {
      (void)m_channel.progress([](node*, bool, bool) {});  // late notifications no longer matter
      if (m_channel.reports().size() + 1 >= static_cast<std::size_t>(size())) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    reports = m_channel.reports();
  } catch (const hetero::error&) {  // MPI failed: report what this rank knows
  }
  std::string message = "task graph deadlock: ";
  message += outcome == scheduler::outcome::stuck
                 ? "no task ran, finished or arrived for " + std::to_string(seconds) + " s on rank " +
                       std::to_string(rank())
                 : "another rank found that its tasks made no progress";
  message += std::string(" while ") + where + " was waiting";
  message += no_progress_advice(m_timeout_inherited);
  message += ". Pending work on each rank:\n";
  for (int r = 0; r < size(); ++r) {
    if (r == rank()) {
      message += text;
    } else if (auto it = reports.find(r); it != reports.end()) {
      message += it->second;
    } else {
      message += "rank " + std::to_string(r) +
                 ": no report (it is not waiting on the graph in wait(), wait(event) or a spawn held by the "
                 "insertion window, or its waiting thread is running a long task body)\n";
    }
  }
  throw deadlock_error(message);
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_ENGINE_HPP

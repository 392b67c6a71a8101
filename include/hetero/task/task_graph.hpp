/// @file
/// `hetero::task_graph`: event-based tasklet graphs across MPI ranks (XcalableMP's
/// tasklets) with CPU ready queues and device queues (the macro-task scheduling of StarPU-like
/// runtimes).
///
/// Every rank declares the same tasks in the same order (SPMD); a task runs on the ranks of
/// its `on` clause. Within a rank, `in`/`out` follow OpenMP `depend` semantics in program
/// order. `out(e).to(ranks)` notifies other ranks over MPI when the task finishes; their tasks
/// with `e` in `in(...)` declared after it wait for that notification.
#ifndef HETERO_TASK_TASK_GRAPH_HPP
#define HETERO_TASK_TASK_GRAPH_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/concepts.hpp"
#include "hetero/core/detail/kokkos_compat.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/task/clauses.hpp"
#include "hetero/task/completion_source.hpp"
#include "hetero/task/compose.hpp"
#include "hetero/task/detail/engine.hpp"
#include "hetero/task/detail/spawn.hpp"
#include "hetero/task/event.hpp"
#include "hetero/task/options.hpp"
#include "hetero/task/recording.hpp"
#include "hetero/task/subgraph.hpp"

namespace hetero {

/// The index (among its graph's devices) of the device the calling device task runs on; -1
/// outside a device task.
inline int current_device() noexcept { return detail::t_current_device; }

/// Whether the calling thread is running the body of a task.
inline bool inside_task() noexcept { return detail::t_inside_task; }

/// A task graph over the ranks of a communicator, with CPU workers and `DeviceSpace` devices.
/// Constructing it is collective over `options.comm`; so are `remote_events`, `record` and
/// `wait()` (which returns on every rank once every rank's tasks finished).
/// @code
/// hetero::task_graph graph;                      // every rank, host threads as workers
/// auto ea = graph.remote_events("EA", nt, nt);   // collective
/// auto owner = [p](std::int64_t i) { return static_cast<int>(i % p); };
/// graph.spawn("potrf", hetero::on(owner(k)),
///             hetero::out(ea(k, k)).to(hetero::owners(owner, k + 1, nt)), [&] { potrf(k); });
/// graph.spawn("trsm", hetero::on(owner(i)), hetero::in(ea(k, k)), hetero::out(ea(k, i)), [&] { trsm(k, i); });
/// graph.wait();
/// @endcode
template <execution_space DeviceSpace = Kokkos::DefaultExecutionSpace>
class task_graph {
 public:
  /// The execution space of device tasks.
  using device_space = DeviceSpace;
  /// What a task body that declares inner tasks takes (`[&](graph_type::subgraph_type& sg)`).
  using subgraph_type = subgraph<DeviceSpace>;

  /// Starts the workers on every rank of `options.comm` (collective). `devices` are the device
  /// instances device tasks run on, one task at a time each (distinct instances: Kokkos 3.4 has
  /// one global instance per space, never run it from two threads at once); none given means
  /// one default instance. Needs MPI and Kokkos initialised (`hetero::runtime`).
  explicit task_graph(const task_options& options = {}, std::vector<DeviceSpace> devices = {})
      : m_engine(make_engine(options, devices, m_devices)) {}

  task_graph(const task_graph&) = delete;
  task_graph& operator=(const task_graph&) = delete;
  task_graph(task_graph&&) = delete;
  task_graph& operator=(task_graph&&) = delete;
  /// Cancels the tasks not started, finishes the running ones and stops the workers; call
  /// `wait()` before to run everything.
  ~task_graph() = default;

  /// A new event of this graph, local to each rank.
  [[nodiscard]] hetero::event event(std::string name = "event") {
    return hetero::event(&m_engine->make_block(std::move(name), {}, false)->events[0]);
  }
  /// An array of new events (`events("EC", nt)`, `events("T", 2, nt)`), local to each rank.
  template <std::integral... Extents>
  [[nodiscard]] event_array<sizeof...(Extents)> events(std::string name, Extents... extents) {
    return make_array(std::move(name), false, extents...);
  }
  /// An array of remote-capable events (XcalableMP's `xmp_event_t EA[nt][nt]:[*]`): writes may
  /// notify other ranks with `out(...).to(...)`. Collective: every rank declares the same
  /// arrays in the same order (checked; a mismatch throws `invalid_argument` on every rank).
  template <std::integral... Extents>
  [[nodiscard]] event_array<sizeof...(Extents)> remote_events(std::string name, Extents... extents) {
    return make_array(std::move(name), true, extents...);
  }
  /// One remote-capable event (collective, as `remote_events`).
  [[nodiscard]] hetero::event remote_event(std::string name) {
    return hetero::event(&m_engine->make_block(std::move(name), {}, true)->events[0]);
  }

  /// Declares a task: an optional label, clauses (`on`, `in`, `out`, `inout`, `device`,
  /// `priority`) and the body last, called as `body()` (CPU task), `body(device_instance)`
  /// (device task) or `body(subgraph)` (a task declaring inner tasks: its `out` events are
  /// written once they all finished, see `hetero::subgraph`); or `hetero::compose(recording)`,
  /// a recording of this graph run as one task. Every rank declares every task; the ranks of
  /// `on` (default: all) run it. May run tasks itself when `task_options::window` tasks are
  /// pending.
  /// @code
  /// graph.spawn("gemm", hetero::in(a, b), hetero::out(c), [=] { gemm(a_tile, b_tile, c_tile); });
  /// graph.spawn(hetero::device(), hetero::in(c), [=](const Kokkos::OpenMP& space) { kernel(space); });
  /// graph.spawn("block", hetero::out(c), [&](hetero::subgraph<Kokkos::OpenMP>& sg) { declare_inner(sg); });
  /// graph.spawn("step", hetero::inout(c), hetero::compose(step_recording));
  /// @endcode
  template <class... Args>
  void spawn(Args&&... args) {
    detail::spawn_task<DeviceSpace>(
        [this]<detail::body_kind Kind, class Body>(detail::task_spec& spec,
                                                   std::integral_constant<detail::body_kind, Kind>, Body&& body) {
          if constexpr (Kind == detail::body_kind::composed) m_engine->add_composition(spec, *body.plan());
          m_engine->declare(spec, [&](detail::node& n) {
            detail::set_task_body<DeviceSpace, Kind>(n, m_engine->runner(), m_engine.get(), devices(),
                                                     std::forward<Body>(body));
          });
        },
        std::forward<Args>(args)...);
  }

  /// Declares, in program order on this rank, that `operation` (a `hetero::mpi_request`, a
  /// `hetero::collective_request` of a non-blocking collective, a `hetero::reflect_handle` of
  /// `hetero::reflect_async`, ...) writes the event of `written`: tasks declared later with it in
  /// `in(...)` start once `operation.test()` returned true. Polled by idle workers; local to this
  /// rank.
  /// @code
  /// graph.adopt(hetero::out(halo), hetero::reflect_async(u), "reflect");
  /// graph.spawn(hetero::in(halo), [&] { stencil(u); });
  /// @endcode
  template <completion_source Operation>
  void adopt(const access_clause<detail::event_access::write, 1>& written, Operation operation,
             std::string_view label = "adopted operation") {
    HETERO_EXPECTS(
        !written.targets(), "adopt(out(", written.events()[0].name(),
        ").to(...), ...): an adopted operation cannot notify other ranks; a task reading the event can");
    m_engine->adopt(written.events()[0].state(), label,
                    [&](detail::node& n) { detail::set_source(n, std::move(operation)); });
  }

  /// Runs tasks until every task of every rank finished (XcalableMP's `taskletwait`;
  /// collective). Rethrows the first exception a task of this rank threw (the tasks not
  /// started when it was thrown are skipped, on every rank); raises `hetero::error` on the
  /// other ranks, and `hetero::deadlock_error` on every rank after
  /// `task_options::no_progress_timeout` without progress.
  void wait() { m_engine->wait(); }
  /// Runs tasks until the last task (or remote notification) writing `e` declared so far
  /// finished; local to this rank.
  void wait(const hetero::event& e) { m_engine->wait(e.state()); }

  /// Records the tasks `build()` declares, without running them (collective).
  template <std::invocable Build>
  [[nodiscard]] task_recording record(Build&& build) {
    return m_engine->record(std::forward<Build>(build));
  }
  /// Starts a replay of a recording of this graph; `wait()` finishes it. The graph must be
  /// idle (no task declared or replayed since the last `wait()`).
  void replay(const task_recording& recording) { m_engine->replay(recording); }
  /// `replay(recording)` and `wait()`.
  void run(const task_recording& recording) {
    replay(recording);
    wait();
  }

  /// This rank in the graph's communicator.
  [[nodiscard]] int rank() const noexcept { return m_engine->rank(); }
  /// Ranks of the graph's communicator.
  [[nodiscard]] int size() const noexcept { return m_engine->size(); }
  /// Threads running tasks on this rank (the one calling `wait()` included).
  [[nodiscard]] int workers() const noexcept { return m_engine->workers(); }
  /// Device instances of the graph.
  [[nodiscard]] int devices() const noexcept { return m_engine->devices(); }
  /// The graph's private duplicate of `task_options::comm` (named like every hetero handle's
  /// raw communicator, so a graph is a `comm_ref` too).
  [[nodiscard]] MPI_Comm mpi_comm() const noexcept { return m_engine->comm(); }

 private:
  static std::unique_ptr<detail::graph_engine> make_engine(const task_options& options,
                                                           std::vector<DeviceSpace>& given,
                                                           std::vector<DeviceSpace>& kept) {
    if (!detail::mpi_initialized() || detail::mpi_finalized())
      detail::raise<runtime_error>("a task_graph needs MPI initialised (create a hetero::runtime first)");
    if (!Kokkos::is_initialized())
      detail::raise<runtime_error>("a task_graph needs Kokkos initialised (create a hetero::runtime first)");
    // Kokkos 3's OpenMP runs kernels in parallel only from its master thread: device tasks are
    // then started by the declaring thread alone, which must be that thread.
    constexpr bool master_only = detail::parallel_only_on_master_thread<DeviceSpace>;
    if (master_only && !detail::launches_in_parallel_here<DeviceSpace>())
      detail::raise<invalid_argument>(
          "a task_graph with ", DeviceSpace::name(), " devices was created on a thread whose ",
          DeviceSpace::name(), " kernels would run on one thread (with Kokkos ", KOKKOS_VERSION / 10000, ".",
          KOKKOS_VERSION / 100 % 100,
          " only the thread that initialised Kokkos runs them in parallel): create and wait for the graph on that "
          "thread, or use Kokkos 4 or later");
    kept = given.empty() ? std::vector<DeviceSpace>{DeviceSpace{}} : std::move(given);
    std::vector<std::unique_ptr<detail::device_slot>> slots;
    for (std::size_t i = 0; i < kept.size(); ++i) {
      slots.push_back(std::make_unique<detail::device_slot>());
      slots.back()->index = static_cast<int>(i);
      slots.back()->instance = &kept[i];
      slots.back()->master_only = master_only;
      slots.back()->fence = [](const void* instance) {
        const auto& space = *static_cast<const DeviceSpace*>(instance);
        if constexpr (requires { space.fence(std::string()); }) {
          space.fence("hetero::task_graph device task");
        } else {
          space.fence();
        }
      };
    }
    return std::make_unique<detail::graph_engine>(options, std::move(slots));
  }

  template <class... Extents>
  event_array<sizeof...(Extents)> make_array(std::string name, bool remote, Extents... extents) {
    const auto sizes = detail::event_extents(name, extents...);
    const auto* block = m_engine->make_block(std::move(name), {sizes.begin(), sizes.end()}, remote);
    return event_array<sizeof...(Extents)>(block, sizes);
  }

  std::vector<DeviceSpace> m_devices;  // before m_engine: its slots point here
  std::unique_ptr<detail::graph_engine> m_engine;
};

}  // namespace hetero

#endif  // HETERO_TASK_TASK_GRAPH_HPP

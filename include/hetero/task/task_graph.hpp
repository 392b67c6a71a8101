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

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
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
#include "hetero/task/data.hpp"
#include "hetero/task/detail/data_body.hpp"
#include "hetero/task/detail/data_ops.hpp"
#include "hetero/task/detail/engine.hpp"
#include "hetero/task/detail/spawn.hpp"
#include "hetero/task/event.hpp"
#include "hetero/task/host_or_device.hpp"
#include "hetero/task/options.hpp"
#include "hetero/task/recording.hpp"
#include "hetero/task/statistics.hpp"
#include "hetero/task/subgraph.hpp"

namespace hetero {

/// The index (among its graph's devices) of the device the calling device task runs on; -1
/// outside a device task.
inline int current_device() noexcept { return detail::t_current_device; }

/// Whether the calling thread is running the body of a task.
inline bool inside_task() noexcept { return detail::t_inside_task; }

/// A task graph over the ranks of a communicator, with CPU workers and `DeviceSpace` devices.
/// Constructing it is collective over `options.comm`; so are `remote_events`, `tiles`, `record`
/// and `wait()` (which returns on every rank once every rank's tasks finished).
/// <!-- snippet: fragment
/// std::int64_t nt = 4, k = 0, i = 1;
/// int p = 2;
/// auto potrf = [](std::int64_t) {};
/// auto trsm = [](std::int64_t, std::int64_t) {};
/// -->
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
  /// `priority`, and the task data clauses `reads`, `writes`, `updates`) and the body last,
  /// called as `body()` (CPU task), `body(device_instance)` (device task) or `body(subgraph)` (a
  /// task declaring inner tasks: its `out` events are written once they all finished, see
  /// `hetero::subgraph`); or `hetero::compose(recording)`, a recording of this graph run as one
  /// task; or `hetero::host_or_device(host, device)`, run on the side where it finishes first.
  /// With data clauses the body also receives one View per piece (a span per range), in clause
  /// order, after the device instance for a device body. Every rank declares every task; the
  /// ranks of `on` run it (default: all, or the owner of the tile it writes). May run tasks
  /// itself when `task_options::window` tasks are pending.
  /// <!-- snippet: fragment
  /// hetero::task_graph<Kokkos::OpenMP> graph;
  /// auto a = graph.event("a"), b = graph.event("b"), c = graph.event("c");
  /// Kokkos::View<double**, Kokkos::HostSpace> a_tile("a", 8, 8), b_tile("b", 8, 8), c_tile("c", 8, 8);
  /// Kokkos::View<double*, Kokkos::HostSpace> xv("x", 8), yv("y", 8);
  /// auto x = graph.data("x", xv), y = graph.data("y", yv);
  /// auto step_recording = graph.record([] {});
  /// auto gemm = [](const auto&, const auto&, const auto&) {};
  /// auto kernel = [](const Kokkos::OpenMP&) {};
  /// auto declare_inner = [](hetero::subgraph<Kokkos::OpenMP>&) {};
  /// static constexpr auto axpy = [](const auto&, const auto&) {};
  /// -->
  /// @code
  /// graph.spawn("gemm", hetero::in(a, b), hetero::out(c), [=] { gemm(a_tile, b_tile, c_tile); });
  /// graph.spawn(hetero::device(), hetero::in(c), [=](const Kokkos::OpenMP& space) { kernel(space); });
  /// graph.spawn("block", hetero::out(c), [&](hetero::subgraph<Kokkos::OpenMP>& sg) { declare_inner(sg); });
  /// graph.spawn("step", hetero::inout(c), hetero::compose(step_recording));
  /// graph.spawn("axpy", hetero::reads(x), hetero::updates(y), [](auto x, auto y) { axpy(x, y); });
  /// @endcode
  template <class... Args>
  void spawn(Args&&... args) {
    detail::spawn_task<DeviceSpace>(
        [this]<detail::body_kind Kind, class Data, class Body>(detail::task_spec& spec,
                                                               std::integral_constant<detail::body_kind, Kind>,
                                                               std::type_identity<Data>, Body&& body) {
          // The body is copied before anything is declared, on every rank (also where the task
          // does not run): a copy that throws leaves the graph as it was, on every rank alike.
          if constexpr (Data::size > 0 || Kind == detail::body_kind::either) {
            constexpr int form = Kind == detail::body_kind::cpu ? 0 : Kind == detail::body_kind::device ? 1 : 2;
            auto prepared =
                detail::prepare_data_body<DeviceSpace, form, Data>(spec.data_args, std::forward<Body>(body));
            m_engine->declare(spec, [&](detail::node& n) noexcept { prepared.store(n); });
          } else {
            auto prepared = detail::prepare_task_body<DeviceSpace, Kind>(m_engine->runner(), m_engine.get(),
                                                                         devices(), std::forward<Body>(body));
            if constexpr (Kind == detail::body_kind::composed) m_engine->add_composition(spec, *body.plan());
            m_engine->declare(spec, [&](detail::node& n) noexcept { prepared.store(n); });
          }
        },
        std::forward<Args>(args)...);
  }

  /// Registers `view` as task data of this graph, local to each rank (every rank registers its
  /// own View; tasks on a rank use that rank's). Tasks name it in `reads`, `writes`, `updates`
  /// and get a View of a current copy where they run; after `wait()` the View holds the newest
  /// version. Between graphs (after `wait()`, before the next task) the View is the user's: the
  /// graph's device copies are stale then. The returned handle keeps the registration: destroying
  /// its last copy while tasks use the data is an error `wait()` reports.
  /// <!-- snippet: fragment
  /// hetero::task_graph graph;
  /// std::int64_t n = 64;
  /// -->
  /// @code
  /// Kokkos::View<double*, Kokkos::HostSpace> x("x", n);
  /// auto data = graph.data("x", x);
  /// graph.spawn("scale", hetero::updates(data), [](auto v) { v(0) *= 2; });
  /// @endcode
  template <task_data_view View>
  [[nodiscard]] task_data<View> data(std::string name, View view) {
    auto s = std::make_shared<detail::data_state>();
    s->name = std::move(name);
    s->extents = detail::checked_extents(view, s->name);
    s->bytes = view.span() * sizeof(typename View::value_type);
    s->copies[detail::host_place].ptr = const_cast<void*>(static_cast<const void*>(view.data()));
    s->keep_alive = std::make_shared<View>(std::move(view));
    m_engine->add_data(s);
    auto registration = std::make_shared<detail::data_registration>();
    registration->pieces.push_back(s);
    return task_data<View>(std::move(registration), s.get());
  }

  /// Tiles spread over the ranks, `count` tiles per dimension, each a View of `extents`: rank
  /// `owner_of(i, ...)` owns tile (i, ...) and holds it in `view_of(i, ...)` (called on the owner
  /// only, the first time the tile is named); tasks that write a tile run on its owner (an
  /// on(...) of such a task must name only the owner), and a rank reading a tile it does not own
  /// gets the version its writer made, moved once per version and rank in a graph. Collective:
  /// every rank makes the same tile arrays in the same order (checked). Tiles that move between
  /// ranks have at most 2^31 - 1 bytes, and a graph numbers at most MPI's tag bound of tiles.
  /// <!-- snippet: fragment
  /// hetero::task_graph graph;
  /// std::int64_t nt = 4, b = 64, k = 0;
  /// int p = 2;
  /// using tile = Kokkos::View<double**, Kokkos::HostSpace>;
  /// auto my_tile = [](std::int64_t, std::int64_t) { return tile("t", 64, 64); };
  /// static constexpr auto potrf = [](const auto&) {};
  /// -->
  /// @code
  /// auto L = graph.tiles("L", {nt, nt}, {b, b}, [&](std::int64_t i, std::int64_t) { return int(i % p); },
  ///                      [&](std::int64_t i, std::int64_t k) { return my_tile(i, k); });
  /// graph.spawn("potrf", hetero::updates(L(k, k)), [](auto a) { potrf(a); });
  /// @endcode
  template <std::size_t N, std::size_t R, class OwnerOf, class ViewOf>
  [[nodiscard]] auto tiles(std::string name, const std::int64_t (&count)[N], const std::int64_t (&extents)[R],
                           OwnerOf owner_of, ViewOf view_of) {
    return tiles(std::move(name), count, extents, std::move(owner_of), std::move(view_of), no_peer_view{});
  }

  /// The same, for tiles that ranks of one node can read in each other's memory (a `coarray`'s
  /// storage in host memory, `coarray::local(image)`): `peer_view_of(i, ...)`, called on the
  /// other ranks the first time tile (i, ...) is named, gives the owner's tile as this process
  /// maps it (the memory `view_of` gives on the owner), or an empty View where it does not map
  /// it. Host tasks on a rank of the owner's node then read each version there, in place
  /// (`statistics().moves.pulled`), instead of the owner copying it over: nothing is copied,
  /// and the owner's next write of the tile waits until those tasks finished (as it waits for
  /// its own readers). A device task there copies the version first, then moves it.
  /// <!-- snippet: fragment
  /// hetero::task_graph graph;
  /// std::int64_t nt = 4, b = 64;
  /// -->
  /// @code
  /// const int p = graph.size();  // tile row i on rank i % p, as row i / p of its image of a coarray
  /// hetero::coarray<double, 2, Kokkos::HostSpace> rows({(nt + p - 1) / p, nt * b * b}, graph.mpi_comm());
  /// using tile = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  /// const auto at = [&](const auto& image, std::int64_t i, std::int64_t k) {
  ///   return image.data() ? tile(&image(i / p, k * b * b), b, b) : tile();  // empty: not mapped here
  /// };
  /// auto L = graph.tiles(
  ///     "L", {nt, nt}, {b, b}, [&](std::int64_t i, std::int64_t) { return int(i % p); },
  ///     [&](std::int64_t i, std::int64_t k) { return at(rows.local(), i, k); },
  ///     [&](std::int64_t i, std::int64_t k) { return at(rows.local(int(i % p)), i, k); });
  /// @endcode
  template <std::size_t N, std::size_t R, class OwnerOf, class ViewOf, class PeerViewOf>
  [[nodiscard]] auto tiles(std::string name, const std::int64_t (&count)[N], const std::int64_t (&extents)[R],
                           OwnerOf owner_of, ViewOf view_of, PeerViewOf peer_view_of) {
    using index = std::array<std::int64_t, N>;
    using view_type = std::remove_cvref_t<decltype(std::apply(view_of, index{}))>;
    static_assert(
        task_data_view<view_type>,
        "hetero: tiles(..., view_of) returns the tile as a Kokkos View of contiguous layout (LayoutLeft or "
        "LayoutRight) in host memory");
    static_assert(
        R == view_type::traits::rank,
        "hetero: tiles(name, count, extents, ...) gives as many extents as the tiles' Views have dimensions");
    static_assert(std::is_convertible_v<decltype(std::apply(owner_of, index{})), int>,
                  "hetero: tiles(..., owner_of, ...) returns the owner rank (an int) of tile (i, ...)");
    using array_type = tile_array<view_type, N>;
    auto shared = std::make_shared<typename array_type::shared>();
    shared->name = std::move(name);
    std::uint64_t total = 1;
    std::vector<std::int64_t> shape;
    for (std::size_t d = 0; d < N; ++d) {
      HETERO_EXPECTS(count[d] > 0, "tile array '", shared->name, "' has ", count[d], " tiles in dimension ", d,
                     "; allowed: 1 or more");
      shared->count[d] = count[d];
      total *= static_cast<std::uint64_t>(count[d]);
      shape.push_back(count[d]);
    }
    std::size_t elements = 1;
    for (std::size_t d = 0; d < R; ++d) {
      HETERO_EXPECTS(extents[d] > 0, "tile array '", shared->name, "' has tiles of extent ", extents[d],
                     " in dimension ", d, "; allowed: 1 or more");
      shared->extents[d] = extents[d];
      elements *= static_cast<std::size_t>(extents[d]);
      shape.push_back(extents[d]);
    }
    shared->bytes = elements * sizeof(typename view_type::value_type);
    shape.push_back(static_cast<std::int64_t>(sizeof(typename view_type::value_type)));
    shared->first_id = m_engine->new_tiles(shared->name, total, shared->bytes, std::move(shape),
                                           !std::is_same_v<PeerViewOf, no_peer_view>);
    shared->owner_of = [f = std::move(owner_of)](const index& at) { return static_cast<int>(std::apply(f, at)); };
    shared->view_of = [f = std::move(view_of)](const index& at) { return view_type(std::apply(f, at)); };
    if constexpr (!std::is_same_v<PeerViewOf, no_peer_view>) {
      static_assert(std::is_convertible_v<decltype(std::apply(peer_view_of, index{})), view_type>,
                    "hetero: tiles(..., peer_view_of) returns the same View type as view_of");
      shared->peer_view_of = [f = std::move(peer_view_of)](const index& at) {
        return view_type(std::apply(f, at));
      };
    } else {
      (void)peer_view_of;
    }
    shared->rank = rank();
    shared->ranks = size();
    shared->graph = m_engine.get();
    shared->registry = &m_engine->data();
    shared->alive = m_engine->data().alive();
    shared->declaring = std::this_thread::get_id();
    shared->registration->pieces.resize(static_cast<std::size_t>(total));
    return array_type(std::move(shared));
  }

  /// Runs tasks until the last task writing `data` declared so far finished (on this rank),
  /// then makes the registered View hold its newest version (the read-back of one piece while
  /// the graph goes on). Call it where tasks are declared; for a tile, on its owner
  /// (`invalid_argument` elsewhere).
  template <task_data_view View>
  void wait(const task_data<View>& data) {
    HETERO_EXPECTS(static_cast<bool>(data), "task_graph::wait(data) of an empty task_data");
    m_engine->wait(*data.state());
  }

  /// What the graph's task data moved on this rank, and where tasks with data or with a host and
  /// a device body ran, since the graph was made or `reset_statistics()`.
  [[nodiscard]] task_statistics statistics() const { return m_engine->data().statistics(); }
  /// Starts the statistics again from zero.
  void reset_statistics() { m_engine->data().reset_statistics(); }

  /// Declares, in program order on this rank, that `operation` (a `hetero::mpi_request`, a
  /// `hetero::collective_request` of a non-blocking collective, a `hetero::reflect_handle` of
  /// `hetero::reflect_async`, ...) writes the event of `written`: tasks declared later with it in
  /// `in(...)` start once `operation.test()` returned true. Polled by idle workers; local to this
  /// rank. With more than one worker, an operation whose `test()` calls MPI (hetero's MPI
  /// request, collective, reflect and gmove handles: `completion_source_calls_mpi`) needs
  /// MPI_THREAD_MULTIPLE (`runtime_error` otherwise).
  /// <!-- snippet: fragment
  /// hetero::task_graph graph;
  /// hetero::event halo = graph.event("halo");
  /// hetero::index_space<2> space({64, 64}, hetero::process_grid<2>());
  /// hetero::distributed_array<double, 2> u(space, {.shadow = hetero::shadow_width<2>::uniform(1)});
  /// auto stencil = [](const auto&) {};
  /// -->
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
    // Moved before the node is taken: a move that throws leaves the graph as it was.
    auto source = detail::prepare_source(std::move(operation));
    m_engine->adopt(written.events()[0].state(), label, completion_source_calls_mpi<Operation>,
                    [&](detail::node& n) noexcept { detail::set_source(n, source); });
  }

  /// Runs tasks until every task of every rank finished (XcalableMP's `taskletwait`;
  /// collective). Rethrows the first exception a task of this rank threw (the tasks not
  /// started when it was thrown are skipped, on every rank); raises `hetero::error` on the
  /// other ranks, and `hetero::deadlock_error` on every rank after
  /// `task_options::no_progress_timeout` without progress. Task data: every registered View (and
  /// owned tile) holds its newest version on return, the device copies and the copies of other
  /// ranks' tiles are stale (the next graph moves them again); `invalid_argument` names data
  /// whose handle was destroyed while tasks used it.
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
  struct no_peer_view {};  // tiles() without peer_view_of

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
    std::vector<int> memories;  // the device memories of the instances, numbered from 0
    for (std::size_t i = 0; i < kept.size(); ++i) {
      const int id = detail::device_memory_of(kept[i]);
      auto known = std::find(memories.begin(), memories.end(), id);
      if (known == memories.end()) known = memories.insert(memories.end(), id);
      slots.push_back(std::make_unique<detail::device_slot>());
      slots.back()->index = static_cast<int>(i);
      slots.back()->memory = static_cast<int>(known - memories.begin());
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
    return std::make_unique<detail::graph_engine>(options, std::move(slots), detail::make_data_ops<DeviceSpace>());
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

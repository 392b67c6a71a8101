/// @file
/// `hetero::subgraph`: the inner graph a task declares in its body (a macro-task whose body is
/// a graph of finer tasks, like Taskflow's subflow). The task's `out` events, and its
/// notifications to other ranks, are written once every inner task finished; no worker waits
/// for them: the worker that ran the body goes on with other work, and the inner task finishing
/// last finishes the outer task.
#ifndef HETERO_TASK_SUBGRAPH_HPP
#define HETERO_TASK_SUBGRAPH_HPP

#include <Kokkos_Core.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <exception>
#include <string>
#include <type_traits>
#include <utility>

#include "hetero/core/concepts.hpp"
#include "hetero/core/error.hpp"
#include "hetero/task/clauses.hpp"
#include "hetero/task/compose.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/scheduler.hpp"
#include "hetero/task/detail/spawn.hpp"
#include "hetero/task/detail/subgraph_state.hpp"
#include "hetero/task/event.hpp"

namespace hetero {

namespace detail {

/// Stores `body`, of kind `Kind`, as the body of `n` (a task of a graph or of a subgraph):
/// `runner`, `graph` and `devices` are the graph's, for a subgraph the body declares.
template <class Space, body_kind Kind, class Body>
auto prepare_task_body(scheduler& runner, const void* graph, int devices, Body&& body);

}  // namespace detail

/// The inner graph of one task, handed to a task body that takes `subgraph<Space>&`. Inner
/// tasks order themselves by the subgraph's own events (OpenMP `depend` semantics in the order
/// the body declares them) and may be device tasks or declare subgraphs of their own. The
/// subgraph and its events live until the body returns; declare only from the body.
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// auto a = graph.event("a"), b = graph.event("b");
/// auto first = [] {};
/// auto kernel = [](const auto&) {};
/// -->
/// @code
/// graph.spawn("block", hetero::in(a), hetero::out(b), [&](hetero::subgraph<>& sg) {
///   auto e = sg.event("e");
///   sg.spawn("k1", hetero::out(e), [&] { first(); });
///   sg.spawn("k2", hetero::in(e), hetero::device(), [&](const auto& space) { kernel(space); });
/// });  // tasks reading b start once k1 and k2 finished
/// @endcode
template <execution_space Space = Kokkos::DefaultExecutionSpace>
class subgraph {
 public:
  /// The execution space of inner device tasks (the graph's).
  using device_space = Space;

  /// Wraps a subgraph's state (for the graph).
  explicit subgraph(detail::subgraph_state* state) noexcept : m_state(state) {}
  subgraph(const subgraph&) = delete;
  subgraph& operator=(const subgraph&) = delete;

  /// A new event of this subgraph (inner tasks only may name it).
  [[nodiscard]] hetero::event event(std::string name = "event") {
    return hetero::event(&m_state->make_block(std::move(name), {})->events[0]);
  }
  /// An array of new events of this subgraph (`sg.events("f", 4)`).
  template <std::integral... Extents>
  [[nodiscard]] event_array<sizeof...(Extents)> events(std::string name, Extents... extents) {
    const auto sizes = detail::event_extents(name, extents...);
    return event_array<sizeof...(Extents)>(m_state->make_block(std::move(name), {sizes.begin(), sizes.end()}),
                                           sizes);
  }

  /// Declares an inner task: a label, `in`, `out`, `inout`, `device`, `priority` and the body
  /// last (`body()`, `body(const Space&)` with `device()`, or `body(subgraph<Space>&)` for a
  /// nested subgraph). The clauses may name only this subgraph's events; `on(...)` belongs on
  /// the enclosing task (a compile error here), as does `out(...).to(...)` (`invalid_argument`).
  template <class... Args>
  void spawn(Args&&... args) {
    static_assert(detail::count_clauses<on_clause, Args...> == 0,
                  "hetero: an inner task of a subgraph runs on the rank of its enclosing task; put on(...) on "
                  "the enclosing task's spawn");
    detail::spawn_task<Space>(
        [this]<detail::body_kind Kind, class Data, class Body>(const detail::task_spec& spec,
                                                               std::integral_constant<detail::body_kind, Kind>,
                                                               std::type_identity<Data>, Body&& body) {
          static_assert(
              Kind != detail::body_kind::composed,
              "hetero: compose(recording) is a task of the task_graph, not of a subgraph (the graph orders "
              "the runs of a recording); spawn it on the graph");
          static_assert(
              Data::size == 0 && Kind != detail::body_kind::either,
              "hetero: an inner task of a subgraph takes no data clauses (reads, writes, updates) and no "
              "host_or_device body; give the data clauses to the enclosing task, whose inner tasks then "
              "use its data");
          // Copied before the inner task is declared: a copy that throws leaves the subgraph as it was.
          auto prepared = detail::prepare_task_body<Space, Kind>(m_state->runner(), m_state->graph(),
                                                                 m_state->devices(), std::forward<Body>(body));
          m_state->declare(spec, [&](detail::node& n) noexcept { prepared.store(n); });
        },
        std::forward<Args>(args)...);
  }

 private:
  detail::subgraph_state* m_state;
};

namespace detail {

/// The body of a task that declares a subgraph: runs `body(sg)` with a fresh subgraph, then
/// leaves the task to the last inner task (or finishes it at once when they all finished).
template <class Space, class Body>
struct subgraph_task {
  scheduler* runner;
  const void* graph;
  int devices;
  Body body;

  void operator()(node& self) {
    auto* state = subgraph_state::start(*runner, graph, devices, t_worker, self);
    std::exception_ptr failure;
    const void* enclosing = std::exchange(t_declaring_subgraph, state);
    try {
      subgraph<Space> sg(state);
      body(sg);
    } catch (...) {  // the tasks declared so far still run (or are skipped, the graph being cancelled)
      failure = std::current_exception();
    }
    t_declaring_subgraph = enclosing;
    // Cancelled before the hold is dropped: else the last inner task could finish the owner,
    // and send its notifications uncancelled, before the error is recorded.
    if (failure) runner->cancel();
    if (!state->end_body()) t_finish_deferred = true;  // this body may be gone from here on
    if (failure) std::rethrow_exception(failure);
  }
};

template <class Space, body_kind Kind, class Body>
auto prepare_task_body(scheduler& runner, const void* graph, int devices, Body&& body) {
  if constexpr (Kind == body_kind::cpu) {
    return prepare_body<void>(std::forward<Body>(body));
  } else if constexpr (Kind == body_kind::device) {
    return prepare_body<Space>(std::forward<Body>(body));
  } else if constexpr (Kind == body_kind::subgraph) {
    return prepare_node_body(
        subgraph_task<Space, std::decay_t<Body>>{&runner, graph, devices, std::forward<Body>(body)});
  } else {
    return prepare_node_body(composed_task{&runner, body.plan()});
  }
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_TASK_SUBGRAPH_HPP

/// @file
/// What `task_graph::spawn` and `subgraph::spawn` share: the clauses before the body are
/// collected into a `task_spec`, and the body is classified (a CPU task, a device task, a task
/// declaring a subgraph, a composed recording), with the compile-time errors a wrong body gets.
#ifndef HETERO_TASK_DETAIL_SPAWN_HPP
#define HETERO_TASK_DETAIL_SPAWN_HPP

#include <concepts>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hetero/core/concepts.hpp"
#include "hetero/core/error.hpp"
#include "hetero/task/clauses.hpp"
#include "hetero/task/detail/tracker.hpp"

namespace hetero {

template <execution_space Space>
class subgraph;
class composed_recording;

namespace detail {

/// What a task's body is.
enum class body_kind {
  cpu,       ///< `body()`
  device,    ///< `body(const Space&)`, with `device()` among the clauses
  subgraph,  ///< `body(subgraph<Space>&)`: declares inner tasks
  composed   ///< `compose(recording)`: runs a recording
};

/// The kind of a body of type `Body` for a graph whose devices are `Space` (`device`: the
/// clauses hold `device()`).
template <class Space, class Body, bool device>
consteval body_kind classify_body() {
  if constexpr (std::same_as<Body, composed_recording>) {
    static_assert(!device,
                  "hetero: compose(recording) runs the recording's own tasks (device tasks among them); "
                  "remove device() from its spawn");
    return body_kind::composed;
  } else if constexpr (device) {
    static_assert(!std::invocable<Body&, subgraph<Space>&> || std::invocable<Body&, const Space&>,
                  "hetero: a task whose body takes a subgraph runs on the CPU; remove device() from its spawn and "
                  "give its inner tasks device() instead");
    static_assert(std::invocable<Body&, const Space&>,
                  "hetero: a device task's body takes the device instance: [=](const Space& space) { ... }");
    return body_kind::device;
  } else if constexpr (std::invocable<Body&>) {
    return body_kind::cpu;
  } else {
    static_assert(std::invocable<Body&, subgraph<Space>&>,
                  "hetero: a task's body takes no argument, or a hetero::subgraph<Space>& to declare inner tasks; "
                  "add hetero::device() for a device task whose body takes the device instance");
    return body_kind::subgraph;
  }
}

inline void collect(task_spec& spec, const on_clause& c) {
  HETERO_EXPECTS(!spec.on, "spawn has two on(...) clauses; give one rank set");
  spec.on = &c.ranks;
}
inline void collect(task_spec& spec, const priority_clause& c) { spec.priority = c.value; }
inline void collect(task_spec& spec, const device_clause& c) {
  spec.device = true;
  spec.pinned = c.pinned;
}
template <event_access Mode, std::size_t N>
void collect(task_spec& spec, const access_clause<Mode, N>& c) {
  for (const hetero::event& e : c.events()) spec.add({e.state(), Mode, c.targets()});
}
template <class Label>
requires label_like<Label>
void collect(task_spec& spec, const Label& label) { spec.label = std::string_view(label); }
template <class Other>
requires(!task_clause<Other>) void collect(task_spec&, const Other&) {
  static_assert(task_clause<Other>,
                "hetero: spawn's arguments before the body are a label, on(...), in(...), out(...), inout(...), "
                "device(...) or priority(...)");
}

/// Collects the clauses of `args` (all but the last) and calls `declare(spec, kind, body)`,
/// with `kind` a `std::integral_constant<body_kind, ...>` and `body` the last argument.
template <class Space, class Declare, class... Args>
void spawn_task(Declare&& declare, Args&&... args) {
  static_assert(sizeof...(Args) >= 1, "hetero: spawn needs a task body (a callable) as its last argument");
  constexpr std::size_t clauses = sizeof...(Args) - 1;
  using body_arg = std::tuple_element_t<clauses, std::tuple<Args&&...>>;
  using body_type = std::remove_cvref_t<body_arg>;
  auto all = std::forward_as_tuple(std::forward<Args>(args)...);
  constexpr bool is_device = []<std::size_t... I>(std::index_sequence<I...>) {
    return (std::same_as<std::remove_cvref_t<std::tuple_element_t<I, std::tuple<Args...>>>, device_clause> || ...);
  }
  (std::make_index_sequence<clauses>{});
  constexpr body_kind kind = classify_body<Space, body_type, is_device>();
  task_spec spec;
  [&]<std::size_t... I>(std::index_sequence<I...>) { (collect(spec, std::get<I>(all)), ...); }
  (std::make_index_sequence<clauses>{});
  std::forward<Declare>(declare)(spec, std::integral_constant<body_kind, kind>{},
                                 static_cast<body_arg>(std::get<clauses>(all)));
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_TASK_DETAIL_SPAWN_HPP

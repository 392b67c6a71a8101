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
#include "hetero/task/data.hpp"
#include "hetero/task/detail/tracker.hpp"
#include "hetero/task/host_or_device.hpp"

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
  composed,  ///< `compose(recording)`: runs a recording
  either     ///< `host_or_device(host, device)`: the scheduler picks the side
};

/// Whether `F` can be called with `Front...` followed by the elements of the tuple `Views`.
template <class F, class Views, class... Front>
struct invocable_with;
template <class F, class... V, class... Front>
struct invocable_with<F, std::tuple<V...>, Front...> : std::bool_constant<std::invocable<F, Front..., V...>> {};

/// The kind of a body of type `Body` for a graph whose devices are `Space` (`device`: the
/// clauses hold `device()`), receiving the task data `Args` (a `data_args`).
template <class Space, class Body, bool device, class Args = data_args<>>
consteval body_kind classify_body() {
  using host_views = typename body_views<Kokkos::HostSpace, Args>::type;
  using device_views = typename body_views<typename Space::memory_space, Args>::type;
  constexpr bool has_data = Args::size > 0;
  if constexpr (std::same_as<Body, composed_recording>) {
    static_assert(!device,
                  "hetero: compose(recording) runs the recording's own tasks (device tasks among them); "
                  "remove device() from its spawn");
    static_assert(!has_data,
                  "hetero: compose(recording) takes no data clauses (reads, writes, updates); give them to the "
                  "recording's tasks");
    return body_kind::composed;
  } else if constexpr (is_host_or_device<Body>::value) {
    static_assert(
        !device,
        "hetero: host_or_device(host, device) lets the graph pick the side; remove device(), or spawn the "
        "device body alone with device() to force the device");
    static_assert(invocable_with<decltype(std::declval<Body&>().host)&, host_views>::value,
                  "hetero: the host body of host_or_device takes the task's data Views in clause order "
                  "([](auto a, auto b) { ... }, none without data clauses)");
    static_assert(
        invocable_with<decltype(std::declval<Body&>().device)&, device_views, const Space&>::value,
        "hetero: the device body of host_or_device takes the device instance, then the task's data Views "
        "in clause order ([](const auto& space, auto a, auto b) { ... })");
    return body_kind::either;
  } else if constexpr (device) {
    static_assert(!std::invocable<Body&, subgraph<Space>&> || std::invocable<Body&, const Space&> || has_data,
                  "hetero: a task whose body takes a subgraph runs on the CPU; remove device() from its spawn and "
                  "give its inner tasks device() instead");
    static_assert(
        invocable_with<Body&, device_views, const Space&>::value,
        "hetero: a device task's body takes the device instance, then one View per piece of task data in "
        "clause order: [=](const Space& space, auto... views) { ... }");
    return body_kind::device;
  } else if constexpr (has_data) {
    static_assert(invocable_with<Body&, host_views>::value,
                  "hetero: a task with data clauses (reads, writes, updates) takes one View per piece of data, in "
                  "clause order: [](auto a, auto b) { ... }; a task body that takes a subgraph cannot have data "
                  "clauses");
    return body_kind::cpu;
  } else if constexpr (std::invocable<Body&>) {
    return body_kind::cpu;
  } else {
    static_assert(std::invocable<Body&, subgraph<Space>&>,
                  "hetero: a task's body takes no argument, or a hetero::subgraph<Space>& to declare inner tasks; "
                  "add hetero::device() for a device task whose body takes the device instance");
    return body_kind::subgraph;
  }
}

inline void collect(task_spec& spec, const on_clause& c) { spec.on = &c.ranks; }  // one: check_clause_counts
inline void collect(task_spec& spec, const priority_clause& c) { spec.priority = c.value; }
inline void collect(task_spec& spec, const device_clause& c) {
  spec.device = true;
  spec.pinned = c.pinned;
}
template <event_access Mode, std::size_t N>
void collect(task_spec& spec, const access_clause<Mode, N>& c) {
  for (const hetero::event& e : c.events())
    spec.add({e.state(), Mode, c.targets(), nullptr, data_mode::read, c.reads_too()});
}
template <data_mode Mode>
void collect_piece(task_spec& spec, data_state* p) {
  if (!p)
    raise<invalid_argument>(
        "a data clause (reads, writes, updates) names an empty task_data; register data with graph.data(...) or "
        "graph.tiles(...)");
  spec.add({p->event(), Mode == data_mode::read ? event_access::read : event_access::write, nullptr, p, Mode});
}
template <data_mode Mode, class... Views>
void collect(task_spec& spec, const data_clause<Mode, Views...>& c) {
  for (data_state* p : c.pieces()) {
    collect_piece<Mode>(spec, p);
    spec.data_args[spec.data_arg_count++] = 1;
  }
}
template <data_mode Mode, class View>
void collect(task_spec& spec, const data_range_clause<Mode, View>& c) {
  for (data_state* p : c.pieces()) collect_piece<Mode>(spec, p);
  spec.data_args[spec.data_arg_count++] = static_cast<std::uint32_t>(c.pieces().size());
}
template <class Label>
requires label_like<Label>
void collect(task_spec& spec, const Label& label) { spec.label = std::string_view(label); }
template <class Other>
requires(!task_clause<Other> && !is_data_clause<Other>::value) void collect(task_spec&, const Other&) {
  static_assert(task_clause<Other>,
                "hetero: spawn's arguments before the body are a label, on(...), in(...), out(...), inout(...), "
                "device(...), priority(...), reads(...), writes(...) or updates(...)");
}

/// The data a body receives from the first clauses of `Args` (those of `Seq`).
template <class Seq, class... Args>
struct clause_args;
template <std::size_t... I, class... Args>
struct clause_args<std::index_sequence<I...>, Args...> {
  using type = data_args_of<std::tuple_element_t<I, std::tuple<Args...>>...>;
};

/// How many of the clause types `Clauses` are `Clause` (`label_like`: labels).
template <class Clause, class... Clauses>
inline constexpr std::size_t count_clauses = (std::size_t{0} + ... +
                                              std::size_t{std::same_as<std::remove_cvref_t<Clauses>, Clause>});
template <class... Clauses>
inline constexpr std::size_t count_labels = (std::size_t{0} + ... +
                                             std::size_t{label_like<std::remove_cvref_t<Clauses>>});

/// The clause mistakes the types show, refused at compile time: a second label, on(...),
/// device(...) or priority(...) would replace or contradict the first.
template <class... Clauses>
consteval void check_clause_counts() {
  static_assert(count_labels<Clauses...> <= 1,
                "hetero: a task has one label; a second one would replace the first (write the label once, "
                "first)");
  static_assert(count_clauses<on_clause, Clauses...> <= 1,
                "hetero: a task has one on(...) clause; give every rank in it: on(rank_set{...}) or "
                "on(owners(...))");
  static_assert(count_clauses<device_clause, Clauses...> <= 1,
                "hetero: a task has one device(...) clause; device() for any device, device(d) to pin one");
  static_assert(count_clauses<priority_clause, Clauses...> <= 1,
                "hetero: a task has one priority(...) clause; the second would replace the first");
}

/// check_clause_counts on the clause types of `Args` (those of the indices `I`: all but the body).
template <std::size_t... I, class... Args>
consteval void check_clauses(std::index_sequence<I...>, std::type_identity<std::tuple<Args...>>) {
  check_clause_counts<std::tuple_element_t<I, std::tuple<Args...>>...>();
}

/// Collects the clauses of `args` (all but the last) and calls `declare(spec, kind, args, body)`,
/// with `kind` a `std::integral_constant<body_kind, ...>`, `args` a `std::type_identity` of the
/// `data_args` the body receives and `body` the last argument.
template <class Space, class Declare, class... Args>
void spawn_task(Declare&& declare, Args&&... args) {
  static_assert(sizeof...(Args) >= 1, "hetero: spawn needs a task body (a callable) as its last argument");
  constexpr std::size_t clauses = sizeof...(Args) - 1;
  using body_arg = std::tuple_element_t<clauses, std::tuple<Args&&...>>;
  using body_type = std::remove_cvref_t<body_arg>;
  check_clauses(std::make_index_sequence<clauses>{}, std::type_identity<std::tuple<Args...>>{});
  auto all = std::forward_as_tuple(std::forward<Args>(args)...);
  constexpr bool is_device = []<std::size_t... I>(std::index_sequence<I...>) {
    return (std::same_as<std::remove_cvref_t<std::tuple_element_t<I, std::tuple<Args...>>>, device_clause> || ...);
  }
  (std::make_index_sequence<clauses>{});
  using data = typename clause_args<std::make_index_sequence<clauses>, Args...>::type;
  static_assert(
      data::size <= 16,
      "hetero: a task takes at most 16 pieces or ranges of task data; pass a range (reads(vector)) for more");
  constexpr body_kind kind = classify_body<Space, body_type, is_device, data>();
  task_spec spec;
  [&]<std::size_t... I>(std::index_sequence<I...>) { (collect(spec, std::get<I>(all)), ...); }
  (std::make_index_sequence<clauses>{});
  spec.either = kind == body_kind::either;
  std::forward<Declare>(declare)(spec, std::integral_constant<body_kind, kind>{}, std::type_identity<data>{},
                                 static_cast<body_arg>(std::get<clauses>(all)));
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_TASK_DETAIL_SPAWN_HPP

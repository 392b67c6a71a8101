/// @file
/// The clauses of a tasklet, as in XcalableMP's `#pragma xmp tasklet in(...) out(...:ranks) on
/// ranks`: `hetero::in`, `hetero::out` (with `.to(ranks)` for remote notification),
/// `hetero::inout`, `hetero::on` and `hetero::device`.
#ifndef HETERO_TASK_CLAUSES_HPP
#define HETERO_TASK_CLAUSES_HPP

#include <array>
#include <concepts>
#include <cstddef>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/task/detail/node.hpp"
#include "hetero/task/event.hpp"
#include "hetero/task/rank_set.hpp"

namespace hetero {

namespace detail {
/// Marks a write clause as one that reads too (`inout`).
struct reads_too_marker {
  template <class Clause>
  static Clause mark(Clause clause) {
    clause.m_reads_too = true;
    return clause;
  }
};
}  // namespace detail

/// Events a task reads (`Mode` read) or writes (`Mode` write), `N` of them, or a run-time
/// number of them when `N` is `std::dynamic_extent`. Made by `in`, `out` and `inout`.
template <detail::event_access Mode, std::size_t N>
class access_clause {
  using storage = std::conditional_t<N == std::dynamic_extent, std::vector<event>, std::array<event, N>>;

 public:
  /// A clause of `events` (made by `in`, `out` and `inout`).
  explicit access_clause(storage events) : m_events(std::move(events)) {}

  /// out only: when the task finishes, `ranks` (except the running rank) are notified over MPI,
  /// and their tasks with the event in `in(...)` may start (XcalableMP's `out(EA:[ranks])`). The
  /// events must be remote-capable (`remote_events`).
  [[nodiscard]] access_clause to(rank_set ranks) const& requires(Mode == detail::event_access::write) {
    access_clause c = *this;
    c.m_targets = std::move(ranks);
    return c;
  }
  /// The same, on a temporary clause (`out(e).to(ranks)`).
  [[nodiscard]] access_clause to(rank_set ranks) && requires(Mode == detail::event_access::write) {
    m_targets = std::move(ranks);
    return std::move(*this);
  }

  /// The events of the clause.
  [[nodiscard]] std::span<const event> events() const noexcept { return {m_events.data(), m_events.size()}; }
  /// The ranks to notify, or nullptr.
  [[nodiscard]] const rank_set* targets() const noexcept { return m_targets ? &*m_targets : nullptr; }
  /// Whether the task also reads what the events' last writer made (`inout`): the same
  /// dependencies as `out`, and the same check as `in` that a remote writer notifies this rank.
  [[nodiscard]] bool reads_too() const noexcept { return m_reads_too; }
  static constexpr detail::event_access mode = Mode;  ///< Whether the task reads or writes the events.

 private:
  friend struct detail::reads_too_marker;

  storage m_events;
  std::optional<rank_set> m_targets;
  bool m_reads_too = false;
};

/// A range of events (for `in(range)`, `out(range)`).
template <class R>
concept event_range = std::ranges::input_range<R> && std::convertible_to<std::ranges::range_value_t<R>, event>;

/// The task reads these events: it starts after the last task that wrote each of them (flow
/// dependency), or after the notification of a remote write addressed to this rank.
template <std::same_as<event>... Events>
[[nodiscard]] access_clause<detail::event_access::read, sizeof...(Events)> in(const Events&... events) {
  return access_clause<detail::event_access::read, sizeof...(Events)>({events...});
}
/// The task reads every event of `events`.
template <event_range R>
[[nodiscard]] access_clause<detail::event_access::read, std::dynamic_extent> in(const R& events) {
  return access_clause<detail::event_access::read, std::dynamic_extent>(
      std::vector<event>(events.begin(), events.end()));
}

/// The task writes these events: it starts after the last writer (output dependency) and every
/// reader since (anti dependency), and tasks declared later that read them wait for it.
template <std::same_as<event>... Events>
[[nodiscard]] access_clause<detail::event_access::write, sizeof...(Events)> out(const Events&... events) {
  return access_clause<detail::event_access::write, sizeof...(Events)>({events...});
}
/// The task writes every event of `events`.
template <event_range R>
[[nodiscard]] access_clause<detail::event_access::write, std::dynamic_extent> out(const R& events) {
  return access_clause<detail::event_access::write, std::dynamic_extent>(
      std::vector<event>(events.begin(), events.end()));
}

/// Reads and writes: the same dependencies as `out` (as in OpenMP).
template <class... Args>
[[nodiscard]] auto inout(const Args&... args) -> decltype(out(args...)) {
  return detail::reads_too_marker::mark(out(args...));
}

/// The ranks that run the task (XcalableMP's `on`); without it, every rank runs it.
struct on_clause {
  rank_set ranks;  ///< The ranks that run the task.
};
/// The task runs on the ranks of `ranks` (a rank, a list, `hetero::owners(...)`, ...).
[[nodiscard]] inline on_clause on(rank_set ranks) { return {std::move(ranks)}; }

/// The task is a device task (the macro-task scheduling of StarPU-like runtimes): it goes to
/// the device queue and its body is called with the device execution space instance. `pinned`
/// picks one of the graph's devices (its data stays there); -1 lets any idle device run it.
struct device_clause {
  int pinned = -1;  ///< The index of the graph's device that runs the task; -1: any idle device.
};
/// A device task for any idle device.
[[nodiscard]] inline device_clause device() { return {}; }
/// A device task pinned to device `index` of the graph.
[[nodiscard]] inline device_clause device(int index) { return {index}; }

/// A scheduling hint. Ready tasks with a priority above 0 wait in one queue shared by the
/// workers and are taken before the ordinary ones (0 or below: the workers' own work-stealing
/// deques): the highest priority first and, within a priority, in declaration order, the
/// order a serial run reaches them. A finishing task continues with a successor it released
/// only if no queued task goes before it. Giving every task of a graph `priority(1)` runs the
/// ready tasks oldest first, close to the serial order, which keeps the critical path
/// of a factorisation moving (the Cholesky example); a higher value puts a task ahead of the
/// rest. The shared queue costs a lock per task: graphs of very short tasks are faster without.
struct priority_clause {
  int value = 0;  ///< The priority: above 0, queued by priority before the ordinary tasks; 0 or below, ordinary.
};
/// The task's priority (above 0: queued by priority, then declaration order, before the
/// ordinary tasks).
[[nodiscard]] inline priority_clause priority(int value) { return {value}; }

namespace detail {

template <class T>
struct is_access_clause : std::false_type {};
template <event_access Mode, std::size_t N>
struct is_access_clause<access_clause<Mode, N>> : std::true_type {};

/// A task's label: anything a `std::string_view` can be made of.
template <class T>
concept label_like = std::convertible_to<const T&, std::string_view>;

}  // namespace detail

/// What may precede the body in `task_graph::spawn`: a label, `on`, `in`, `out`, `inout`,
/// `device`, `priority`.
template <class T>
concept task_clause = detail::is_access_clause<std::remove_cvref_t<T>>::value ||
    std::same_as<std::remove_cvref_t<T>, on_clause> || std::same_as<std::remove_cvref_t<T>, device_clause> ||
    std::same_as<std::remove_cvref_t<T>, priority_clause> || detail::label_like<std::remove_cvref_t<T>>;

}  // namespace hetero

#endif  // HETERO_TASK_CLAUSES_HPP

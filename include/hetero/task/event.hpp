/// @file
/// `hetero::event` and `hetero::event_array`: the dependency tokens of a task graph (XcalableMP's
/// `xmp_event_t`). Events are created by a graph (`graph.event("EB")`,
/// `graph.events("EC", nt)`, collectively `graph.remote_events("EA", nt, nt)`) and live as long
/// as it; these handles are cheap to copy.
#ifndef HETERO_TASK_EVENT_HPP
#define HETERO_TASK_EVENT_HPP

#include <array>
#include <compare>
#include <concepts>
#include <cstddef>
#include <iterator>
#include <string>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/task/detail/event_state.hpp"

namespace hetero {

/// One event of a task graph: tasks name it in `in(...)` and `out(...)` clauses.
/// A default-constructed event is null and refused by every clause.
class event {
 public:
  event() = default;
  /// "EA[2][3]": the name given at creation and the indices in its array.
  [[nodiscard]] std::string name() const { return m_state ? m_state->name() : "(null event)"; }
  /// Whether `out(...).to(...)` may notify remote ranks of writes of this event (created with
  /// `remote_events`).
  [[nodiscard]] bool remote_capable() const noexcept { return m_state && m_state->remote_capable(); }
  /// Whether the event is not null.
  explicit operator bool() const noexcept { return m_state != nullptr; }
  /// Equal when both are the same event of the same graph, or both are null.
  friend bool operator==(const event&, const event&) = default;

  /// The internal state (for the graph).
  [[nodiscard]] detail::event_state* state() const noexcept { return m_state; }
  /// Wraps an internal state (for the graph).
  explicit event(detail::event_state* state) noexcept : m_state(state) {}

 private:
  detail::event_state* m_state = nullptr;
};

/// Events in an array of `Rank` dimensions (one per tile, as XcalableMP's `EA[nt][nt]`),
/// indexed with `operator()`; out-of-range indices throw `hetero::invalid_argument`. A random
/// access range of its events in row-major order, so `in(EA)` and `out(EA)` name them all.
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// std::int64_t nt = 4, k = 0;
/// auto potrf = [] {};
/// -->
/// @code
/// auto EA = graph.remote_events("EA", nt, nt);
/// graph.spawn(hetero::out(EA(k, k)), potrf);
/// @endcode
template <std::size_t Rank>
class event_array {
  static_assert(Rank >= 1, "hetero: an event_array has at least one dimension");

 public:
  event_array() = default;

  /// The event at `indices` (one per dimension).
  template <std::integral... Index>
  requires(sizeof...(Index) == Rank) [[nodiscard]] event operator()(Index... indices) const {
    const std::array<long long, Rank> at{static_cast<long long>(indices)...};
    std::size_t linear = 0;
    for (std::size_t d = 0; d < Rank; ++d) {
      if (at[d] < 0 || static_cast<std::size_t>(at[d]) >= m_extents[d])
        detail::raise<invalid_argument>("event index ", at[d], " in dimension ", d, " of event array '",
                                        m_block ? m_block->name : std::string("(null)"),
                                        "' is out of range; allowed: 0 to ",
                                        static_cast<long long>(m_extents[d]) - 1);
      linear = linear * m_extents[d] + static_cast<std::size_t>(at[d]);
    }
    return event(&m_block->events[linear]);
  }

  /// The number of events along dimension `d`.
  [[nodiscard]] std::size_t extent(std::size_t d) const noexcept { return d < Rank ? m_extents[d] : 0; }
  /// The number of events.
  [[nodiscard]] std::size_t size() const noexcept { return m_block ? m_block->count : 0; }
  /// Whether the events may notify remote ranks (created with `remote_events`).
  [[nodiscard]] bool remote_capable() const noexcept { return m_block && m_block->remote; }
  /// The name given at creation.
  [[nodiscard]] std::string name() const { return m_block ? m_block->name : std::string(); }

  /// Visits the events in row-major order (the last index fastest): `for (hetero::event e : EA)`,
  /// `in(EA)`, `out(EA)`, and every algorithm of `<ranges>`.
  class iterator {
   public:
    using iterator_concept = std::random_access_iterator_tag;   ///< A random access iterator.
    using iterator_category = std::random_access_iterator_tag;  ///< A random access iterator.
    using value_type = event;                                   ///< The element type.
    using difference_type = std::ptrdiff_t;                     ///< A distance between iterators.
    using reference = event;  ///< What dereferencing gives: an event handle, by value.

    iterator() = default;
    /// The event at this position.
    [[nodiscard]] event operator*() const noexcept { return event(&m_block->events[m_index]); }
    /// The event `k` positions further.
    [[nodiscard]] event operator[](difference_type k) const noexcept { return *(*this + k); }
    /// Moves to the next event.
    iterator& operator++() noexcept { return *this += 1; }
    /// Moves to the next event; returns the old position.
    iterator operator++(int) noexcept { return std::exchange(*this, *this + 1); }
    /// Moves to the previous event.
    iterator& operator--() noexcept { return *this -= 1; }
    /// Moves to the previous event; returns the old position.
    iterator operator--(int) noexcept { return std::exchange(*this, *this - 1); }
    /// Moves `k` events forward (backward when negative).
    iterator& operator+=(difference_type k) noexcept {
      m_index = static_cast<std::size_t>(static_cast<difference_type>(m_index) + k);
      return *this;
    }
    /// Moves `k` events backward (forward when negative).
    iterator& operator-=(difference_type k) noexcept { return *this += -k; }
    /// The position `k` events after `i`.
    [[nodiscard]] friend iterator operator+(iterator i, difference_type k) noexcept { return i += k; }
    /// The position `k` events after `i`.
    [[nodiscard]] friend iterator operator+(difference_type k, iterator i) noexcept { return i += k; }
    /// The position `k` events before `i`.
    [[nodiscard]] friend iterator operator-(iterator i, difference_type k) noexcept { return i -= k; }
    /// The number of events from `b` to `a`.
    [[nodiscard]] friend difference_type operator-(const iterator& a, const iterator& b) noexcept {
      return static_cast<difference_type>(a.m_index) - static_cast<difference_type>(b.m_index);
    }
    /// Equal when both are at the same position (of the same array).
    [[nodiscard]] friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.m_index == b.m_index;
    }
    /// Orders by position (of iterators of the same array).
    [[nodiscard]] friend auto operator<=>(const iterator& a, const iterator& b) noexcept {
      return a.m_index <=> b.m_index;
    }

   private:
    friend class event_array;
    iterator(const detail::event_block* block, std::size_t index) noexcept : m_block(block), m_index(index) {}
    const detail::event_block* m_block = nullptr;
    std::size_t m_index = 0;
  };

  /// The first event (row-major order).
  [[nodiscard]] iterator begin() const noexcept { return {m_block, 0}; }
  /// One past the last event.
  [[nodiscard]] iterator end() const noexcept { return {m_block, size()}; }

  /// Wraps a block of events (for the graph).
  event_array(const detail::event_block* block, const std::array<std::size_t, Rank>& extents) noexcept
      : m_block(block), m_extents(extents) {}

 private:
  const detail::event_block* m_block = nullptr;
  std::array<std::size_t, Rank> m_extents{};
};

}  // namespace hetero

#endif  // HETERO_TASK_EVENT_HPP

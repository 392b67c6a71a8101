/// @file
/// `hetero::rank_set`: the ranks a tasklet runs on (`on`) or notifies (`out(...).to`), and
/// `hetero::owners`, the ranks owning a range of a distributed index space (XcalableMP's
/// `on T(k+1:)`).
#ifndef HETERO_TASK_RANK_SET_HPP
#define HETERO_TASK_RANK_SET_HPP

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <ranges>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero {

/// A set of ranks of a task graph's communicator: every rank, or a list of ranks. Cheap to
/// build from one rank, a list or `hetero::owners(...)`; "every rank" allocates nothing.
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// auto EA = graph.remote_events("EA", 2, 2);
/// auto body = [] {};
/// -->
/// @code
/// graph.spawn(hetero::on(0), hetero::out(EA(0, 0)).to(hetero::rank_set{1, 2}), body);
/// @endcode
class rank_set {
 public:
  /// The empty set (a tasklet on no rank is declared but runs nowhere).
  rank_set() = default;
  /// The set of one rank.
  rank_set(int rank) : m_ranks{rank} {}  // NOLINT(google-explicit-constructor): on(3) reads naturally
  /// The listed ranks (duplicates are merged).
  rank_set(std::initializer_list<int> ranks) : m_ranks(ranks) { normalize(); }
  /// The ranks of any range of integers (duplicates are merged).
  template <std::ranges::input_range Range>
  requires std::convertible_to < std::ranges::range_value_t<Range>,
  int > explicit rank_set(const Range& ranks) {
    for (auto r : ranks) m_ranks.push_back(static_cast<int>(r));
    normalize();
  }

  /// Every rank of the communicator, whatever its size.
  static rank_set all() {
    rank_set s;
    s.m_all = true;
    return s;
  }
  /// The ranks first, first + 1, ..., last - 1 (empty when last <= first).
  static rank_set range(int first, int last) {
    rank_set s;
    for (int r = first; r < last; ++r) s.m_ranks.push_back(r);
    return s;
  }

  /// Whether this is "every rank".
  [[nodiscard]] bool is_all() const noexcept { return m_all; }
  /// Whether no rank is in the set (never true for `all()`).
  [[nodiscard]] bool empty() const noexcept { return !m_all && m_ranks.empty(); }
  /// Whether `rank` is in the set.
  [[nodiscard]] bool contains(int rank) const noexcept {
    return m_all || std::binary_search(m_ranks.begin(), m_ranks.end(), rank);
  }
  /// The number of ranks in the set on a communicator of `world` ranks.
  [[nodiscard]] int size(int world) const noexcept { return m_all ? world : static_cast<int>(m_ranks.size()); }
  /// The set without `rank`.
  [[nodiscard]] rank_set without(int rank, int world) const {
    rank_set s;
    for_each(world, [&](int r) {
      if (r != rank) s.m_ranks.push_back(r);
    });
    return s;
  }
  /// The listed ranks in increasing order (empty for `all()`: use `for_each`).
  [[nodiscard]] const std::vector<int>& listed() const noexcept { return m_ranks; }

  /// Calls `f(rank)` for every rank of the set, in increasing order.
  template <class F>
  void for_each(int world, F&& f) const {
    if (m_all) {
      for (int r = 0; r < world; ++r) f(r);
    } else {
      for (int r : m_ranks) f(r);
    }
  }

  /// Throws `hetero::invalid_argument` naming `what` when a rank is outside [0, world).
  void check(int world, const char* what) const {
    if (m_all || m_ranks.empty()) return;
    if (m_ranks.front() < 0 || m_ranks.back() >= world)
      detail::raise<invalid_argument>(what, " names rank ", m_ranks.front() < 0 ? m_ranks.front() : m_ranks.back(),
                                      " but the task graph's communicator has ", world, " rank(s); allowed: 0 to ",
                                      world - 1);
  }

  /// "all ranks", "{}" or "{0, 2, 5}".
  [[nodiscard]] std::string to_string() const {
    if (m_all) return "all ranks";
    std::ostringstream out;
    out << '{';
    for (std::size_t i = 0; i < m_ranks.size(); ++i) out << (i ? ", " : "") << m_ranks[i];
    out << '}';
    return out.str();
  }

  /// Equal when both are "all ranks", or both list the same ranks.
  friend bool operator==(const rank_set&, const rank_set&) = default;

 private:
  void normalize() {
    std::sort(m_ranks.begin(), m_ranks.end());
    m_ranks.erase(std::unique(m_ranks.begin(), m_ranks.end()), m_ranks.end());
  }

  bool m_all = false;
  std::vector<int> m_ranks;  // sorted, unique
};

/// Something that says which rank owns a global index: a callable `int(std::int64_t)` or an
/// object with `owner_of(i)` (a distribution of the distributed-array module).
template <class Owner>
concept rank_owner = std::invocable<const Owner&, std::int64_t> || requires(const Owner& o, std::int64_t i) {
  { o.owner_of(i) } -> std::convertible_to<int>;
};

/// The ranks owning at least one index of [first, last) under `owner` (XcalableMP's
/// `T(k+1:)`): e.g. the ranks holding tile columns k+1 ... nt-1 of a cyclic distribution.
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// std::int64_t nt = 4, k = 0;
/// int p = 2;
/// auto EA = graph.remote_events("EA", nt, nt);
/// auto potrf = [] {};
/// -->
/// @code
/// auto cyclic = [p](std::int64_t i) { return static_cast<int>(i % p); };
/// graph.spawn(hetero::on(cyclic(k)), hetero::out(EA(k, k)).to(hetero::owners(cyclic, k + 1, nt)), potrf);
/// @endcode
template <rank_owner Owner>
rank_set owners(const Owner& owner, std::int64_t first, std::int64_t last) {
  std::vector<int> ranks;
  for (std::int64_t i = first; i < last; ++i) {
    if constexpr (std::invocable<const Owner&, std::int64_t>) {
      ranks.push_back(static_cast<int>(owner(i)));
    } else {
      ranks.push_back(static_cast<int>(owner.owner_of(i)));
    }
  }
  return rank_set(ranks);
}

}  // namespace hetero

#endif  // HETERO_TASK_RANK_SET_HPP

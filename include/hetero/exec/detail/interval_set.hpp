/// @file
/// A set of row ranges [lo, hi): which rows of one side of a mirrored array hold current data.
#ifndef HETERO_EXEC_DETAIL_INTERVAL_SET_HPP
#define HETERO_EXEC_DETAIL_INTERVAL_SET_HPP

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace hetero::detail {

/// Disjoint, sorted, non-adjacent half-open ranges of rows.
class interval_set {
 public:
  using range = std::pair<std::int64_t, std::int64_t>;

  /// Adds [lo, hi), merging with touching or overlapping ranges.
  void add(std::int64_t lo, std::int64_t hi) {
    if (lo >= hi) return;
    std::vector<range> out;
    out.reserve(m_ranges.size() + 1);
    bool placed = false;
    for (const auto& [a, b] : m_ranges) {
      if (b < lo) {
        out.emplace_back(a, b);
      } else if (hi < a) {
        if (!placed) out.emplace_back(lo, hi);
        placed = true;
        out.emplace_back(a, b);
      } else {  // overlapping or touching: absorb into [lo, hi)
        lo = std::min(lo, a);
        hi = std::max(hi, b);
      }
    }
    if (!placed) out.emplace_back(lo, hi);
    m_ranges = std::move(out);
  }

  /// Removes [lo, hi).
  void remove(std::int64_t lo, std::int64_t hi) {
    if (lo >= hi) return;
    std::vector<range> out;
    out.reserve(m_ranges.size() + 1);
    for (const auto& [a, b] : m_ranges) {
      if (b <= lo || hi <= a) {
        out.emplace_back(a, b);
        continue;
      }
      if (a < lo) out.emplace_back(a, lo);
      if (hi < b) out.emplace_back(hi, b);
    }
    m_ranges = std::move(out);
  }

  /// The parts of [lo, hi) not in the set, in order.
  [[nodiscard]] std::vector<range> missing(std::int64_t lo, std::int64_t hi) const {
    std::vector<range> gaps;
    for (const auto& [a, b] : m_ranges) {
      if (lo >= hi) break;
      if (b <= lo) continue;
      if (hi <= a) break;
      if (lo < a) gaps.emplace_back(lo, a);
      lo = std::max(lo, b);
    }
    if (lo < hi) gaps.emplace_back(lo, hi);
    return gaps;
  }

  /// True when all of [lo, hi) is in the set.
  [[nodiscard]] bool contains(std::int64_t lo, std::int64_t hi) const { return missing(lo, hi).empty(); }

  /// The ranges, sorted.
  [[nodiscard]] const std::vector<range>& ranges() const noexcept { return m_ranges; }

 private:
  std::vector<range> m_ranges;
};

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_INTERVAL_SET_HPP

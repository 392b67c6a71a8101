/// @file
/// Balanced block distribution of matrix rows over ranks: sizes differ by at most one, the first
/// `rows % ranks` ranks hold one more. (Until the dist module's block distribution lands; see
/// docs/comm.md for how the solver switches to it.)
#ifndef HETERO_LINALG_ROW_BLOCK_HPP
#define HETERO_LINALG_ROW_BLOCK_HPP

#include <cstdint>

#include "hetero/core/error.hpp"

namespace hetero {

/// The rows [begin, end) of one rank.
struct row_block {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t size() const noexcept { return end - begin; }
  [[nodiscard]] bool contains(std::int64_t row) const noexcept { return row >= begin && row < end; }
  friend bool operator==(const row_block&, const row_block&) = default;
};

/// Rank `rank`'s block of `rows` rows split over `ranks` ranks.
inline row_block block_rows(std::int64_t rows, int ranks, int rank) {
  HETERO_EXPECTS(rows >= 0, "block_rows: rows is ", rows, "; allowed: 0 or more");
  HETERO_EXPECTS(ranks > 0 && rank >= 0 && rank < ranks, "block_rows: rank ", rank, " of ", ranks,
                 " ranks; allowed: 0 <= rank < ranks");
  const std::int64_t base = rows / ranks, extra = rows % ranks, r = rank;
  const std::int64_t begin = r * base + (r < extra ? r : extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

/// The rank whose block holds `row`.
inline int owner_of_row(std::int64_t row, std::int64_t rows, int ranks) {
  const std::int64_t base = rows / ranks, extra = rows % ranks;
  const std::int64_t split = extra * (base + 1);  // rows held by the larger blocks
  if (row < split) return static_cast<int>(row / (base + 1));
  return static_cast<int>(extra + (row - split) / base);
}

}  // namespace hetero

#endif  // HETERO_LINALG_ROW_BLOCK_HPP

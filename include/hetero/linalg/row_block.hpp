/// @file
/// The rows of a distributed matrix or vector: the block distribution of the distributed
/// arrays (`distribution::block()`) over the ranks, so that a CSR matrix and a
/// `distributed_array` with a block axis of the same extent hold the same rows on each rank.
#ifndef HETERO_LINALG_ROW_BLOCK_HPP
#define HETERO_LINALG_ROW_BLOCK_HPP

#include <cstdint>

#include "hetero/core/error.hpp"
#include "hetero/distarray/distribution.hpp"

namespace hetero {

/// The rows [begin, end) of one rank.
struct row_block {
  std::int64_t begin = 0;  ///< The first row (a global row number).
  std::int64_t end = 0;    ///< One past the last row.
  /// How many rows.
  [[nodiscard]] std::int64_t size() const noexcept { return end - begin; }
  /// Whether the global row `row` is in [begin, end).
  [[nodiscard]] bool contains(std::int64_t row) const noexcept { return row >= begin && row < end; }
  /// Equal when both bounds are equal.
  friend bool operator==(const row_block&, const row_block&) = default;
};

/// Rank `rank`'s block of `rows` rows split over `ranks` ranks.
inline row_block block_rows(std::int64_t rows, int ranks, int rank) {
  HETERO_EXPECTS(rows >= 0, "block_rows: rows is ", rows, "; allowed: 0 or more");
  HETERO_EXPECTS(ranks > 0 && rank >= 0 && rank < ranks, "block_rows: rank ", rank, " of ", ranks,
                 " ranks; allowed: 0 <= rank < ranks");
  return {detail::block_begin(rows, ranks, rank), detail::block_begin(rows, ranks, rank + 1)};
}

/// The rank whose block holds `row`.
inline int owner_of_row(std::int64_t row, std::int64_t rows, int ranks) {
  return detail::block_owner(rows, ranks, row);
}

}  // namespace hetero

#endif  // HETERO_LINALG_ROW_BLOCK_HPP

/// @file
/// `hetero::csr_matrix`: a sparse matrix in compressed sparse row form in host memory, as read
/// from a file or generated: the whole matrix, or a block of its rows with global column
/// indices. The distributed, device-resident form is `distributed_csr`.
#ifndef HETERO_LINALG_CSR_MATRIX_HPP
#define HETERO_LINALG_CSR_MATRIX_HPP

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero {

/// One entry (row, column, value) of a sparse matrix, 0-based.
template <class Scalar = double>
struct matrix_entry {
  std::int64_t row;  ///< The row, 0-based.
  std::int64_t col;  ///< The column, 0-based.
  Scalar value;      ///< The value.
};

/// Rows [first_row, first_row + local rows) of a `global_rows` x `cols` sparse matrix.
template <class Scalar = double>
class csr_matrix {
 public:
  csr_matrix() = default;

  /// From entries in any order; entries of the same position are added.
  csr_matrix(std::int64_t global_rows, std::int64_t cols, std::int64_t first_row, std::int64_t local_rows,
             std::vector<matrix_entry<Scalar>> entries)
      : m_global_rows(global_rows), m_cols(cols), m_first_row(first_row) {
    HETERO_EXPECTS(global_rows >= 0 && cols >= 0 && first_row >= 0 && local_rows >= 0 &&
                       first_row + local_rows <= global_rows,
                   "csr_matrix: rows [", first_row, ", ", first_row + local_rows, ") of a ", global_rows, " x ",
                   cols, " matrix are not a block of its rows");
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
    m_row_ptr.assign(static_cast<std::size_t>(local_rows) + 1, 0);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      HETERO_EXPECTS(e.row >= first_row && e.row < first_row + local_rows && e.col >= 0 && e.col < cols,
                     "csr_matrix: entry (", e.row, ", ", e.col, ") lies outside rows [", first_row, ", ",
                     first_row + local_rows, ") and columns [0, ", cols, ")");
      if (!m_cols_of.empty() && i > 0 && entries[i - 1].row == e.row && entries[i - 1].col == e.col) {
        m_values.back() += e.value;  // a duplicate adds up
        continue;
      }
      m_cols_of.push_back(e.col);
      m_values.push_back(e.value);
      ++m_row_ptr[static_cast<std::size_t>(e.row - first_row) + 1];
    }
    for (std::size_t r = 1; r < m_row_ptr.size(); ++r) m_row_ptr[r] += m_row_ptr[r - 1];
  }

  /// From CSR arrays of rows [first_row, first_row + row_ptr.size() - 1): `row_ptr` offsets
  /// from 0, columns sorted and unique within each row (as `row_ptr()`, `col_idx()` and
  /// `values()` give them).
  csr_matrix(std::int64_t global_rows, std::int64_t cols, std::int64_t first_row,
             std::vector<std::int64_t> row_ptr, std::vector<std::int64_t> col_idx, std::vector<Scalar> values)
      : m_global_rows(global_rows),
        m_cols(cols),
        m_first_row(first_row),
        m_row_ptr(std::move(row_ptr)),
        m_cols_of(std::move(col_idx)),
        m_values(std::move(values)) {
    const auto local = static_cast<std::int64_t>(m_row_ptr.empty() ? 0 : m_row_ptr.size() - 1);
    HETERO_EXPECTS(
        !m_row_ptr.empty() && m_row_ptr.front() == 0 && first_row >= 0 && first_row + local <= global_rows &&
            m_cols_of.size() == m_values.size() && m_row_ptr.back() == static_cast<std::int64_t>(m_values.size()),
        "csr_matrix: CSR arrays of ", m_row_ptr.size(), " offsets (ending at ",
        m_row_ptr.empty() ? 0 : m_row_ptr.back(), "), ", m_cols_of.size(), " columns and ", m_values.size(),
        " values are not rows [", first_row, ", ", first_row + local, ") of a ", global_rows, "-row matrix");
    HETERO_EXPECTS(cols >= 0, "csr_matrix: ", cols, " columns; allowed: 0 or more");
    for (std::size_t r = 0; r + 1 < m_row_ptr.size(); ++r)
      HETERO_EXPECTS(m_row_ptr[r] <= m_row_ptr[r + 1], "csr_matrix: row ",
                     first_row + static_cast<std::int64_t>(r), " has offsets ", m_row_ptr[r], " .. ",
                     m_row_ptr[r + 1], "; allowed: offsets that do not decrease");
    for (std::size_t r = 0; r + 1 < m_row_ptr.size(); ++r) {
      const std::int64_t lo = m_row_ptr[r], hi = m_row_ptr[r + 1];
      for (std::int64_t k = lo; k < hi; ++k) {
        const std::int64_t c = m_cols_of[static_cast<std::size_t>(k)];
        const bool after = k == lo || m_cols_of[static_cast<std::size_t>(k - 1)] < c;
        HETERO_EXPECTS(c >= 0 && c < cols && after, "csr_matrix: row ", first_row + static_cast<std::int64_t>(r),
                       " has column ", c, (after ? "" : " after column "),
                       (after ? std::string() : std::to_string(m_cols_of[static_cast<std::size_t>(k - 1)])),
                       "; allowed: columns in [0, ", cols,
                       "), sorted and unique within each row (the entries constructor sorts and adds up)");
      }
    }
  }

  /// Rows of the whole matrix.
  [[nodiscard]] std::int64_t global_rows() const noexcept { return m_global_rows; }
  /// Columns of the whole matrix.
  [[nodiscard]] std::int64_t cols() const noexcept { return m_cols; }
  /// The first row held here (a global row number).
  [[nodiscard]] std::int64_t first_row() const noexcept { return m_first_row; }
  /// How many rows are held here.
  [[nodiscard]] std::int64_t local_rows() const noexcept {
    return static_cast<std::int64_t>(m_row_ptr.empty() ? 0 : m_row_ptr.size() - 1);
  }
  /// Entries stored for the rows held here.
  [[nodiscard]] std::int64_t nonzeros() const noexcept { return static_cast<std::int64_t>(m_values.size()); }
  /// Offsets of each held row's entries in `col_idx()` and `values()` (local_rows + 1 of them, from 0).
  [[nodiscard]] std::span<const std::int64_t> row_ptr() const noexcept { return m_row_ptr; }
  /// The global column of each entry, row by row.
  [[nodiscard]] std::span<const std::int64_t> col_idx() const noexcept { return m_cols_of; }
  /// The value of each entry, row by row.
  [[nodiscard]] std::span<const Scalar> values() const noexcept { return m_values; }

  /// Rows [begin, end) (global numbers) of the rows held here, as a matrix of their own.
  [[nodiscard]] csr_matrix rows(std::int64_t begin, std::int64_t end) const {
    HETERO_EXPECTS(begin >= m_first_row && begin <= end && end <= m_first_row + local_rows(),
                   "csr_matrix::rows: [", begin, ", ", end, ") is not within the rows held [", m_first_row, ", ",
                   m_first_row + local_rows(), ")");
    csr_matrix out;
    out.m_global_rows = m_global_rows;
    out.m_cols = m_cols;
    out.m_first_row = begin;
    const auto lo = static_cast<std::size_t>(m_row_ptr[static_cast<std::size_t>(begin - m_first_row)]);
    const auto hi = static_cast<std::size_t>(m_row_ptr[static_cast<std::size_t>(end - m_first_row)]);
    out.m_cols_of.assign(m_cols_of.begin() + static_cast<std::ptrdiff_t>(lo),
                         m_cols_of.begin() + static_cast<std::ptrdiff_t>(hi));
    out.m_values.assign(m_values.begin() + static_cast<std::ptrdiff_t>(lo),
                        m_values.begin() + static_cast<std::ptrdiff_t>(hi));
    out.m_row_ptr.resize(static_cast<std::size_t>(end - begin) + 1);
    for (std::size_t r = 0; r < out.m_row_ptr.size(); ++r)
      out.m_row_ptr[r] =
          m_row_ptr[static_cast<std::size_t>(begin - m_first_row) + r] - static_cast<std::int64_t>(lo);
    return out;
  }

  /// y = A x for the rows held (x: all `cols()` entries; y: `local_rows()`), a serial reference.
  /// Each row's products are added as distributed_csr's kernels add them (two at a time, in
  /// order), so the two give the same bits on host spaces built without fused multiply-adds.
  void multiply(std::span<const Scalar> x, std::span<Scalar> y) const {
    HETERO_EXPECTS(
        static_cast<std::int64_t>(x.size()) == m_cols && static_cast<std::int64_t>(y.size()) == local_rows(),
        "csr_matrix::multiply: x has ", x.size(), " entries (", m_cols, " needed), y ", y.size(), " (",
        local_rows(), " needed)");
    const auto term = [&](std::int64_t k) {
      return m_values[static_cast<std::size_t>(k)] *
             x[static_cast<std::size_t>(m_cols_of[static_cast<std::size_t>(k)])];
    };
    for (std::size_t r = 0; r + 1 < m_row_ptr.size(); ++r) {
      Scalar sum{};
      auto k = m_row_ptr[r];
      for (; k + 1 < m_row_ptr[r + 1]; k += 2) sum += term(k) + term(k + 1);
      if (k < m_row_ptr[r + 1]) sum += term(k);
      y[r] = sum;
    }
  }

 private:
  std::int64_t m_global_rows = 0;
  std::int64_t m_cols = 0;
  std::int64_t m_first_row = 0;
  std::vector<std::int64_t> m_row_ptr{0};
  std::vector<std::int64_t> m_cols_of;
  std::vector<Scalar> m_values;
};

}  // namespace hetero

#endif  // HETERO_LINALG_CSR_MATRIX_HPP

/// @file
/// Incomplete Cholesky without fill, IC(0), of a rank's diagonal block (host memory): L has the
/// pattern of the block's lower triangle and L L' matches the block on that pattern. A block
/// whose factorisation breaks down (a pivot <= 0, which happens on SPD matrices too) is factored
/// again with its diagonal scaled by 1 + shift, the shift doubling from 1e-3 (Manteuffel's
/// shifted IC), as PETSc's ICC does with a positive-definite shift.
#ifndef HETERO_LINALG_DETAIL_INCOMPLETE_CHOLESKY_HPP
#define HETERO_LINALG_DETAIL_INCOMPLETE_CHOLESKY_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "hetero/linalg/csr_matrix.hpp"

namespace hetero::detail {

/// L of IC(0) in CSR rows, each row's columns ascending with the diagonal last.
struct ic0_factor {
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> cols;
  std::vector<double> values;
  double shift = 0;  ///< the diagonal was scaled by 1 + shift
};

/// What `ic0_factorize` found wrong, when it could not factor at all.
struct ic0_failure {
  std::int64_t row = -1;  ///< the first row (of the block) at fault
  double diagonal = 0;    ///< its diagonal entry (<= 0, or missing: 0)
  bool pivot = false;     ///< false: the diagonal entry itself; true: breakdown at every shift
};

/// The largest diagonal shift tried (1e-3 doubled 11 times).
inline constexpr double ic0_max_shift = 1e-3 * 2048;

/// One attempt at `shift`; false (and `failed_row` set) at a pivot <= 0.
inline bool ic0_attempt(const csr_matrix<double>& a, double shift, ic0_factor& l, std::int64_t& failed_row) {
  const std::int64_t n = a.local_rows();
  const auto ptr = a.row_ptr();
  const auto col = a.col_idx();
  const auto val = a.values();
  l = ic0_factor{};
  l.shift = shift;
  l.row_ptr.reserve(static_cast<std::size_t>(n) + 1);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto begin = static_cast<std::size_t>(l.row_ptr.back());
    double diagonal = 0;
    for (auto k = ptr[static_cast<std::size_t>(i)]; k < ptr[static_cast<std::size_t>(i) + 1]; ++k) {
      const std::int64_t j = col[static_cast<std::size_t>(k)];
      const double aij = val[static_cast<std::size_t>(k)];
      if (j == i) diagonal = aij;
      if (j >= i) continue;
      // L(i, j) = (A(i, j) - sum over m < j of L(i, m) L(j, m)) / L(j, j): row i so far against
      // row j (both ascending; row j's diagonal is its last entry).
      double s = aij;
      std::size_t p = begin;
      auto q = static_cast<std::size_t>(l.row_ptr[static_cast<std::size_t>(j)]);
      const auto q_diagonal = static_cast<std::size_t>(l.row_ptr[static_cast<std::size_t>(j) + 1]) - 1;
      while (p < l.cols.size() && q < q_diagonal) {
        if (l.cols[p] == l.cols[q]) {
          s -= l.values[p++] * l.values[q++];
        } else if (l.cols[p] < l.cols[q]) {
          ++p;
        } else {
          ++q;
        }
      }
      l.cols.push_back(j);
      l.values.push_back(s / l.values[q_diagonal]);
    }
    double d = diagonal * (1 + shift);
    for (std::size_t p = begin; p < l.cols.size(); ++p) d -= l.values[p] * l.values[p];
    if (!(d > 0) || !std::isfinite(d)) {
      failed_row = i;
      return false;
    }
    l.cols.push_back(i);
    l.values.push_back(std::sqrt(d));
    l.row_ptr.push_back(static_cast<std::int64_t>(l.cols.size()));
  }
  return true;
}

/// IC(0) of `a` (square, columns ascending in each row), shifted as the file comment says when
/// it breaks down. A diagonal entry <= 0 (or none) cannot be factored at any shift: nullopt,
/// with `failure` saying where; so too when the shift reached `ic0_max_shift` without help.
inline std::optional<ic0_factor> ic0_factorize(const csr_matrix<double>& a, ic0_failure& failure) {
  const std::int64_t n = a.local_rows();
  for (std::int64_t i = 0; i < n; ++i) {
    double diagonal = 0;
    for (auto k = a.row_ptr()[static_cast<std::size_t>(i)]; k < a.row_ptr()[static_cast<std::size_t>(i) + 1]; ++k)
      if (a.col_idx()[static_cast<std::size_t>(k)] == i) diagonal = a.values()[static_cast<std::size_t>(k)];
    if (!(diagonal > 0)) {
      failure = {i, diagonal, false};
      return std::nullopt;
    }
  }
  ic0_factor l;
  std::int64_t row = -1;
  if (ic0_attempt(a, 0, l, row)) return l;
  for (double shift = 1e-3; shift <= ic0_max_shift; shift *= 2)
    if (ic0_attempt(a, shift, l, row)) return l;
  failure = {row, 0, true};
  return std::nullopt;
}

/// z = (L L')^-1 r for `n` entries (z and r may be the same array).
inline void ic0_solve(const ic0_factor& l, const double* r, double* z, std::size_t n) {
  // L y = r (y in z).
  for (std::size_t i = 0; i < n; ++i) {
    const auto last = static_cast<std::size_t>(l.row_ptr[i + 1]) - 1;  // the diagonal
    double s = r[i];
    for (auto k = static_cast<std::size_t>(l.row_ptr[i]); k < last; ++k)
      s -= l.values[k] * z[static_cast<std::size_t>(l.cols[k])];
    z[i] = s / l.values[last];
  }
  // L' z = y, column by column of L' (row by row of L, from the last).
  for (std::size_t i = n; i-- > 0;) {
    const auto last = static_cast<std::size_t>(l.row_ptr[i + 1]) - 1;
    const double zi = z[i] / l.values[last];
    z[i] = zi;
    for (auto k = static_cast<std::size_t>(l.row_ptr[i]); k < last; ++k)
      z[static_cast<std::size_t>(l.cols[k])] -= l.values[k] * zi;
  }
}

}  // namespace hetero::detail

#endif  // HETERO_LINALG_DETAIL_INCOMPLETE_CHOLESKY_HPP

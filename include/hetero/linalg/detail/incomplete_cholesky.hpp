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

/// L of IC(0) as the factorisation builds it: CSR rows, each row's columns ascending with the
/// diagonal last.
struct ic0_rows {
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> cols;
  std::vector<double> values;
  double shift = 0;  ///< the diagonal was scaled by 1 + shift
};

/// L of IC(0) as `ic0_solve` reads it: L's strict lower triangle by rows (columns ascending),
/// L' 's strict upper triangle by rows (L's columns, descending: the backward solve gathers as
/// the forward one does, instead of scattering), both with 32-bit columns and each row divided
/// by its diagonal entry L(i, i); and 1 / L(i, i). A sweep is a chain of dependent rows: row i
/// waits for the row just computed through its last multiply-add only (each row meets its
/// nearest dependence last, and has no division left), which took 0.6-0.7x the time of
/// undivided rows in ascending order on nos3, gr_30_30 and bcsstk14 (docs/results/linalg.md).
/// Where most rows depend on their neighbour (row i on i - 1 forward, on i + 1 backward: banded
/// and grid orderings), that entry is kept apart (`lower_nearest`, `upper_nearest`, 0 where a
/// row has none) and the sweep carries the neighbour's value in a register, so the chain is one
/// multiply-add a row rather than a store and a load too: 0.45x the solve's time on gr_30_30,
/// 0.65-0.9x on nos3, nos7 and bcsstk19. Where few rows do (1138_bus: 23 %), the register would
/// chain rows that were independent (1.25x there), and the rows keep every entry.
struct ic0_factor {
  double shift = 0;            ///< the diagonal was scaled by 1 + shift
  bool carry_nearest = false;  ///< the neighbour's entries are in `*_nearest`, not in the rows
  std::vector<std::int64_t> lower_ptr, upper_ptr;
  std::vector<std::int32_t> lower_cols, upper_cols;
  std::vector<double> lower_values, upper_values, inverse_diagonal;
  std::vector<double> lower_nearest, upper_nearest;
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
inline bool ic0_attempt(const csr_matrix<double>& a, double shift, ic0_rows& l, std::int64_t& failed_row) {
  const std::int64_t n = a.local_rows();
  const auto ptr = a.row_ptr();
  const auto col = a.col_idx();
  const auto val = a.values();
  l.row_ptr.assign(1, 0);  // the arrays keep their room from an earlier attempt
  l.cols.clear();
  l.values.clear();
  l.shift = shift;
  if (l.row_ptr.capacity() < static_cast<std::size_t>(n) + 1) {  // room for L: A's lower triangle
    std::size_t lower = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (auto k = ptr[static_cast<std::size_t>(i)]; k < ptr[static_cast<std::size_t>(i) + 1]; ++k)
        lower += col[static_cast<std::size_t>(k)] <= i;
    l.row_ptr.reserve(static_cast<std::size_t>(n) + 1);
    l.cols.reserve(lower);
    l.values.reserve(lower);
  }
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

/// Whether row `i` of the rows (`ptr`, `cols`) ends with its neighbour, column i + `step`.
inline bool ends_with_neighbour(const std::vector<std::int64_t>& ptr, const std::vector<std::int32_t>& cols,
                                std::size_t i, std::int64_t step) {
  return ptr[i + 1] > ptr[i] &&
         cols[static_cast<std::size_t>(ptr[i + 1]) - 1] == static_cast<std::int64_t>(i) + step;
}

/// Moves each row's entry for its neighbour (the last of the row, when it is column i - 1 in L,
/// i + 1 in L') out of `l`'s rows into `lower_nearest` / `upper_nearest`.
inline void split_nearest(ic0_factor& l, std::size_t n) {
  if (l.carry_nearest) return;  // already apart
  l.carry_nearest = true;
  const auto split = [n](std::vector<std::int64_t>& ptr, std::vector<std::int32_t>& cols,
                         std::vector<double>& values, std::vector<double>& nearest, std::int64_t step) {
    nearest.assign(n, 0);
    std::size_t out = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool apart = ends_with_neighbour(ptr, cols, i, step);  // before row i moves (out <= ptr[i])
      const auto first = static_cast<std::size_t>(ptr[i]), last = static_cast<std::size_t>(ptr[i + 1]);
      ptr[i] = static_cast<std::int64_t>(out);
      for (std::size_t k = first; k < last; ++k) {
        if (apart && k + 1 == last) {
          nearest[i] = values[k];
        } else {
          cols[out] = cols[k];
          values[out++] = values[k];
        }
      }
    }
    ptr[n] = static_cast<std::int64_t>(out);
    cols.resize(out);
    values.resize(out);
  };
  split(l.lower_ptr, l.lower_cols, l.lower_values, l.lower_nearest, -1);
  split(l.upper_ptr, l.upper_cols, l.upper_values, l.upper_nearest, +1);
}

/// The solve's form of the factored rows `rows`; with their neighbours apart where at least half
/// the rows have one, unless `may_carry` is false.
inline ic0_factor ic0_prepare_solve(const ic0_rows& rows, bool may_carry = true) {
  const std::size_t n = rows.row_ptr.size() - 1;
  ic0_factor l;
  l.shift = rows.shift;
  l.lower_ptr.assign(n + 1, 0);
  l.upper_ptr.assign(n + 1, 0);
  l.inverse_diagonal.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto first = static_cast<std::size_t>(rows.row_ptr[i]),
               last = static_cast<std::size_t>(rows.row_ptr[i + 1]) - 1;
    l.lower_ptr[i + 1] = l.lower_ptr[i] + static_cast<std::int64_t>(last - first);
    for (std::size_t k = first; k < last; ++k) ++l.upper_ptr[static_cast<std::size_t>(rows.cols[k]) + 1];
    l.inverse_diagonal[i] = 1 / rows.values[last];
  }
  for (std::size_t i = 0; i < n; ++i) l.upper_ptr[i + 1] += l.upper_ptr[i];
  const auto entries = static_cast<std::size_t>(l.lower_ptr[n]);
  l.lower_cols.resize(entries);
  l.lower_values.resize(entries);
  l.upper_cols.resize(entries);
  l.upper_values.resize(entries);
  // Rows of L' filled from their ends: i ascending gives each row its columns descending.
  std::vector<std::int64_t> next(l.upper_ptr.begin() + 1, l.upper_ptr.end());
  for (std::size_t i = 0; i < n; ++i) {
    auto out = static_cast<std::size_t>(l.lower_ptr[i]);
    for (auto k = static_cast<std::size_t>(rows.row_ptr[i]); k + 1 < static_cast<std::size_t>(rows.row_ptr[i + 1]);
         ++k) {
      const auto j = static_cast<std::size_t>(rows.cols[k]);
      l.lower_cols[out] = static_cast<std::int32_t>(j);
      l.lower_values[out++] = rows.values[k] * l.inverse_diagonal[i];
      const auto u = static_cast<std::size_t>(--next[j]);  // row j of L' gets L(i, j): i descending
      l.upper_cols[u] = static_cast<std::int32_t>(i);
      l.upper_values[u] = rows.values[k] * l.inverse_diagonal[j];
    }
  }
  std::size_t neighbours = 0;  // rows whose last entry is the row before
  for (std::size_t i = 1; i < n; ++i) neighbours += ends_with_neighbour(l.lower_ptr, l.lower_cols, i, -1);
  if (may_carry && 2 * neighbours >= n && n > 0) split_nearest(l, n);
  return l;
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
  ic0_rows l;
  std::int64_t row = -1;
  bool factored = ic0_attempt(a, 0, l, row);
  for (double shift = 1e-3; !factored && shift <= ic0_max_shift; shift *= 2)
    factored = ic0_attempt(a, shift, l, row);
  if (!factored) {
    failure = {row, 0, true};
    return std::nullopt;
  }
  return ic0_prepare_solve(l);
}

/// `ic0_solve`'s two sweeps, with each row's neighbour carried in a register (`Carry`: the
/// factor's `carry_nearest`) or not.
template <bool Carry>
inline void ic0_sweeps(const ic0_factor& l, const double* r, double* z, std::size_t n) {
  const std::int64_t* lower_ptr = l.lower_ptr.data();
  const std::int32_t* lower_cols = l.lower_cols.data();
  const double* lower_values = l.lower_values.data();
  const std::int64_t* upper_ptr = l.upper_ptr.data();
  const std::int32_t* upper_cols = l.upper_cols.data();
  const double* upper_values = l.upper_values.data();
  const double* inverse_diagonal = l.inverse_diagonal.data();
  [[maybe_unused]] const double* lower_nearest = l.lower_nearest.data();
  [[maybe_unused]] const double* upper_nearest = l.upper_nearest.data();
  [[maybe_unused]] double last = 0;
  for (std::size_t i = 0; i < n; ++i) {  // L y = r (y in z)
    double s = r[i] * inverse_diagonal[i];
    for (std::int64_t k = lower_ptr[i]; k < lower_ptr[i + 1]; ++k) s -= lower_values[k] * z[lower_cols[k]];
    if constexpr (Carry) {
      s -= lower_nearest[i] * last;
      last = s;
    }
    z[i] = s;
  }
  last = 0;
  for (std::size_t i = n; i-- > 0;) {  // L' z = y
    double s = z[i] * inverse_diagonal[i];
    for (std::int64_t k = upper_ptr[i]; k < upper_ptr[i + 1]; ++k) s -= upper_values[k] * z[upper_cols[k]];
    if constexpr (Carry) {
      s -= upper_nearest[i] * last;
      last = s;
    }
    z[i] = s;
  }
}

/// z = (L L')^-1 r for `n` entries (z and r may be the same array), `l` prepared for the solve.
/// Both sweeps gather along divided rows: forward y(i) = r(i) / L(i, i) - sum over j < i of
/// (L(i, j) / L(i, i)) y(j); backward z(i) = y(i) / L(i, i) - sum over j > i of
/// (L(j, i) / L(i, i)) z(j).
/// Each sweep meets a row's nearest (latest computed) dependence last; with `carry_nearest`,
/// from a register: the same operations in the same order, so the same bits for finite values
/// (a row without a neighbour subtracts 0 times the last row, which can turn a -0 into +0).
inline void ic0_solve(const ic0_factor& l, const double* r, double* z, std::size_t n) {
  if (l.carry_nearest)
    ic0_sweeps<true>(l, r, z, n);
  else
    ic0_sweeps<false>(l, r, z, n);
}

}  // namespace hetero::detail

#endif  // HETERO_LINALG_DETAIL_INCOMPLETE_CHOLESKY_HPP

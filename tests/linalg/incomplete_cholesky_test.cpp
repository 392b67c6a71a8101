// IC(0)'s triangular solves (detail/incomplete_cholesky.hpp) against dense forward and backward
// substitution with the same factor, in both of the solve's forms: rows that keep every entry,
// and rows whose neighbour's entry is carried in a register, which must give the same bits.
#include <hetero/linalg.hpp>
#include <hetero/linalg/detail/incomplete_cholesky.hpp>

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "random.hpp"

namespace {

// z = (L L')^-1 r by dense substitution, L the factored rows (undivided, diagonal last).
std::vector<double> dense_solve(const hetero::detail::ic0_rows& l, const std::vector<double>& r) {
  const std::size_t n = r.size();
  std::vector<double> dense(n * n, 0.0), y(n), z(n);
  for (std::size_t i = 0; i < n; ++i)
    for (auto k = l.row_ptr[i]; k < l.row_ptr[i + 1]; ++k)
      dense[i * n + static_cast<std::size_t>(l.cols[static_cast<std::size_t>(k)])] =
          l.values[static_cast<std::size_t>(k)];
  for (std::size_t i = 0; i < n; ++i) {
    double s = r[i];
    for (std::size_t j = 0; j < i; ++j) s -= dense[i * n + j] * y[j];
    y[i] = s / dense[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {
    double s = y[i];
    for (std::size_t j = i + 1; j < n; ++j) s -= dense[j * n + i] * z[j];
    z[i] = s / dense[i * n + i];
  }
  return z;
}

// The fraction of rows i >= 1 whose lower triangle holds column i - 1.
double neighbour_fraction(const hetero::csr_matrix<double>& a) {
  std::size_t rows = 0;
  for (std::size_t i = 1; i < static_cast<std::size_t>(a.local_rows()); ++i)
    for (auto k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      rows += a.col_idx()[static_cast<std::size_t>(k)] + 1 == static_cast<std::int64_t>(i);
  return static_cast<double>(rows) / static_cast<double>(a.local_rows());
}

// A sparse symmetric M-matrix of `n` rows (IC(0) needs no shift): row i couples to i - 1 with
// probability `neighbour`, and to a few rows further back; random negative couplings, the
// diagonal one more than the row's absolute sum.
hetero::csr_matrix<double> random_m_matrix(std::int64_t n, double neighbour, std::mt19937_64& gen) {
  std::uniform_real_distribution<double> coupling(-1, -0.01), chance(0, 1);
  std::uniform_int_distribution<std::int64_t> back(2, 40);
  std::vector<std::vector<std::pair<std::int64_t, double>>> lower(static_cast<std::size_t>(n));
  for (std::int64_t i = 1; i < n; ++i) {
    if (chance(gen) < neighbour) lower[static_cast<std::size_t>(i)].emplace_back(i - 1, coupling(gen));
    for (int e = 0; e < 3; ++e)
      if (const std::int64_t j = i - back(gen); j >= 0 && chance(gen) < 0.5)
        lower[static_cast<std::size_t>(i)].emplace_back(j, coupling(gen));
  }
  std::vector<double> row_sum(static_cast<std::size_t>(n), 0.0);
  std::vector<hetero::matrix_entry<double>> entries;
  for (std::int64_t i = 0; i < n; ++i) {
    auto& row = lower[static_cast<std::size_t>(i)];
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end(), [](auto a, auto b) { return a.first == b.first; }), row.end());
    for (const auto& [j, v] : row) {
      entries.push_back({i, j, v});
      entries.push_back({j, i, v});
      row_sum[static_cast<std::size_t>(i)] -= v;
      row_sum[static_cast<std::size_t>(j)] -= v;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) entries.push_back({i, i, row_sum[static_cast<std::size_t>(i)] + 1});
  return {n, n, 0, n, std::move(entries)};
}

// The bits of `v`'s entries (== would take -0 for +0).
std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<std::uint64_t>(v[i]);
  return b;
}

void check_solves(const hetero::csr_matrix<double>& a, std::uint64_t stream) {
  hetero::detail::ic0_rows rows;
  std::int64_t failed = -1;
  REQUIRE(hetero::detail::ic0_attempt(a, 0, rows, failed));
  const hetero::detail::ic0_factor plain = hetero::detail::ic0_prepare_solve(rows, false);
  const hetero::detail::ic0_factor chosen = hetero::detail::ic0_prepare_solve(rows);
  const double fraction = neighbour_fraction(a);
  INFO(a.local_rows() << " rows, " << fraction << " of them with a neighbour");
  CHECK_FALSE(plain.carry_nearest);
  CHECK(chosen.carry_nearest == (fraction >= 0.5));
  if (chosen.carry_nearest) {  // each neighbour's entry moved out of its row, on both sides
    const auto moved = [](const std::vector<double>& nearest) {
      return static_cast<std::size_t>(
          std::count_if(nearest.begin(), nearest.end(), [](double v) { return v != 0; }));
    };
    const auto neighbours = static_cast<std::size_t>(fraction * static_cast<double>(a.local_rows()) + 0.5);
    CHECK(moved(chosen.lower_nearest) == neighbours);
    CHECK(moved(chosen.upper_nearest) == neighbours);
    CHECK(plain.lower_cols.size() - chosen.lower_cols.size() == neighbours);
    CHECK(plain.upper_cols.size() - chosen.upper_cols.size() == neighbours);
    CHECK(static_cast<std::size_t>(chosen.lower_ptr.back()) == chosen.lower_cols.size());
    CHECK(static_cast<std::size_t>(chosen.upper_ptr.back()) == chosen.upper_cols.size());
  }

  const auto n = static_cast<std::size_t>(a.local_rows());
  auto gen = hetero::testing::rng(stream);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> r(n);
  for (double& v : r) v = d(gen);
  const std::vector<double> reference = dense_solve(rows, r);
  std::vector<double> z_plain(n), z_chosen(n), in_place = r;
  hetero::detail::ic0_solve(plain, r.data(), z_plain.data(), n);
  hetero::detail::ic0_solve(chosen, r.data(), z_chosen.data(), n);
  hetero::detail::ic0_solve(chosen, in_place.data(), in_place.data(), n);
  CHECK(bits(z_chosen) == bits(z_plain));  // the same operations in the same order
  CHECK(bits(in_place) == bits(z_chosen));
  double error = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    error = std::max(error, std::abs(z_plain[i] - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  CHECK(error <= 1e-11 * scale);
}

}  // namespace

TEST_CASE("IC(0)'s solve equals dense substitution, its neighbours carried or not", "[linalg][ic0]") {
  const std::string dir = HETERO_MATRIX_DIR;
  SECTION("grid and SuiteSparse orderings") {
    const hetero::poisson_matrix grid = hetero::poisson_2d(24);
    check_solves(grid.rows(0, grid.global_rows()), 1);                           // 96 % neighbours: carried
    check_solves(hetero::read_matrix_market_file(dir + "/nos3.mtx.gz"), 2);      // 92 %: carried
    check_solves(hetero::read_matrix_market_file(dir + "/1138_bus.mtx.gz"), 3);  // 23 %: not
  }
  SECTION("random matrices on either side of the half") {
    auto gen = hetero::testing::rng(4);
    std::uniform_int_distribution<std::int64_t> rows(50, 400);
    std::uint64_t stream = 10;
    for (double neighbour : {0.1, 0.3, 0.7, 0.95})
      check_solves(random_m_matrix(rows(gen), neighbour, gen), stream++);
  }
  SECTION("one row and none") {
    check_solves(hetero::csr_matrix<double>(1, 1, 0, 1, std::vector<hetero::matrix_entry<double>>{{0, 0, 4.0}}),
                 6);
    hetero::detail::ic0_rows empty;
    const hetero::detail::ic0_factor none = hetero::detail::ic0_prepare_solve(empty);
    CHECK_FALSE(none.carry_nearest);
    hetero::detail::ic0_solve(none, nullptr, nullptr, 0);
  }
}

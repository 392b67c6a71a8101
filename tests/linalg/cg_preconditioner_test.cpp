// Preconditioned CG: after k iterations each variant with each preconditioner holds the x of a
// serial preconditioned CG written here from the textbook (its own IC(0), dense, right-looking),
// on random right-hand sides drawn fresh; the preconditioners converge where plain CG does
// not; bad diagonals and factorisations that break down are named on every rank.
#include <hetero/comm.hpp>
#include <hetero/core.hpp>
#include <hetero/linalg.hpp>

#include <lapacke.h>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paired_matrix.hpp"
#include "random.hpp"
#include "region_recorder.hpp"

using Catch::Matchers::ContainsSubstring;
using matrix = hetero::distributed_csr<>;
using hetero::cg_preconditioner;
using hetero::cg_variant;

namespace {

// The diagonal of `a` (0 where none is stored).
std::vector<double> diagonal_of(const hetero::csr_matrix<double>& a) {
  const auto n = static_cast<std::size_t>(a.global_rows());
  std::vector<double> d(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (auto k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      if (a.col_idx()[static_cast<std::size_t>(k)] == static_cast<std::int64_t>(i))
        d[i] = a.values()[static_cast<std::size_t>(k)];
  return d;
}

// A serial preconditioner: the inverse diagonal; the Chebyshev iteration of Saad's Algorithm
// 12.1 on a given interval; or per rank block an IC(0) from a dense copy of the block (its
// stored pattern), shifted as preconditioner.hpp says when a pivot is not positive.
class serial_preconditioner {
 public:
  serial_preconditioner(const hetero::csr_matrix<double>& a, cg_preconditioner kind, int ranks)
      : m_a(a), m_kind(kind), m_diagonal(diagonal_of(a)) {
    const std::int64_t n = a.global_rows();
    if (kind != cg_preconditioner::block_ic0) return;
    for (int r = 0; r < ranks; ++r) m_blocks.push_back(factor(a, hetero::block_rows(n, ranks, r)));
  }

  /// chebyshev: the polynomial's interval and degree.
  void polynomial(std::pair<double, double> interval, int degree) {
    m_interval = interval;
    m_degree = degree;
  }

  [[nodiscard]] double shift() const {
    double s = 0;
    for (const auto& b : m_blocks) s = std::max(s, b.shift);
    return s;
  }

  [[nodiscard]] std::vector<double> apply(const std::vector<double>& r) const {
    std::vector<double> z(r.size());
    if (m_kind == cg_preconditioner::none) return r;
    if (m_kind == cg_preconditioner::jacobi) {
      for (std::size_t i = 0; i < r.size(); ++i) z[i] = r[i] / m_diagonal[i];
      return z;
    }
    if (m_kind == cg_preconditioner::chebyshev) {
      const auto [lower, upper] = m_interval;
      const double theta = (upper + lower) / 2, delta = (upper - lower) / 2, sigma = theta / delta;
      std::vector<double> d(r.size()), q(r.size());
      for (std::size_t i = 0; i < r.size(); ++i) z[i] = d[i] = r[i] / m_diagonal[i] / theta;
      double rho = 1 / sigma;
      for (int k = 1; k < m_degree; ++k) {
        m_a.multiply(z, q);
        const double next = 1 / (2 * sigma - rho);
        for (std::size_t i = 0; i < r.size(); ++i) {
          d[i] = next * rho * d[i] + 2 * next / delta * (r[i] - q[i]) / m_diagonal[i];
          z[i] += d[i];
        }
        rho = next;
      }
      return z;
    }
    for (const block& b : m_blocks) {
      const auto n = static_cast<std::size_t>(b.rows.size());
      const auto at = [&](std::size_t i, std::size_t j) { return b.l[i * n + j]; };
      std::vector<double> y(n);
      for (std::size_t i = 0; i < n; ++i) {
        double s = r[static_cast<std::size_t>(b.rows.begin) + i];
        for (std::size_t j = 0; j < i; ++j) s -= at(i, j) * y[j];
        y[i] = s / at(i, i);
      }
      for (std::size_t i = n; i-- > 0;) {
        double s = y[i];
        for (std::size_t j = i + 1; j < n; ++j) s -= at(j, i) * z[static_cast<std::size_t>(b.rows.begin) + j];
        z[static_cast<std::size_t>(b.rows.begin) + i] = s / at(i, i);
      }
    }
    return z;
  }

 private:
  struct block {
    hetero::row_block rows;
    std::vector<double> l;  // dense, row-major, lower triangle
    double shift = 0;
  };

  static block factor(const hetero::csr_matrix<double>& a, hetero::row_block rows) {
    const auto n = static_cast<std::size_t>(rows.size());
    std::vector<double> values(n * n, 0.0);
    std::vector<char> stored(n * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto row = static_cast<std::size_t>(rows.begin) + i;
      for (auto k = a.row_ptr()[row]; k < a.row_ptr()[row + 1]; ++k) {
        const std::int64_t c = a.col_idx()[static_cast<std::size_t>(k)];
        if (!rows.contains(c)) continue;
        const auto j = static_cast<std::size_t>(c - rows.begin);
        values[i * n + j] = a.values()[static_cast<std::size_t>(k)];
        stored[i * n + j] = 1;
      }
    }
    for (double shift = 0; shift <= 3; shift = shift == 0 ? 1e-3 : 2 * shift) {
      block b{rows, values, shift};
      std::vector<double>& l = b.l;
      bool ok = true;
      for (std::size_t i = 0; i < n; ++i) l[i * n + i] *= 1 + shift;
      for (std::size_t k = 0; k < n && ok; ++k) {  // right-looking, on the stored pattern only
        ok = l[k * n + k] > 0;
        if (!ok) break;
        l[k * n + k] = std::sqrt(l[k * n + k]);
        for (std::size_t i = k + 1; i < n; ++i)
          if (stored[i * n + k]) l[i * n + k] /= l[k * n + k];
        for (std::size_t j = k + 1; j < n; ++j) {
          if (!stored[j * n + k]) continue;
          for (std::size_t i = j; i < n; ++i)
            if (stored[i * n + k] && stored[i * n + j]) l[i * n + j] -= l[i * n + k] * l[j * n + k];
        }
      }
      if (ok) return b;
    }
    FAIL("the serial IC(0) broke down at every shift");
    return {};
  }

  const hetero::csr_matrix<double>& m_a;
  cg_preconditioner m_kind;
  std::pair<double, double> m_interval{0, 0};
  int m_degree = 1;
  std::vector<double> m_diagonal;
  std::vector<block> m_blocks;
};

// k iterations of serial preconditioned CG from x = 0.
std::vector<double> serial_pcg(const hetero::csr_matrix<double>& a, const serial_preconditioner& m,
                               const std::vector<double>& b, int k) {
  const std::size_t n = b.size();
  const auto dot = [](const std::vector<double>& u, const std::vector<double>& v) {
    double s = 0;
    for (std::size_t i = 0; i < u.size(); ++i) s += u[i] * v[i];
    return s;
  };
  std::vector<double> x(n, 0.0), r = b, q(n);
  std::vector<double> z = m.apply(r), p = z;
  double rho = dot(r, z);
  for (int it = 0; it < k; ++it) {
    a.multiply(p, q);
    const double alpha = rho / dot(p, q);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    z = m.apply(r);
    const double next = dot(r, z);
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + next / rho * p[i];
    rho = next;
  }
  return x;
}

// A right-hand side drawn fresh (the test seed, printed at the start: HETERO_TEST_SEED replays
// it), the same on every rank.
std::vector<double> random_vector(std::int64_t n, std::uint64_t stream) {
  auto gen = hetero::testing::rng(stream);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> b(static_cast<std::size_t>(n));
  for (double& v : b) v = d(gen);
  return b;
}

matrix::vector_type rows_of(const matrix& a, const std::vector<double>& whole) {
  auto v = a.make_vector();
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < a.local_rows(); ++i) h(i) = whole[static_cast<std::size_t>(a.rows().begin) + i];
  Kokkos::deep_copy(v, h);
  return v;
}

// ||x - reference|| / ||reference|| over all ranks (x: this rank's rows).
double distance(const matrix& a, const matrix::vector_type& x, const std::vector<double>& reference) {
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  std::vector<double> sums{0, 0};
  for (std::size_t i = 0; i < a.local_rows(); ++i) {
    const double e = reference[static_cast<std::size_t>(a.rows().begin) + i];
    sums[0] += (hx(i) - e) * (hx(i) - e);
    sums[1] += e * e;
  }
  a.comm().allreduce(hetero::send_recv_buf(sums), hetero::op(hetero::ops::sum{}));
  return std::sqrt(sums[0] / sums[1]);
}

// The eigenvalues of A, or of D^-1/2 A D^-1/2 (those of D^-1 A), ascending: LAPACK's dsyevd on
// the dense matrix.
std::vector<double> eigenvalues(const hetero::csr_matrix<double>& a, bool jacobi_scaled) {
  const auto n = static_cast<std::size_t>(a.global_rows());
  const std::vector<double> diagonal = jacobi_scaled ? diagonal_of(a) : std::vector<double>(n, 1.0);
  std::vector<double> dense(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (auto k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const auto j = static_cast<std::size_t>(a.col_idx()[static_cast<std::size_t>(k)]);
      dense[i * n + j] = a.values()[static_cast<std::size_t>(k)] / std::sqrt(diagonal[i] * diagonal[j]);
    }
  std::vector<double> values(n);
  const auto size = static_cast<lapack_int>(n);
  REQUIRE(LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'L', size, dense.data(), size, values.data()) == 0);
  return values;
}

hetero::csr_matrix<double> whole(const hetero::poisson_matrix& p) { return p.rows(0, p.global_rows()); }

// Kershaw's 4 x 4 SPD matrix, on which IC(0) breaks down, repeated along the diagonal.
hetero::csr_matrix<double> kershaw(std::int64_t copies) {
  const double k[4][4] = {{3, -2, 0, 2}, {-2, 3, -2, 0}, {0, -2, 3, -2}, {2, 0, -2, 3}};
  std::vector<hetero::matrix_entry<double>> entries;
  for (std::int64_t c = 0; c < copies; ++c)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        if (k[i][j] != 0) entries.push_back({4 * c + i, 4 * c + j, k[i][j]});
  return {4 * copies, 4 * copies, 0, 4 * copies, std::move(entries)};
}

}  // namespace

TEST_CASE("each preconditioner and variant follows a serial preconditioned CG", "[linalg][cg][preconditioner]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  const std::vector<hetero::csr_matrix<double>> matrices{whole(hetero::poisson_2d(24)),
                                                         hetero::read_matrix_market_file(dir + "/494_bus.mtx.gz"),
                                                         hetero::read_matrix_market_file(dir + "/nos3.mtx.gz")};
  constexpr int k = 12;
  std::uint64_t stream = 700;
  for (const auto& global : matrices) {
    const matrix a(global, comm);
    // Two CGs that differ only in the order of their sums drift apart by up to about eps * kappa
    // of the preconditioned operator (494_bus unpreconditioned: kappa 2.4e6, 2e-10 seen on 3
    // ranks), so the tolerance follows kappa: that of A without a preconditioner, else that of
    // D^-1 A (Jacobi's; Chebyshev's and IC(0)'s operators are better conditioned on these
    // matrices, where they stay below 2e-12).
    const auto condition = [&global](bool jacobi_scaled) {
      const std::vector<double> lambda = eigenvalues(global, jacobi_scaled);
      return lambda.back() / lambda.front();
    };
    const double kappa[2] = {condition(false), condition(true)};
    for (auto pc : {cg_preconditioner::none, cg_preconditioner::jacobi, cg_preconditioner::chebyshev,
                    cg_preconditioner::block_ic0}) {
      const double rounding = std::max(
          1e-10, 8 * std::numeric_limits<double>::epsilon() * kappa[pc == cg_preconditioner::none ? 0 : 1]);
      serial_preconditioner m(global, pc, comm.size());
      const int degree = 3;  // the default
      if (pc == cg_preconditioner::chebyshev)
        m.polynomial(
            hetero::cg_solver<>(a, {.preconditioner = pc, .polynomial_degree = degree}).preconditioner_interval(),
            degree);
      const std::vector<double> b = random_vector(global.global_rows(), stream++);
      const std::vector<double> reference = serial_pcg(global, m, b, k);
      for (auto v : {cg_variant::allgather, cg_variant::halo, cg_variant::pipelined}) {
        for (auto kernels : {hetero::cg_kernels::space, hetero::cg_kernels::serial}) {
          INFO(global.global_rows() << " rows, " << hetero::to_string(pc) << ", " << hetero::to_string(v) << ", "
                                    << hetero::to_string(kernels));
          hetero::cg_solver<> cg(a, {.variant = v,
                                     .preconditioner = pc,
                                     .polynomial_degree = degree,
                                     .kernels = kernels,
                                     .max_iterations = k,
                                     .fixed_iterations = true});
          CHECK(cg.preconditioner() == pc);
          if (pc == cg_preconditioner::block_ic0) CHECK(cg.preconditioner_shift() == m.shift());
          auto x = a.make_halo_vector();
          const hetero::cg_result result = cg.solve(rows_of(a, b), x);
          CHECK(result.iterations == k);
          // The pipelined recurrences round differently (up to 4x the classic distance seen),
          // yet a step whose z update is 0.1 % off fails here.
          INFO("tolerance " << rounding << " (kappa " << kappa[0] << ", D^-1 A: " << kappa[1] << ")");
          CHECK(distance(a, x, reference) < (v == cg_variant::pipelined ? 10 : 1) * rounding);
        }
      }
    }
  }
}

TEST_CASE("a preconditioner converges where plain CG runs out of iterations", "[linalg][cg][preconditioner]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  // bcsstk14 (1,806 rows), b = 1, tolerance 1e-8: plain CG does not converge in 1,000
  // iterations (it needs over 5,000).
  const matrix a(hetero::read_matrix_market_file(dir + "/bcsstk14.mtx.gz", {.require_spd = true}), comm);
  auto b = a.make_vector();
  Kokkos::deep_copy(b, 1.0);
  const auto solve_with = [&](cg_preconditioner pc, cg_variant v, int max_iterations) {
    hetero::cg_solver<> cg(a, {.variant = v, .preconditioner = pc, .max_iterations = max_iterations});
    auto x = a.make_halo_vector();
    return cg.solve(b, x);
  };
  const hetero::cg_result plain = solve_with(cg_preconditioner::none, cg_variant::halo, 1000);
  CHECK_FALSE(plain.converged);
  for (auto v : {cg_variant::halo, cg_variant::pipelined}) {
    INFO(hetero::to_string(v));
    const hetero::cg_result ic = solve_with(cg_preconditioner::block_ic0, v, 1000);
    CHECK(ic.converged);
    CHECK(ic.residual <= 1e-8);
    const hetero::cg_result jacobi = solve_with(cg_preconditioner::jacobi, v, 10000);
    CHECK(jacobi.converged);
    CHECK(jacobi.residual <= 1e-8);
    CHECK(ic.iterations < jacobi.iterations);
  }
}

TEST_CASE("bad diagonals and factorisations that break down are named on every rank",
          "[linalg][cg][preconditioner][errors]") {
  hetero::communicator comm;
  const std::int64_t n = 30;
  const auto tridiagonal = [&](double diagonal_of_7, bool store_7) {
    std::vector<hetero::matrix_entry<double>> entries;
    for (std::int64_t i = 0; i < n; ++i) {
      if (i != 7 || store_7) entries.push_back({i, i, i == 7 ? diagonal_of_7 : 4.0});
      if (i + 1 < n) {
        entries.push_back({i, i + 1, -1.0});
        entries.push_back({i + 1, i, -1.0});
      }
    }
    return hetero::csr_matrix<double>(n, n, 0, n, std::move(entries));
  };
  const matrix negative(tridiagonal(-1.0, true), comm);
  const matrix missing(tridiagonal(0.0, false), comm);
  for (auto pc : {cg_preconditioner::jacobi, cg_preconditioner::chebyshev, cg_preconditioner::block_ic0}) {
    INFO(hetero::to_string(pc));
    CHECK_THROWS_WITH(hetero::cg_solver<>(negative, {.preconditioner = pc}),
                      ContainsSubstring("row 7's diagonal entry is -1") && ContainsSubstring("positive diagonal"));
    CHECK_THROWS_WITH(hetero::cg_solver<>(missing, {.preconditioner = pc}),
                      ContainsSubstring("row 7's diagonal entry is 0"));
  }
  // Off-diagonal entries 10 beside a diagonal of 1: no shift up to 1 + 2.048 makes a pivot
  // positive (and the matrix is not SPD).
  const matrix hopeless(paired_matrix(n, 1.0, 10.0), comm);
  CHECK_THROWS_WITH(hetero::cg_solver<>(hopeless, {.preconditioner = cg_preconditioner::block_ic0}),
                    ContainsSubstring("breaks down") && ContainsSubstring("allowed for such a matrix: jacobi"));
  // Kershaw's matrix breaks IC(0) down unshifted: the shift is reported, and the solve converges.
  const matrix k(kershaw(30), comm);
  hetero::cg_solver<> cg(k, {.preconditioner = cg_preconditioner::block_ic0, .tolerance = 1e-10});
  CHECK(cg.preconditioner_shift() > 0);
  auto b = k.make_vector(), x = k.make_halo_vector();
  Kokkos::deep_copy(b, 1.0);
  const hetero::cg_result r = cg.solve(b, x);
  CHECK(r.converged);
  CHECK(hetero::to_string(cg_preconditioner::none) == "none");
  CHECK(hetero::to_string(cg_preconditioner::jacobi) == "jacobi");
  CHECK(hetero::to_string(cg_preconditioner::chebyshev) == "chebyshev");
  CHECK_THROWS_WITH(
      hetero::cg_solver<>(k, {.preconditioner = cg_preconditioner::chebyshev, .polynomial_degree = 0}),
      ContainsSubstring("polynomial_degree is 0; allowed: 1 to 64"));
  CHECK(hetero::to_string(cg_preconditioner::block_ic0) == "block_ic0");
}

TEST_CASE("the Chebyshev interval covers the spectrum of D^-1 A", "[linalg][cg][preconditioner]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  for (const auto& global :
       {whole(hetero::poisson_2d(24)), hetero::read_matrix_market_file(dir + "/bcsstk14.mtx.gz"),
        hetero::read_matrix_market_file(dir + "/1138_bus.mtx.gz")}) {
    const matrix a(global, comm);
    const auto [lower, upper] =
        hetero::cg_solver<>(a, {.preconditioner = cg_preconditioner::chebyshev}).preconditioner_interval();
    // The serial reference: the largest eigenvalue of D^-1/2 A D^-1/2 (that of D^-1 A).
    const double largest = eigenvalues(global, true).back();
    INFO(global.global_rows() << " rows: upper " << upper << ", largest eigenvalue " << largest);
    // Lanczos' Ritz value (upper / 1.1) lies below the largest eigenvalue, and not far.
    CHECK(upper >= largest);
    CHECK(upper / 1.1 <= largest);
    CHECK(lower == upper / 30);
  }
}

TEST_CASE("automatic races the preconditioners and keeps the fastest or one near it, alike on every rank",
          "[linalg][cg][preconditioner]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  // The case: bcsstk14, b = 1, tolerance 1e-8, the default options.
  const matrix a(hetero::read_matrix_market_file(dir + "/bcsstk14.mtx.gz", {.require_spd = true}), comm);
  hetero::cg_solver<> cg(a);
  auto b = a.make_vector(), x = a.make_halo_vector();
  Kokkos::deep_copy(b, 1.0);
  const hetero::cg_result r = cg.solve(b, x);
  CHECK(r.converged);
  CHECK(r.residual <= 1e-8);
  CHECK(cg.preconditioner() != cg_preconditioner::automatic);
  REQUIRE(cg.trials().size() == 4);
  const cg_preconditioner order[] = {cg_preconditioner::block_ic0, cg_preconditioner::jacobi,
                                     cg_preconditioner::chebyshev, cg_preconditioner::none};
  // The race's rule: among those that converged in their trial (one that did not was slower
  // than the best so far), or among all when none converged, the fastest (least estimated
  // solve time, setup left out) and those that need k times fewer estimated iterations within
  // min(k, 3) times the margin of it; of these the fewest estimated iterations.
  double least = std::numeric_limits<double>::infinity();
  bool any_converged = false;
  for (std::size_t i = 0; i < 4; ++i) {
    const hetero::cg_trial& t = cg.trials()[i];
    INFO(hetero::to_string(t.preconditioner) << ": " << t.iterations << " iterations, residual " << t.residual
                                             << ", estimated " << t.estimated_seconds << " s");
    CHECK(t.preconditioner == order[i]);
    CHECK(t.available);
    CHECK(t.setup_seconds >= 0);
    CHECK(t.iterations > 0);
    CHECK(t.estimated_seconds == hetero::estimated_seconds(t, 1e-8));
    any_converged = any_converged || t.residual <= 1e-8;
  }
  const auto solve_seconds = [](const hetero::cg_trial& t) { return hetero::estimated_solve_seconds(t, 1e-8); };
  const hetero::cg_trial* fastest = nullptr;
  for (const hetero::cg_trial& t : cg.trials())
    if ((!any_converged || t.residual <= 1e-8) && (fastest == nullptr || solve_seconds(t) < least)) {
      fastest = &t;
      least = solve_seconds(t);
    }
  REQUIRE(fastest != nullptr);
  const double pace = hetero::estimated_iterations(*fastest, 1e-8);
  cg_preconditioner kept = fastest->preconditioner;
  double fewest = pace;
  for (const hetero::cg_trial& t : cg.trials()) {
    const double iterations = hetero::estimated_iterations(t, 1e-8);
    const double tie = hetero::cg_race_margin * std::min(3.0, std::max(1.0, pace / iterations));
    if ((!any_converged || t.residual <= 1e-8) && solve_seconds(t) <= least * (1 + tie) && iterations < fewest) {
      kept = t.preconditioner;
      fewest = iterations;
    }
  }
  CHECK(cg.preconditioner() == kept);
  // Every rank chose the same.
  const int mine = static_cast<int>(cg.preconditioner());
  CHECK(comm.allreduce(hetero::send_buf(mine), hetero::op(hetero::ops::min{})) == mine);
  CHECK(comm.allreduce(hetero::send_buf(mine), hetero::op(hetero::ops::max{})) == mine);
  // A named preconditioner runs no race.
  CHECK(hetero::cg_solver<>(a, {.preconditioner = cg_preconditioner::jacobi}).trials().empty());
}

TEST_CASE("a candidate's estimated time to the tolerance", "[linalg][cg][preconditioner]") {
  hetero::cg_trial t{.setup_seconds = 0.5, .iterations = 10, .seconds_per_iteration = 0.1, .residual = 1e-2};
  // 10 iterations gave 2 decades: 40 give the 8 of 1e-8.
  CHECK(std::abs(hetero::estimated_seconds(t, 1e-8) - (0.5 + 40 * 0.1)) < 1e-12);
  t.residual = 1e-9;  // converged: its own iterations
  CHECK(hetero::estimated_seconds(t, 1e-8) == 0.5 + 10 * 0.1);
  t.residual = 1.5;  // no progress
  CHECK(hetero::estimated_seconds(t, 1e-8) == std::numeric_limits<double>::infinity());
  t.residual = 1e-2;
  t.available = false;
  CHECK(hetero::estimated_seconds(t, 1e-8) == std::numeric_limits<double>::infinity());
}

TEST_CASE("the race and its choice are trace regions", "[linalg][cg][preconditioner]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  const matrix a(hetero::read_matrix_market_file(dir + "/nos3.mtx.gz"), comm);
  hetero::testing::region_recorder regions("linalg");
  cg_preconditioner kept = cg_preconditioner::automatic;
  {
    const hetero::scoped_observer listening(regions);
    const hetero::cg_solver<> cg(a);
    kept = cg.preconditioner();
  }
  CHECK(regions.parts("cg preconditioner trial") ==
        std::vector<std::string>{"block_ic0", "jacobi", "chebyshev", "none"});
  // "<name>, <seconds> s to the tolerance in its trial", after the trials
  const auto chosen = regions.parts("cg preconditioner chosen");
  REQUIRE(chosen.size() == 1);
  CHECK(chosen[0].rfind(std::string(hetero::to_string(kept)) + ", ", 0) == 0);
  CHECK_THAT(chosen[0], Catch::Matchers::EndsWith(" s to the tolerance in its trial"));
  CHECK(regions.seen().back().first == "cg preconditioner chosen");
  // A named preconditioner opens none.
  hetero::testing::region_recorder none("linalg");
  {
    const hetero::scoped_observer listening(none);
    const hetero::cg_solver<> named(a, {.preconditioner = cg_preconditioner::jacobi});
  }
  CHECK(none.seen().empty());
}

TEST_CASE("the race keeps the fewest iterations among those tied with the fastest",
          "[linalg][cg][preconditioner]") {
  const auto trial = [](cg_preconditioner pc, int iterations, double residual, double seconds) {
    hetero::cg_trial t{.preconditioner = pc, .iterations = iterations, .residual = residual};
    t.seconds_per_iteration = seconds / iterations;
    t.estimated_seconds = hetero::estimated_seconds(t, 1e-8);
    return t;
  };
  const double m = hetero::cg_race_margin;
  // Converged: 40 iterations within the margin of the fastest beat 80.
  std::vector<hetero::cg_trial> t{trial(cg_preconditioner::block_ic0, 40, 1e-9, 1 + m / 2),
                                  trial(cg_preconditioner::none, 80, 1e-9, 1)};
  CHECK(hetero::chosen_trial(t, 1e-8) == 0);
  // Half the iterations are tied within twice the margin; beyond it, the faster.
  t[0] = trial(cg_preconditioner::block_ic0, 40, 1e-9, 1 + 1.9 * m);
  CHECK(hetero::chosen_trial(t, 1e-8) == 0);
  t[0] = trial(cg_preconditioner::block_ic0, 40, 1e-9, 1 + 2.1 * m);
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  // A third of the iterations (Poisson 16^3: block_ic0's 20 against none's 60 on the race's
  // right-hand side), within three times the margin; a tenth, no more than that.
  t = {trial(cg_preconditioner::block_ic0, 20, 1e-9, 1 + 2.9 * m), trial(cg_preconditioner::none, 60, 1e-9, 1)};
  CHECK(hetero::chosen_trial(t, 1e-8) == 0);
  t = {trial(cg_preconditioner::block_ic0, 10, 1e-9, 1 + 3.1 * m), trial(cg_preconditioner::none, 100, 1e-9, 1)};
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  // More iterations than the fastest: tied within the margin, but never kept over it.
  t = {trial(cg_preconditioner::jacobi, 60, 1e-9, 1 + m / 2), trial(cg_preconditioner::chebyshev, 50, 1e-9, 1)};
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  // The ties themselves.
  CHECK(std::abs(hetero::cg_race_tie(60, 20) - 3 * m) < 1e-12);
  CHECK(std::abs(hetero::cg_race_tie(80, 40) - 2 * m) < 1e-12);
  CHECK(hetero::cg_race_tie(50, 50) == m);
  CHECK(hetero::cg_race_tie(20, 60) == m);
  CHECK(hetero::cg_race_tie(1000, 10) == hetero::cg_race_widest_tie);
  CHECK(std::abs(hetero::cg_race_tie(75, 50) - 1.5 * m) < 1e-12);
  CHECK(hetero::cg_race_tie(10, 0) == hetero::cg_race_widest_tie);  // k without bound
  CHECK(hetero::cg_race_tie(std::numeric_limits<double>::quiet_NaN(), 10) == m);
  // 1.5 times fewer iterations: tied within 15 %.
  t = {trial(cg_preconditioner::block_ic0, 40, 1e-9, 1 + 1.4 * m), trial(cg_preconditioner::none, 60, 1e-9, 1)};
  CHECK(hetero::chosen_trial(t, 1e-8) == 0);
  t[0] = trial(cg_preconditioner::block_ic0, 40, 1e-9, 1 + 1.6 * m);
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  // Three: the fewest iterations (20, 5x fewer than the fastest's 100) is not tied at 1.35, the
  // middle one (50, 2x fewer) is at 1.15.
  t = {trial(cg_preconditioner::block_ic0, 20, 1e-9, 1 + 3.5 * m),
       trial(cg_preconditioner::jacobi, 50, 1e-9, 1 + 1.5 * m), trial(cg_preconditioner::none, 100, 1e-9, 1)};
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  // One that did not converge loses to one that did, whatever its estimate.
  t = {trial(cg_preconditioner::block_ic0, 10, 1e-2, 0.01), trial(cg_preconditioner::jacobi, 300, 1e-9, 5)};
  CHECK(hetero::estimated_solve_seconds(t[0], 1e-8) < hetero::estimated_solve_seconds(t[1], 1e-8));
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  // None converged: the estimates and the iterations they need (20 at 1e-1 need 160, 10 at
  // 1e-2 need 40: 4 times fewer, tied within 30 %).
  t = {trial(cg_preconditioner::chebyshev, 20, 1e-1, 0.2), trial(cg_preconditioner::block_ic0, 10, 1e-2, 0.425)};
  CHECK(std::abs(hetero::estimated_iterations(t[0], 1e-8) - 160) < 1e-9);
  CHECK(std::abs(hetero::estimated_iterations(t[1], 1e-8) - 40) < 1e-9);
  CHECK(hetero::estimated_solve_seconds(t[1], 1e-8) > hetero::estimated_solve_seconds(t[0], 1e-8));
  CHECK(hetero::estimated_solve_seconds(t[1], 1e-8) < hetero::estimated_solve_seconds(t[0], 1e-8) * (1 + m));
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  t[1] = trial(cg_preconditioner::block_ic0, 10, 1e-2, 0.53);  // 2.12 s against 1.6: beyond 30 %
  CHECK(hetero::chosen_trial(t, 1e-8) == 0);
  // Setups are paid in the race whichever wins: left out.
  t = {trial(cg_preconditioner::block_ic0, 40, 1e-9, 1), trial(cg_preconditioner::none, 80, 1e-9, 1.5)};
  t[0].setup_seconds = 10;
  t[0].estimated_seconds = hetero::estimated_seconds(t[0], 1e-8);
  CHECK(t[0].estimated_seconds > t[1].estimated_seconds);
  CHECK(std::abs(hetero::estimated_solve_seconds(t[0], 1e-8) - 1) < 1e-12);
  CHECK(hetero::chosen_trial(t, 1e-8) == 0);
  // Equal iterations: the faster, and of equal times the first. No progress, or not available:
  // never; nothing: trials.size().
  t = {trial(cg_preconditioner::jacobi, 50, 1e-9, 1), trial(cg_preconditioner::chebyshev, 50, 1e-9, 1)};
  CHECK(hetero::chosen_trial(t, 1e-8) == 0);
  t[0] = trial(cg_preconditioner::jacobi, 50, 1e-9, 1 + m / 2);
  CHECK(hetero::chosen_trial(t, 1e-8) == 1);
  t = {trial(cg_preconditioner::jacobi, 50, 1.0, 1), trial(cg_preconditioner::chebyshev, 50, 1e-9, 1)};
  t[1].available = false;
  CHECK(hetero::chosen_trial(t, 1e-8) == t.size());
  // As the race records one it could not build: no iterations, no time; infinite, not NaN.
  const hetero::cg_trial refused{.preconditioner = cg_preconditioner::block_ic0, .available = false};
  CHECK(hetero::estimated_solve_seconds(refused, 1e-8) == std::numeric_limits<double>::infinity());
  CHECK(hetero::estimated_solve_seconds(t[0], 1e-8) == std::numeric_limits<double>::infinity());
  CHECK(hetero::chosen_trial({}, 1e-8) == 0);
}

TEST_CASE("the race's budgets: the first runs its cap, then equal time until one converges, then the best solve",
          "[linalg][cg][preconditioner]") {
  const auto trial = [](cg_preconditioner pc, int iterations, double residual, double seconds) {
    hetero::cg_trial t{.preconditioner = pc, .iterations = iterations, .residual = residual};
    t.seconds_per_iteration = seconds / iterations;
    return t;
  };
  const auto near = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<hetero::cg_trial> t;
  CHECK(hetero::trial_budget_seconds(t, 1e-8) == inf);  // the first: its iteration cap
  CHECK(hetero::least_solve_seconds(t, 1e-8) == inf);
  // One that could not be built sets no time, nor one that made no progress.
  t.push_back({.preconditioner = cg_preconditioner::block_ic0, .available = false});
  CHECK(hetero::trial_budget_seconds(t, 1e-8) == inf);
  t.push_back(trial(cg_preconditioner::block_ic0, 3, 1.5, 0.001));
  CHECK(hetero::trial_budget_seconds(t, 1e-8) == inf);
  // None converged: the time the first that ran took, whatever the estimates say.
  t.push_back(trial(cg_preconditioner::jacobi, 1000, 1e-4, 0.5));
  t.push_back(trial(cg_preconditioner::chebyshev, 300, 1e-6, 0.55));
  CHECK(near(hetero::trial_budget_seconds(t, 1e-8), 0.5));
  CHECK(near(hetero::least_solve_seconds(t, 1e-8), hetero::estimated_solve_seconds(t[3], 1e-8)));
  CHECK(hetero::estimated_solve_seconds(t[3], 1e-8) < 1);  // 400 iterations, 0.73 s
  // One converged: the least solve time of those that did.
  t.push_back(trial(cg_preconditioner::none, 2000, 1e-9, 0.9));
  CHECK(near(hetero::trial_budget_seconds(t, 1e-8), 0.9));
  CHECK(near(hetero::least_solve_seconds(t, 1e-8), 0.9));
  t.push_back(trial(cg_preconditioner::block_ic0, 100, 5e-9, 0.3));
  CHECK(near(hetero::trial_budget_seconds(t, 1e-8), 0.3));
  CHECK(hetero::chosen_trial(t, 1e-8) == 5);
}

TEST_CASE(
    "where no candidate converges in its first trial, the race runs again until one does and keeps one that "
    "converged",
    "[linalg][cg][preconditioner][hard]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  // nos2 (cond ~ 5e9): block_ic0, run first, does not reach 1e-8 in its 1000 iterations (8e-8),
  // and the others stop at its time, most of them short of it too. Ranked by estimates, plain
  // CG's early rate flattered it, and the race kept it: 30,000 iterations to 1e-8 on b = A 1,
  // where the others need 1,300-3,400. Run again with 4x the time, they converge, and the race
  // keeps one that did. Which one depends on the times (on a quiet machine block_ic0 or
  // chebyshev: docs/results/linalg.md; under this suite's parallel load any), so it is not
  // checked here.
  const matrix a(hetero::read_matrix_market_file(dir + "/nos2.mtx.gz", {.require_spd = true}), comm);
  hetero::cg_solver<> cg(a, {.max_iterations = 100000});
  REQUIRE(cg.trials().size() == 4);
  CHECK(cg.trials()[0].preconditioner == cg_preconditioner::block_ic0);
  const auto kept = std::find_if(cg.trials().begin(), cg.trials().end(), [&](const hetero::cg_trial& t) {
    return t.preconditioner == cg.preconditioner();
  });
  REQUIRE(kept != cg.trials().end());
  for (const hetero::cg_trial& t : cg.trials())
    UNSCOPED_INFO(hetero::to_string(t.preconditioner)
                  << ": " << t.iterations << " iterations, residual " << t.residual);
  CHECK(kept->iterations > 0);
  auto ones = a.make_halo_vector(), b = a.make_vector(), x = a.make_halo_vector();
  Kokkos::deep_copy(ones, 1.0);
  a.multiply_halo(ones, b);
  const hetero::cg_result r = cg.solve(b, x);
  INFO(hetero::to_string(cg.preconditioner()) << ": " << r.iterations << " iterations, residual " << r.residual);
  CHECK(r.converged);
  // The passes are timed: where the load starved every candidate's trials (other tests beside
  // these ranks on 2 cores), none may have converged in the 3 passes, and the race kept the best
  // estimate. Reported as skipped, not passed.
  if (std::none_of(cg.trials().begin(), cg.trials().end(),
                   [](const hetero::cg_trial& t) { return t.available && t.residual <= 1e-8; }))
    SKIP("no candidate converged in the race's passes: which one was kept is not checked");
  CHECK(kept->residual <= 1e-8);  // one that converged in its trial
}

TEST_CASE("a solve that does not converge returns the best iterate it saw", "[linalg][cg][preconditioner][hard]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  // nos7 below its attainable accuracy: Jacobi-preconditioned CG reaches ~1e-8, then wanders
  // off until the divergence or stagnation test stops it, its last iterate's residual near 1.
  const auto global = hetero::read_matrix_market_file(dir + "/nos7.mtx.gz", {.require_spd = true});
  const matrix a(global, comm);
  const auto n = static_cast<std::size_t>(global.global_rows());
  const std::vector<double> ones(n, 1.0);
  std::vector<double> b_all(n);
  global.multiply(ones, b_all);
  for (auto v : {cg_variant::halo, cg_variant::pipelined}) {
    INFO(hetero::to_string(v));
    hetero::cg_solver<> cg(
        a,
        {.variant = v, .preconditioner = cg_preconditioner::jacobi, .tolerance = 1e-9, .max_iterations = 100000});
    auto x = a.make_vector();
    const hetero::cg_result r = cg.solve(rows_of(a, b_all), x);
    CHECK_FALSE(r.converged);
    CHECK(r.residual < 1e-6);
    // The reported residual is that of the x returned (a serial product over the whole matrix).
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
    std::vector<double> mine(hx.data(), hx.data() + a.local_rows()), x_all(n), ax(n);
    std::vector<int> counts;
    for (const auto c : a.row_counts()) counts.push_back(static_cast<int>(c));
    comm.allgatherv(hetero::send_buf(mine), hetero::recv_buf(x_all), hetero::recv_counts(counts));
    global.multiply(x_all, ax);
    double rr = 0, bb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      rr += (b_all[i] - ax[i]) * (b_all[i] - ax[i]);
      bb += b_all[i] * b_all[i];
    }
    CHECK(std::abs(std::sqrt(rr / bb) - r.residual) <= 1e-3 * r.residual);
  }
}

// CG on hard problems, with random right-hand sides drawn fresh: on ill-conditioned SuiteSparse
// matrices (structural stiffness, Lanczos set, condition numbers up to ~1e12) every variant, the
// pipelined one included, reaches the tolerance, checked by a serial residual over the whole
// matrix; the pipelined variant's iterations stay within a bound of the classic variants';
// a matrix on which CG diverges ends as `diverged`, an inconsistent singular one as
// `stagnated`; `automatic` chooses the same variant on every rank and says what it measured.
#include <hetero/comm.hpp>
#include <hetero/linalg.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;
using matrix = hetero::distributed_csr<>;

namespace {

struct run {
  hetero::cg_result result;
  double serial_residual;  // ||b - A x|| / ||b|| by a serial loop over the global matrix
};

// Solves A x = b for b = A x* with a random x* (the same on every rank) from x = 0.
run solve(const hetero::communicator& comm, const hetero::csr_matrix<double>& global, hetero::cg_options options,
          std::uint64_t stream, double shift = 0) {
  const matrix a(global, comm);
  const auto n = static_cast<std::size_t>(global.global_rows());
  auto gen = hetero::testing::rng(stream);
  std::normal_distribution<double> normal;
  std::vector<double> x_star(n), b_all(n);
  for (auto& v : x_star) v = normal(gen);
  global.multiply(x_star, b_all);
  for (auto& v : b_all) v += shift;  // a part outside A's range, when A is singular
  auto b = a.make_vector(), x = a.make_vector();
  auto hb = Kokkos::create_mirror_view(b);
  const auto first = static_cast<std::size_t>(a.rows().begin);
  for (std::size_t i = 0; i < a.local_rows(); ++i) hb(i) = b_all[first + i];
  Kokkos::deep_copy(b, hb);
  hetero::cg_solver<> cg(a, options);
  run out{cg.solve(b, x), 0};
  // Gather x and compute the residual serially on every rank.
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  std::vector<double> mine(hx.data(), hx.data() + a.local_rows()), x_all(n);
  std::vector<int> counts;
  for (const auto c : a.row_counts()) counts.push_back(static_cast<int>(c));
  comm.allgatherv(hetero::send_buf(mine), hetero::recv_buf(x_all), hetero::recv_counts(counts));
  std::vector<double> ax(n);
  global.multiply(x_all, ax);
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    rr += (b_all[i] - ax[i]) * (b_all[i] - ax[i]);
    bb += b_all[i] * b_all[i];
  }
  out.serial_residual = std::sqrt(rr / bb);
  return out;
}

hetero::csr_matrix<double> suite_sparse(const std::string& name) {
  return hetero::read_matrix_market_file(std::string(HETERO_MATRIX_DIR) + "/" + name + ".mtx.gz",
                                         {.require_spd = true});
}

}  // namespace

TEST_CASE("ill-conditioned matrices: every variant reaches the tolerance", "[linalg][cg][hard]") {
  hetero::communicator comm;
  std::uint64_t stream = 100;
  // bcsstk20 (condition ~4e12) is the hardest: the pipelined variant needed up to 1.34x the
  // classic iterations there (docs/results/linalg.md), and the Ghysels-Vanroose form it replaced sometimes
  // stagnated.
  for (const char* name : {"bcsstk20", "nos7", "bcsstk06", "nos1", "494_bus"}) {
    const auto global = suite_sparse(name);
    int classic = 0;
    for (const auto v : {hetero::cg_variant::allgather, hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
      const run r = solve(comm, global,
                          {.variant = v,
                           .preconditioner = hetero::cg_preconditioner::none,  // plain CG: the same iterates
                           .tolerance = 1e-8,
                           .max_iterations = 40000},
                          stream);
      INFO(name << " " << hetero::to_string(v) << ": " << r.result.iterations << " iterations, status "
                << hetero::to_string(r.result.status) << ", residual " << r.result.residual << ", serial "
                << r.serial_residual << ", replacements " << r.result.replacements);
      // The reported residual is the true one, whatever the status.
      CHECK(std::abs(r.serial_residual - r.result.residual) <= 1e-3 * r.serial_residual + 1e-15);
      CHECK(r.result.converged == (r.result.status == hetero::cg_status::converged));
      CHECK(r.result.status == hetero::cg_status::converged);
      CHECK(r.serial_residual <= 1e-8);
      if (v == hetero::cg_variant::allgather) classic = r.result.iterations;
      // The same products and dot products, bit for bit, on any topology, thread count and
      // kernel choice (detail::dot): the same iterations.
      if (v == hetero::cg_variant::halo) CHECK(r.result.iterations == classic);
      // A guard, not the goal (median 1.00-1.15x per matrix over right-hand sides, docs/results/linalg.md):
      // the iteration counts of ill-conditioned matrices move by 10-30 % with b and rank count.
      if (v == hetero::cg_variant::pipelined) CHECK(r.result.iterations <= 2 * classic);
    }
    ++stream;
  }
}

TEST_CASE("CG that cannot converge stops early and says why", "[linalg][cg][hard]") {
  hetero::communicator comm;
  const std::int64_t n = 200;
  SECTION("a singular system with no solution stagnates") {
    // The 1-D Laplacian with free ends: positive semi-definite, its null space the constants. A
    // right-hand side with a constant part has no solution.
    std::vector<hetero::matrix_entry<double>> entries;
    for (std::int64_t i = 0; i < n; ++i) {
      entries.push_back({i, i, (i == 0 || i == n - 1) ? 1.0 : 2.0});
      if (i + 1 < n) {
        entries.push_back({i, i + 1, -1.0});
        entries.push_back({i + 1, i, -1.0});
      }
    }
    const hetero::csr_matrix<double> global(n, n, 0, n, std::move(entries));
    for (const auto v : {hetero::cg_variant::allgather, hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
      const run r =
          solve(comm, global, {.variant = v, .max_iterations = 100000, .stagnation_iterations = 500}, 7, 1.0);
      INFO(hetero::to_string(v) << ": " << r.result.iterations << " iterations, "
                                << hetero::to_string(r.result.status) << ", residual " << r.result.residual);
      // The residual stalls at the right-hand side's constant part, then x runs away: either
      // way the solve ends long before max_iterations, not converged.
      CHECK((r.result.status == hetero::cg_status::stagnated || r.result.status == hetero::cg_status::diverged));
      CHECK_FALSE(r.result.converged);
      CHECK(r.result.iterations < 5000);
    }
  }
  SECTION("a non-symmetric matrix on which the residual grows diverges") {
    // I + c S with S skew-symmetric: p'Ap = p'p > 0 always, but CG's recurrences are wrong.
    auto gen = hetero::testing::rng(8);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<hetero::matrix_entry<double>> entries;
    for (std::int64_t i = 0; i < n; ++i) {
      entries.push_back({i, i, 1.0});
      for (std::int64_t j : {i + 1, i + 7}) {
        if (j >= n) continue;
        const double s = 50 * u(gen);
        entries.push_back({i, j, s});
        entries.push_back({j, i, -s});
      }
    }
    const hetero::csr_matrix<double> global(n, n, 0, n, std::move(entries));
    for (const auto v : {hetero::cg_variant::allgather, hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
      // Either the residual's growth stops it, or a p'Ap <= 0 (computed through the pipelined
      // recurrences) shows the matrix is not SPD: never the iteration cap, never a hang.
      try {
        const run r = solve(comm, global, {.variant = v, .max_iterations = 100000, .divergence = 1e6}, 9);
        INFO(hetero::to_string(v) << ": " << r.result.iterations << " iterations, "
                                  << hetero::to_string(r.result.status) << ", residual " << r.result.residual);
        CHECK((r.result.status == hetero::cg_status::diverged || r.result.status == hetero::cg_status::stagnated));
        CHECK(r.result.iterations < 100000);
      } catch (const hetero::invalid_argument& e) {
        INFO(hetero::to_string(v));
        CHECK_THAT(e.what(), ContainsSubstring("not symmetric positive definite"));
      }
    }
  }
}

TEST_CASE("automatic chooses one variant on every rank, from what it measured", "[linalg][cg]") {
  hetero::communicator comm;
  const matrix a(hetero::poisson_3d(12), comm);
  const hetero::cg_solver<> cg(a);
  CHECK(cg.variant() != hetero::cg_variant::automatic);
  const auto [allreduce, product] = cg.measured_allreduce_and_product();
  CHECK(allreduce > 0);
  CHECK(product > 0);
  const double gathered = cg.measured_gathered_product();
  CHECK(gathered > 0);
  CHECK((comm.size() > 1) == std::isfinite(gathered));  // tried on several ranks only
  // The rule: pipelined only where an allreduce costs more than a halo product, never on one
  // rank; else, where the two products are close, the faster of the halo and the allgather
  // variant in whole iterations, with the preconditioner in place; else the faster product.
  const bool pipelined = allreduce > product && comm.size() > 1;
  const auto [halo_iteration, gathered_iteration] = cg.measured_halo_and_allgather_iterations();
  const bool close =
      std::max(gathered, product) <= hetero::cg_solver<>::close_products * std::min(gathered, product);
  const bool compared = !pipelined && close;
  CHECK((halo_iteration > 0) == compared);
  CHECK((gathered_iteration > 0) == compared);
  const bool gather = compared ? gathered_iteration < halo_iteration : gathered < product;
  const auto expected = pipelined ? hetero::cg_variant::pipelined
                        : gather  ? hetero::cg_variant::allgather
                                  : hetero::cg_variant::halo;
  CHECK(cg.variant() == expected);
  // A named variant measures nothing.
  const hetero::cg_solver<> named(a, {.variant = hetero::cg_variant::halo});
  CHECK(named.measured_halo_and_allgather_iterations() == std::pair<double, double>{0.0, 0.0});
  std::vector<int> chosen{static_cast<int>(cg.variant())}, all(static_cast<std::size_t>(comm.size()));
  comm.allgather(hetero::send_buf(chosen), hetero::recv_buf(all));
  for (const int c : all) CHECK(c == chosen[0]);
  CHECK_THROWS_WITH(hetero::cg_solver<>(a, {.divergence = 1.0}), ContainsSubstring("divergence"));
  CHECK_THROWS_WITH(hetero::cg_solver<>(a, {.replacement_interval = -1}),
                    ContainsSubstring("replacement_interval"));
}

TEST_CASE("the default stagnation window holds for matrices of any size", "[linalg][cg]") {
  // 10 x rows, at least 1000; beyond 214,748,364 rows 10 x rows is past an int, where the window
  // once wrapped to a negative count and ended every solve at its first slow iteration.
  std::mt19937_64 rng(std::random_device{}());
  const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(100, 200'000'000)(rng);
  CHECK(hetero::detail::default_stagnation_window(rows) == std::max<std::int64_t>(1000, 10 * rows));
  CHECK(hetero::detail::default_stagnation_window(1) == 1000);
  CHECK(hetero::detail::default_stagnation_window(268'435'456) == std::numeric_limits<int>::max());  // 16384^2
  CHECK(hetero::detail::default_stagnation_window(std::int64_t{1} << 40) == std::numeric_limits<int>::max());
}

TEST_CASE("a product that overflows ends the solve as diverged and is not taken for a matrix that is not SPD",
          "[linalg][cg]") {
  // 2 x 2 blocks [[1e308, -0.9e308], [-0.9e308, 1e308]] (SPD) and b = 3: the first product A p
  // is inf - inf (3e308 overflows), so p'Ap is NaN on every rank. Before, the classic variants
  // and the pipelined one's first iteration raised "not symmetric positive definite".
  hetero::communicator comm;
  auto gen = hetero::testing::rng(10);
  const std::int64_t n = 2 * std::uniform_int_distribution<std::int64_t>(2, 40)(gen);
  std::vector<hetero::matrix_entry<double>> entries;
  for (std::int64_t i = 0; i < n; i += 2) {
    entries.push_back({i, i, 1e308});
    entries.push_back({i, i + 1, -0.9e308});
    entries.push_back({i + 1, i, -0.9e308});
    entries.push_back({i + 1, i + 1, 1e308});
  }
  const matrix a(hetero::csr_matrix<double>(n, n, 0, n, std::move(entries)), comm);
  for (const auto v : {hetero::cg_variant::allgather, hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
    hetero::cg_solver<> cg(a, {.variant = v, .preconditioner = hetero::cg_preconditioner::none});
    auto b = a.make_vector(), x = a.make_vector();
    Kokkos::deep_copy(b, 3.0);
    const auto result = cg.solve(b, x);
    INFO(hetero::to_string(v) << ": " << result.iterations << " iterations, " << hetero::to_string(result.status));
    CHECK(result.status == hetero::cg_status::diverged);
    CHECK_FALSE(result.converged);
  }
}

// jacobi: the 2-D Laplace equation on the unit square by Jacobi sweeps over a distributed
// array, in the global-view style: block rows or a 2-D process grid, a shadow refreshed by
// reflect every sweep, an owner-computes loop for the update, the residual by an allreduce on the array's
// communicator.
//
// The boundary holds u = x^2 - y^2, which the 5-point stencil reproduces exactly, so the
// converged iterate must match it at every grid point: the program checks that and exits
// non-zero when it does not.
//   mpiexec -n 2 ./jacobi [n = 64] [rows|grid = grid] [tolerance = 1e-10] [max sweeps = 200000]
#include <hetero/comm.hpp>
#include <hetero/core.hpp>
#include <hetero/distarray.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace {

using array = hetero::distributed_array<double, 2>;

KOKKOS_INLINE_FUNCTION double distance(double a, double b) { return a > b ? a - b : b - a; }

KOKKOS_INLINE_FUNCTION double exact(std::int64_t i, std::int64_t j, std::int64_t n) {
  const double x = static_cast<double>(i) / static_cast<double>(n - 1);
  const double y = static_cast<double>(j) / static_cast<double>(n - 1);
  return x * x - y * y;
}

// The largest value of `local` over the ranks that hold `u`.
double global_max(double local, const array& u) {
  return u.comm().allreduce(hetero::send_buf(local), hetero::op(hetero::ops::max{}));
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::stoll(argv[1]) : 64;
  const std::string layout = argc > 2 ? argv[2] : "grid";
  const double tolerance = argc > 3 ? std::stod(argv[3]) : 1e-10;
  const long max_sweeps = argc > 4 ? std::stol(argv[4]) : 200000;
  if (n < 3 || (layout != "rows" && layout != "grid")) {
    if (rt.world_rank() == 0)
      std::fprintf(stderr, "usage: jacobi [n >= 3] [rows|grid] [tolerance] [max sweeps]\n");
    return EXIT_FAILURE;
  }

  // The process grid and the index space: rows over every rank, or MPI's choice of a 2-D grid.
  hetero::process_grid<2> grid(layout == "rows" ? std::array<int, 2>{rt.world_size(), 1}
                                                : std::array<int, 2>{0, 0});
  hetero::index_space<2> space({n, n}, grid);
  // One shadow line on each side of the distributed axes: what the 5-point stencil reads.
  hetero::shadow_width<2> shadow;
  for (int d = 0; d < 2; ++d) shadow.lower[d] = shadow.upper[d] = grid.extent(d) > 1 ? 1 : 0;
  array u(space, {.shadow = shadow, .label = "u"});
  array next(space, {.shadow = shadow, .label = "u_next"});

  // Boundary values in both arrays (they swap roles every sweep), zero inside.
  for (auto& a : {u, next}) {
    auto v = a.block_view();
    hetero::for_each_owned(
        "jacobi_init", space, space.box(), KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
          const bool edge = i == 0 || j == 0 || i == n - 1 || j == n - 1;
          v(i, j) = edge ? exact(i, j, n) : 0.0;
        });
  }

  const hetero::index_box<2> interior{{1, 1}, {n - 1, n - 1}};
  const hetero::reflect_options<2> halo{.corners = false};  // the 5-point stencil skips corners
  const int check_every = 10;
  double residual = 0;
  long sweeps = 0;
  hetero::stopwatch watch;
  while (sweeps < max_sweeps) {
    hetero::reflect(u, halo);
    const auto from = u.block_view();
    const auto to = next.block_view();
    ++sweeps;
    if (sweeps % check_every != 0) {
      hetero::for_each_owned(
          "jacobi_sweep", space, interior, KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
            to(i, j) = 0.25 * (from(i - 1, j) + from(i + 1, j) + from(i, j - 1) + from(i, j + 1));
          });
    } else {  // the same sweep, measuring the largest update
      double local = 0;
      hetero::reduce_owned(
          "jacobi_sweep_residual", space, interior,
          KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& largest) {
            const double value = 0.25 * (from(i - 1, j) + from(i + 1, j) + from(i, j - 1) + from(i, j + 1));
            const double change = distance(value, from(i, j));
            largest = change > largest ? change : largest;
            to(i, j) = value;
          },
          Kokkos::Max<double>(local));
      residual = global_max(local, u);
    }
    std::swap(u, next);
    hetero::mark_phase();  // one time step, for a power monitor listening
    if (sweeps % check_every == 0 && residual < tolerance) break;
  }
  const double seconds = watch.seconds();

  // The converged iterate against the exact solution, at every grid point.
  double local_error = 0;
  const auto solution = u.block_view();
  hetero::reduce_owned(
      "jacobi_error", space, space.box(),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& largest) {
        const double error = distance(solution(i, j), exact(i, j, n));
        largest = error > largest ? error : largest;
      },
      Kokkos::Max<double>(local_error));
  const double error = global_max(local_error, u);
  // Jacobi's error is about residual / (1 - rho), rho = cos(pi / (n - 1)).
  const double rho = std::cos(3.141592653589793 / static_cast<double>(n - 1));
  const double bound = 10 * tolerance / (1 - rho) + 1e-12;
  const bool converged = residual < tolerance;
  const bool ok = converged && error < bound;
  if (rt.world_rank() == 0) {
    std::printf("jacobi %lld x %lld on %d rank(s), process grid %d x %d (%s)\n", static_cast<long long>(n),
                static_cast<long long>(n), rt.world_size(), grid.extent(0), grid.extent(1), layout.c_str());
    std::printf("%ld sweeps in %.3f s (%.0f sweeps/s): largest update %.2e (tolerance %.1e), %s\n", sweeps,
                seconds, static_cast<double>(sweeps) / seconds, residual, tolerance,
                converged ? "converged" : "NOT CONVERGED");
    std::printf("largest error against u = x^2 - y^2: %.2e (allowed %.2e): %s\n", error, bound,
                ok ? "correct" : "WRONG");
  }
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

// jacobi: the 2-D Laplace equation on the unit square by Jacobi sweeps over a distributed
// array, in the global-view style: block rows or a 2-D process grid, a shadow refreshed by
// reflect every sweep, an owner-computes loop for the update, the residual by an allreduce on the array's
// communicator.
//
// The boundary holds u = x^2 - y^2, which the 5-point stencil reproduces exactly, so the
// converged iterate must match it at every grid point: the program checks that and exits
// non-zero when it does not.
//
// With the io module (hetero::io), the field goes to files: --write <file.h5> writes the
// converged field (dataset "u"); --checkpoint <prefix> saves a checkpoint every --every sweeps
// (default 500), and --restart goes on from the newest one, on any number of ranks and either
// layout; --stop-after <sweeps> ends the run early, as a job that runs out of time would.
//   mpiexec -n 2 ./jacobi [n = 64] [rows|grid = grid] [tolerance = 1e-10] [max sweeps = 200000]
//                         [--write file.h5] [--checkpoint prefix [--every 500] [--restart]]
//                         [--stop-after sweeps]
#include <hetero/comm.hpp>
#include <hetero/core.hpp>
#include <hetero/distarray.hpp>
#if HETERO_HAS_IO()
#include <hetero/io.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// Where the field goes: the options after the positional arguments.
struct files {
  std::string write;       // --write: the converged field
  std::string checkpoint;  // --checkpoint: the checkpoints' prefix
  long every = 500;        // --every: sweeps between checkpoints
  bool restart = false;    // --restart: go on from the newest checkpoint
  long stop_after = 0;     // --stop-after: end after this many sweeps (0: never)
};

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  std::vector<std::string> positional;
  files io;
  bool usage_error = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--write" && has_value) {
      io.write = argv[++i];
    } else if (a == "--checkpoint" && has_value) {
      io.checkpoint = argv[++i];
    } else if (a == "--every" && has_value) {
      io.every = std::stol(argv[++i]);
    } else if (a == "--stop-after" && has_value) {
      io.stop_after = std::stol(argv[++i]);
    } else if (a == "--restart") {
      io.restart = true;
    } else if (a.starts_with("--")) {
      usage_error = true;
    } else {
      positional.emplace_back(a);
    }
  }
  const auto arg = [&](std::size_t k, const char* fallback) {
    return positional.size() > k ? positional[k] : std::string(fallback);
  };
  const std::int64_t n = std::stoll(arg(0, "64"));
  const std::string layout = arg(1, "grid");
  const double tolerance = std::stod(arg(2, "1e-10"));
  const long max_sweeps = std::stol(arg(3, "200000"));
  const bool wants_files = !io.write.empty() || !io.checkpoint.empty();
  if (n < 3 || (layout != "rows" && layout != "grid") || usage_error || io.every < 1 ||
      (io.restart && io.checkpoint.empty()) || (wants_files && !HETERO_HAS_IO())) {
    if (rt.world_rank() == 0)
      std::fprintf(
          stderr,
          "usage: jacobi [n >= 3] [rows|grid] [tolerance] [max sweeps] [--write file.h5] [--checkpoint "
          "prefix [--every sweeps >= 1] [--restart]] [--stop-after sweeps]%s\n",
          wants_files && !HETERO_HAS_IO() ? "\n(files need hetero's io module: this build has none)" : "");
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
#if HETERO_HAS_IO()
  std::optional<hetero::checkpoint> saved;
  if (!io.checkpoint.empty()) saved.emplace(io.checkpoint, grid.comm());
  if (io.restart) {
    // The newest whole checkpoint, whatever wrote it; its step is the sweeps done (0: none).
    sweeps = saved->restore([&](hetero::h5file& last) {
      last.read("u", u);
      residual = last.get<double>("residual");
    });
    if (sweeps > 0 && rt.world_rank() == 0) {
      std::printf("restarted from %s: sweep %ld, largest update %.2e\n", saved->file_of(sweeps).c_str(), sweeps,
                  residual);
    } else if (rt.world_rank() == 0) {
      std::printf("no checkpoint at %s: starting from sweep 0\n", io.checkpoint.c_str());
    }
  } else if (const auto steps = saved ? saved->steps() : std::vector<std::int64_t>{}; !steps.empty()) {
    // A run from sweep 0 beside the checkpoints of another: begin() would refuse its first one.
    if (rt.world_rank() == 0)
      std::fprintf(stderr,
                   "checkpoints of another run are at %s (the newest: %s): pass --restart to go on from "
                   "it, or remove them\n",
                   io.checkpoint.c_str(), saved->file_of(steps.back()).c_str());
    return EXIT_FAILURE;
  }
#endif
  const long first_sweep = sweeps;
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
#if HETERO_HAS_IO()
    if (saved && sweeps % io.every == 0) {
      auto next_checkpoint = saved->begin(sweeps);
      next_checkpoint.write("u", u);
      next_checkpoint.set("residual", residual);
      next_checkpoint.commit();  // from here a restart goes on from this sweep
    }
#endif
    if (io.stop_after > 0 && sweeps - first_sweep >= io.stop_after) {
      if (rt.world_rank() == 0)
        std::printf("stopped after %ld sweeps (sweep %ld, largest update %.2e): restart with --restart\n",
                    sweeps - first_sweep, sweeps, residual);
      return EXIT_SUCCESS;
    }
  }
  const double seconds = watch.seconds();
#if HETERO_HAS_IO()
  if (!io.write.empty()) {
    hetero::h5file out(io.write, hetero::file_mode::create, grid.comm());
    out.write("u", u);
    out.set("sweeps", std::int64_t{sweeps});
    if (rt.world_rank() == 0) std::printf("wrote the field to %s (dataset u)\n", io.write.c_str());
  }
#endif

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
    std::printf(
        "%ld sweeps (%ld in this run) in %.3f s (%.0f sweeps/s): largest update %.2e (tolerance %.1e), %s\n",
        sweeps, sweeps - first_sweep, seconds, static_cast<double>(sweeps - first_sweep) / seconds, residual,
        tolerance, converged ? "converged" : "NOT CONVERGED");
    std::printf("largest error against u = x^2 - y^2: %.2e (allowed %.2e): %s\n", error, bound,
                ok ? "correct" : "WRONG");
  }
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

// cg: conjugate gradients on a distributed sparse matrix, in the three communication variants
// of hetero::cg_solver, on generated Poisson matrices and Matrix Market files. The right-hand
// side is b = A x* for a known x*; each solve is checked against x*.
//   mpiexec -n 2 ./cg [--poisson2d N] [--poisson3d N] [--matrix FILE|NAME]... [--variant V]
//                     [--preconditioner P] [--tolerance T] [--max-iterations K] [--fixed K]
//                     [--replacement-interval K] [--solution K] [--write FILE.h5]
// NAME is a file of data/matrices without its extension (e.g. bcsstk14). V: all (default),
// allgather, halo, pipelined or automatic (printed as auto:<the variant it chose>); "kernels" says where rank
// 0's kernels ran (hetero::cg_kernels: the matrix's space, or Serial where that was faster). P: automatic
// (default: printed as auto:<the preconditioner it chose>), none, jacobi, chebyshev or block_ic0. --fixed K times
// exactly K iterations (no convergence check). --solution K picks another x* (x*_i = 1 + sin(0.1 i + K);
// default 0): on an ill-conditioned matrix the iteration count depends on b. --write (with the
// io module, hetero::io) writes each solution x as dataset <matrix>/<variant> of an HDF5 file,
// reads it back into a cyclic distribution and checks it against x* too.
#include <hetero/comm.hpp>
#include <hetero/core/runtime.hpp>
#include <hetero/distarray.hpp>
#include <hetero/linalg.hpp>
#if HETERO_HAS_IO()
#include <hetero/io.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#ifndef HETERO_MATRIX_DIR
#define HETERO_MATRIX_DIR "data/matrices"
#endif

namespace {

using matrix = hetero::distributed_csr<>;

struct problem {
  std::string name;
  std::variant<hetero::poisson_matrix, std::string> source;  // generator or file
};

std::string matrix_path(const std::string& given) {
  if (std::filesystem::exists(given)) return given;
  const std::string in_data = std::string(HETERO_MATRIX_DIR) + "/" + given + ".mtx.gz";
  if (std::filesystem::exists(in_data)) return in_data;
  throw std::invalid_argument("no matrix file '" + given + "' (nor " + in_data + ")");
}

// x*_i = 1 + sin(0.1 i), i the global row: the known solution.
matrix::vector_type known_solution(const matrix& a, int solution) {
  auto x = a.make_vector("x*");
  const auto first = a.rows().begin;
  const double phase = solution;
  Kokkos::parallel_for(
      "known solution", a.local_rows(), KOKKOS_LAMBDA(const std::size_t i) {
        x(i) = 1.0 + std::sin(0.1 * static_cast<double>(first + static_cast<std::int64_t>(i)) + phase);
      });
  return x;
}

double distance(const hetero::communicator& comm, const matrix::vector_type& x, const matrix::vector_type& y,
                double& norm_y) {
  const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  double local[2] = {0, 0};
  for (std::size_t i = 0; i < hx.extent(0); ++i) {
    local[0] += (hx(i) - hy(i)) * (hx(i) - hy(i));
    local[1] += hy(i) * hy(i);
  }
  const std::vector<double> sums =
      comm.allreduce(hetero::send_buf(std::vector<double>{local[0], local[1]}), hetero::op(hetero::ops::sum{}));
  norm_y = std::sqrt(sums[1]);
  return std::sqrt(sums[0]) / norm_y;
}

int run(const std::vector<problem>& problems, const std::vector<hetero::cg_variant>& variants,
        hetero::cg_options options, int solution, const std::string& output);

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  std::vector<problem> problems;
  std::vector<hetero::cg_variant> variants{hetero::cg_variant::allgather, hetero::cg_variant::halo,
                                           hetero::cg_variant::pipelined, hetero::cg_variant::automatic};
  hetero::cg_options options;
  int solution = 0;
  std::string output;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view a = argv[i];
      const auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
        return argv[++i];
      };
      if (a == "--poisson2d") {
        const long n = std::stol(value());
        problems.push_back({"poisson2d-" + std::to_string(n), hetero::poisson_2d(n)});
      } else if (a == "--poisson3d") {
        const long n = std::stol(value());
        problems.push_back({"poisson3d-" + std::to_string(n), hetero::poisson_3d(n)});
      } else if (a == "--matrix") {
        const std::string m = value();
        problems.push_back({std::filesystem::path(m).stem().stem().string(), matrix_path(m)});
      } else if (a == "--variant") {
        const std::string v = value();
        if (v == "all") continue;
        if (v != "allgather" && v != "halo" && v != "pipelined" && v != "automatic")
          throw std::invalid_argument("--variant " + v + ": allowed all, allgather, halo, pipelined, automatic");
        variants = {v == "allgather"   ? hetero::cg_variant::allgather
                    : v == "halo"      ? hetero::cg_variant::halo
                    : v == "pipelined" ? hetero::cg_variant::pipelined
                                       : hetero::cg_variant::automatic};
      } else if (a == "--preconditioner") {
        const std::string p = value();
        bool known = false;
        for (const auto c : {hetero::cg_preconditioner::none, hetero::cg_preconditioner::jacobi,
                             hetero::cg_preconditioner::chebyshev, hetero::cg_preconditioner::block_ic0,
                             hetero::cg_preconditioner::automatic})
          if (p == hetero::to_string(c)) {
            options.preconditioner = c;
            known = true;
          }
        if (!known)
          throw std::invalid_argument("--preconditioner " + p +
                                      ": allowed none, jacobi, chebyshev, block_ic0, automatic");
      } else if (a == "--tolerance") {
        options.tolerance = std::stod(value());
      } else if (a == "--max-iterations") {
        options.max_iterations = std::stoi(value());
      } else if (a == "--replacement-interval") {
        options.replacement_interval = std::stoi(value());
      } else if (a == "--write") {
        output = value();
        if (!HETERO_HAS_IO()) throw std::invalid_argument("--write needs hetero's io module: this build has none");
      } else if (a == "--solution") {
        solution = std::stoi(value());
      } else if (a == "--fixed") {
        options.max_iterations = std::stoi(value());
        options.fixed_iterations = true;
      } else {
        throw std::invalid_argument("unknown argument " + std::string(a));
      }
    }
  } catch (const std::exception& e) {
    if (rt.world_rank() == 0) std::fprintf(stderr, "cg: %s\n", e.what());
    return 2;
  }
  if (problems.empty()) problems.push_back({"poisson3d-32", hetero::poisson_3d(32)});

  try {
    return run(problems, variants, options, solution, output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cg (rank %d): %s\n", rt.world_rank(), e.what());
    return EXIT_FAILURE;
  }
}

namespace {

#if HETERO_HAS_IO()
// Writes the solution `x` (each rank's rows) as dataset `name` of `out`, reads it back into a
// cyclic distribution and returns the largest |x_i - x*_i| of what was read.
double write_and_check(hetero::h5file& out, const std::string& name, const hetero::communicator& comm,
                       const matrix& a, const matrix::vector_type& x, int solution) {
  // The rows each rank holds, as a gen-block distributed array of the matrix's rows.
  std::vector<std::int64_t> rows(static_cast<std::size_t>(comm.size()));
  comm.allgather(hetero::send_buf(static_cast<std::int64_t>(a.local_rows())), hetero::recv_buf(rows));
  const hetero::process_grid<1> ranks({0}, comm);
  hetero::distributed_array<double, 1> solved(
      hetero::index_space<1>({a.global_rows()}, ranks, {hetero::distribution::gen_block(rows)}));
  Kokkos::deep_copy(solved.local(), x);
  out.write(name, solved);
  hetero::distributed_array<double, 1> back(
      hetero::index_space<1>({a.global_rows()}, ranks, {hetero::distribution::cyclic()}));
  out.read(name, back);
  const auto values = back.global_view();
  const double phase = solution;
  double largest = 0;
  hetero::reduce_owned(
      "cg read back", back.space(), back.space().box(),
      KOKKOS_LAMBDA(std::int64_t i, double& most) {
        const double diff = values(i) - (1.0 + std::sin(0.1 * static_cast<double>(i) + phase));
        const double wrong = diff < 0 ? -diff : diff;
        most = wrong > most ? wrong : most;
      },
      Kokkos::Max<double>(largest));
  return comm.allreduce(hetero::send_buf(largest), hetero::op(hetero::ops::max{}));
}
#endif

int run(const std::vector<problem>& problems, const std::vector<hetero::cg_variant>& variants,
        hetero::cg_options options, int solution, const std::string& output) {
  hetero::communicator comm;
  bool all_ok = true;
#if HETERO_HAS_IO()
  std::optional<hetero::h5file> out;
  if (!output.empty()) out.emplace(output, hetero::file_mode::create, comm);
#endif
  if (comm.rank() == 0)
    std::printf("%-14s %8s %9s %-10s %-14s %-7s %6s %11s %11s %12s  %s\n", "matrix", "rows", "nonzeros", "variant",
                "preconditioner", "kernels", "iters", "residual", "error", "ms/iteration", "status");
  for (const auto& p : problems) {
    std::optional<matrix> a;
    if (const auto* generator = std::get_if<hetero::poisson_matrix>(&p.source))
      a.emplace(*generator, comm);
    else
      a.emplace(hetero::matrix_market_rows(std::get<std::string>(p.source), comm, {.require_spd = true}), comm);
    const auto exact = known_solution(*a, solution);
    auto b = a->make_vector("b");
    auto exact_halo = a->make_halo_vector("x* with halo");
    Kokkos::deep_copy(Kokkos::subview(exact_halo, std::pair<std::size_t, std::size_t>(0, a->local_rows())), exact);
    a->multiply_halo(exact_halo, b);
    const long nonzeros =
        comm.allreduce(hetero::send_buf(static_cast<long>(a->local_nonzeros())), hetero::op(hetero::ops::sum{}));
    for (const auto v : variants) {
      options.variant = v;
      hetero::cg_solver<> solver(*a, options);
      auto x = a->make_vector("x");  // starts at 0
      const hetero::cg_result r = solver.solve(b, x);
      double norm = 0;
      const double error = distance(comm, x, exact, norm);
      // The true residual met the tolerance; the error ||x - x*|| / ||x*|| is shown beside it
      // (on a badly conditioned matrix it may stay up to the condition number times larger).
      const bool ok = options.fixed_iterations || r.converged;
      all_ok = all_ok && ok;
      if (comm.rank() == 0)
        std::printf(
            "%-14s %8ld %9ld %-10s %-14s %-7s %6d %11.3e %11.3e %12.4f  %s\n", p.name.c_str(),
            static_cast<long>(a->global_rows()), nonzeros,
            (v == hetero::cg_variant::automatic ? "auto:" + std::string(hetero::to_string(solver.variant()))
                                                : std::string(hetero::to_string(v)))
                .c_str(),
            (options.preconditioner == hetero::cg_preconditioner::automatic
                 ? "auto:" + std::string(hetero::to_string(solver.preconditioner()))
                 : std::string(hetero::to_string(solver.preconditioner())))
                .c_str(),
            std::string(hetero::to_string(solver.kernels())).c_str(), r.iterations, r.residual, error,
            r.seconds_per_iteration * 1e3, std::string(hetero::to_string(r.status)).c_str());
#if HETERO_HAS_IO()
      if (out) {
        const std::string name = p.name + "/" + std::string(hetero::to_string(v));
        const double read_error = write_and_check(*out, name, comm, *a, x, solution);
        // What was read back is x, so it is as far from x* as x was.
        const bool same = read_error <= 2 * error * norm + 1e-300 || read_error < 1e-12;
        all_ok = all_ok && (same || !ok);
        if (comm.rank() == 0)
          std::printf("  wrote x to %s:%s; read back cyclic, largest |x_i - x*_i| %.3e: %s\n", output.c_str(),
                      name.c_str(), read_error, same ? "as solved" : "DIFFERENT");
      }
#endif
    }
  }
  if (comm.rank() == 0)
    std::printf("%d rank(s); every solve %s\n", comm.size(), all_ok ? "converged" : "did NOT converge");
  return all_ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace

// Time per CG iteration: hetero::cg_solver's variants against the CG a user writes by hand with
// MPI and Kokkos (plain_cg.hpp: the same rows per rank, the same SpMV, MPI_Allgatherv of the
// direction and MPI_Allreduce of the dot products), in the same binary.
//  - cg: 3-D Poisson matrices of 16^3, 32^3 and 64^3 rows, 20 fixed iterations per timing;
//  - cg_1000: the seed's mode (seed 003): 1000 fixed iterations, time per iteration, on the
//    SuiteSparse matrices of data/matrices (argument: the index in `matrices` below).
//  - cg_solve/<preconditioner>: the time to solve to 1e-8 (b = A * ones, x = 0 first, the default
//    variant and kernels) with each preconditioner and with `automatic` (the default: its choice
//    is the counter `chosen`, the index in cg_preconditioner), on every matrix of data/matrices
//    (`solve_matrices`) and the Poisson matrices of 16^3, 32^3 and 64^3 rows; counters:
//    iterations, the relative true residual, the IC(0) shift, the variant (`variant`, the index
//    in cg_variant) and whether the kernels ran on Serial (`serial`). The solver is made before the
//    timing (as PETSc's KSPSetUp is outside its timed solves). PETSc's CG with its default
//    preconditioner and with none is the baseline (bench/linalg/petsc_cg.sh --solve: another
//    program, since Debian's PETSc is built on Open MPI; bench/linalg/cg_solve_run.sh runs both
//    and prints the table).
// Variants: allgather, halo, pipelined, and automatic (what cg_solver<> does by default: its
// measured choice of variant and of kernels, hetero::cg_kernels). Each benchmark iteration reports the time of one
// CG iteration (the slowest rank's). Before timing, each problem checks once that plain CG and hetero's allgather
// variant reach the same residual after the same iterations (they compute the same iterates up to rounding).
#include <hetero/comm.hpp>
#include <hetero/linalg.hpp>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_main.hpp"
#include "plain_cg.hpp"

namespace {

constexpr int grid_iterations = 20;
const char* const matrices[] = {"bcsstk14", "1138_bus", "bcsstk19", "nos7", "nos3", "gr_30_30"};
// cg_solve's: every SuiteSparse matrix of data/matrices (petsc_cg.sh --solve's list), then the
// 3-D Poisson matrices of these grids.
const char* const solve_matrices[] = {"1138_bus", "494_bus",  "662_bus",  "685_bus",  "LF10",
                                      "bcsstk01", "bcsstk06", "bcsstk14", "bcsstk19", "bcsstk20",
                                      "bcsstm07", "ex5",      "gr_30_30", "nos1",     "nos2",
                                      "nos3",     "nos4",     "nos5",     "nos6",     "nos7"};
constexpr std::int64_t solve_grids[] = {16, 32, 64};

hetero::communicator& comm() {
  static hetero::communicator c;
  return c;
}

int iterations_for(std::int64_t family) {
  if (family == 0) return grid_iterations;
  return hetero::bench::smoke_run() ? 20 : 1000;
}

// The global matrix of a case: a Poisson generator (family 0) or a file of data/matrices.
struct problem {
  hetero::poisson_matrix poisson{1, 1, 1};
  hetero::csr_matrix<double> file;
  bool from_file = false;

  [[nodiscard]] std::int64_t rows() const { return from_file ? file.global_rows() : poisson.global_rows(); }
  [[nodiscard]] hetero::csr_matrix<double> block(std::int64_t begin, std::int64_t end) const {
    return from_file ? file.rows(begin, end) : poisson.rows(begin, end);
  }
};

// The case's label in the results: the matrix's name (the scoreboard matches PETSc's rows by it).
std::string label_for(std::int64_t family, std::int64_t arg) {
  return family == 0 ? "poisson3d-" + std::to_string(arg) : matrices[static_cast<std::size_t>(arg)];
}

problem file_problem(const char* name) {
  problem p;
  p.file = hetero::read_matrix_market_file(std::string(HETERO_MATRIX_DIR) + "/" + name + ".mtx.gz",
                                           {.require_spd = true});
  p.from_file = true;
  return p;
}

problem problem_for(std::int64_t family, std::int64_t arg) {
  if (family != 0) return file_problem(matrices[static_cast<std::size_t>(arg)]);
  problem p;
  p.poisson = hetero::poisson_3d(arg);
  return p;
}

template <class Space = Kokkos::DefaultExecutionSpace>
hetero::distributed_csr<Space> distributed(const problem& p) {
  if (p.from_file) return hetero::distributed_csr<Space>(p.file, comm());
  return hetero::distributed_csr<Space>(p.poisson, comm());
}

plain::cg plain_for(const problem& p) {
  std::vector<int> counts;
  for (int r = 0; r < comm().size(); ++r)
    counts.push_back(static_cast<int>(hetero::block_rows(p.rows(), comm().size(), r).size()));
  const auto mine = hetero::block_rows(p.rows(), comm().size(), comm().rank());
  return plain::cg(MPI_COMM_WORLD, p.block(mine.begin, mine.end), counts);
}

// Once per problem: plain CG and hetero's allgather variant after k iterations agree.
void check_same_iterates(const problem& p, std::int64_t family, std::int64_t arg) {
  static std::vector<std::pair<std::int64_t, std::int64_t>> checked;
  for (const auto& c : checked)
    if (c == std::pair(family, arg)) return;
  checked.emplace_back(family, arg);
  const int k = 15;
  const auto a = distributed(p);
  hetero::cg_solver<> cg(a, {.variant = hetero::cg_variant::allgather,
                             .preconditioner = hetero::cg_preconditioner::none,
                             .max_iterations = k,
                             .fixed_iterations = true});
  auto b = a.make_vector("b"), x = a.make_vector("x");
  Kokkos::deep_copy(b, 1.0);
  cg.solve(b, x);
  auto ours = plain_for(p);
  plain::vector pb("b", a.local_rows()), px("x", a.local_rows());
  Kokkos::deep_copy(pb, 1.0);
  ours.solve(pb, px, k);
  // Compare the iterates x after k iterations, every element.
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, px);
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < a.local_rows(); ++i) {
    worst = std::max(worst, std::abs(hx(i) - hp(i)));
    largest = std::max(largest, std::abs(hp(i)));
  }
  if (worst > 1e-8 * std::max(largest, 1.0))
    throw std::runtime_error("plain CG and hetero's allgather variant differ after " + std::to_string(k) +
                             " iterations by " + std::to_string(worst));
}

// cg_solve: argument i < 20 is solve_matrices[i], then the Poisson grids of solve_grids.
constexpr long solve_files = static_cast<long>(std::size(solve_matrices));
constexpr long solve_cases = solve_files + static_cast<long>(std::size(solve_grids));

template <hetero::cg_preconditioner P>
void run_solve(benchmark::State& state) {
  const bool poisson = state.range(0) >= solve_files;
  const std::int64_t grid = poisson ? solve_grids[static_cast<std::size_t>(state.range(0) - solve_files)] : 0;
  const auto p =
      poisson ? problem_for(0, grid) : file_problem(solve_matrices[static_cast<std::size_t>(state.range(0))]);
  const auto a = distributed(p);
  hetero::cg_solver<> cg(a, {.preconditioner = P, .tolerance = 1e-8, .max_iterations = 100000});
  auto ones = a.make_halo_vector("ones"), b = a.make_vector("b"), x = a.make_vector("x");
  Kokkos::deep_copy(ones, 1.0);
  a.multiply_halo(ones, b);  // b = A * ones, as PETSc's rtol mode
  hetero::cg_result r;
  for (auto _ : state) {
    Kokkos::deep_copy(x, 0.0);
    r = cg.solve(b, x);  // r.seconds: the slowest rank's already
    hetero::bench::set_iteration_time(state, r.seconds);
  }
  state.counters["iterations"] = r.iterations;
  state.counters["residual"] = r.residual;
  state.counters["converged"] = r.converged ? 1 : 0;
  state.counters["shift"] = cg.preconditioner_shift();
  state.counters["chosen"] = static_cast<double>(cg.preconditioner());
  state.counters["variant"] = static_cast<double>(cg.variant());
  state.counters["serial"] = cg.kernels() == hetero::cg_kernels::serial ? 1 : 0;
  state.counters["rows"] = static_cast<double>(a.global_rows());
  state.SetLabel(poisson ? label_for(0, grid) : solve_matrices[static_cast<std::size_t>(state.range(0))]);
}

void run_plain(benchmark::State& state, std::int64_t family) {
  const auto p = problem_for(family, state.range(0));
  check_same_iterates(p, family, state.range(0));
  auto cg = plain_for(p);
  const auto mine = hetero::block_rows(p.rows(), comm().size(), comm().rank());
  plain::vector b("b", static_cast<std::size_t>(mine.size())), x("x", static_cast<std::size_t>(mine.size()));
  Kokkos::deep_copy(b, 1.0);
  const int iterations = iterations_for(family);
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    cg.solve(b, x, iterations);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    hetero::bench::set_iteration_time(state, seconds / iterations);
  }
  state.counters["rows"] = static_cast<double>(p.rows());
  state.SetLabel(label_for(family, state.range(0)));
}

template <hetero::cg_variant V, class Space = Kokkos::DefaultExecutionSpace>
void run_hetero(benchmark::State& state, std::int64_t family) {
  // Built per case (not cached in a static): views must be gone before Kokkos finalizes.
  const auto p = problem_for(family, state.range(0));
  const auto a = distributed<Space>(p);
  // Plain CG, as the seed's (and PETSc's PCNONE baseline): these time an iteration, not a solve.
  hetero::cg_solver<Space> cg(a, {.variant = V,
                                  .preconditioner = hetero::cg_preconditioner::none,
                                  .max_iterations = iterations_for(family),
                                  .fixed_iterations = true});
  auto b = a.make_vector("b"), x = a.make_vector("x");
  Kokkos::deep_copy(b, 1.0);
  for (auto _ : state) {
    Kokkos::deep_copy(x, 0.0);
    const hetero::cg_result r = cg.solve(b, x);  // r.seconds: the slowest rank's already
    hetero::bench::set_iteration_time(state, r.seconds_per_iteration);
  }
  state.counters["rows"] = static_cast<double>(a.global_rows());
  state.SetLabel(label_for(family, state.range(0)));
}

const auto grids = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (long n : {16, 32, 64}) b->Arg(n);
};

// The reported time is per CG iteration while a benchmark iteration runs 1000 of them: a fixed
// count of solves per round (Google Benchmark would otherwise run ~1000x its minimum time).
const auto files = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(5);
  const long count = hetero::bench::smoke_run() ? 1 : static_cast<long>(std::size(matrices));
  for (long i = 0; i < count; ++i) b->Arg(i);
};

const auto solves = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(hetero::bench::smoke_run() ? 1 : 5);
  const long count = hetero::bench::smoke_run() ? 1 : solve_cases;
  for (long i = 0; i < count; ++i) b->Arg(i);
};

const int registered[] = {
    hetero::bench::add("cg_solve/none", run_solve<hetero::cg_preconditioner::none>, solves),
    hetero::bench::add("cg_solve/jacobi", run_solve<hetero::cg_preconditioner::jacobi>, solves),
    hetero::bench::add("cg_solve/chebyshev", run_solve<hetero::cg_preconditioner::chebyshev>, solves),
    hetero::bench::add("cg_solve/block_ic0", run_solve<hetero::cg_preconditioner::block_ic0>, solves),
    hetero::bench::add("cg_solve/automatic", run_solve<hetero::cg_preconditioner::automatic>, solves),
    hetero::bench::add(
        "cg/baseline_plain_mpi", [](benchmark::State& s) { run_plain(s, 0); }, grids),
    hetero::bench::add(
        "cg/allgather", [](benchmark::State& s) { run_hetero<hetero::cg_variant::allgather>(s, 0); }, grids),
    hetero::bench::add(
        "cg/halo", [](benchmark::State& s) { run_hetero<hetero::cg_variant::halo>(s, 0); }, grids),
    hetero::bench::add(
        "cg/pipelined", [](benchmark::State& s) { run_hetero<hetero::cg_variant::pipelined>(s, 0); }, grids),
    hetero::bench::add(
        "cg/automatic", [](benchmark::State& s) { run_hetero<hetero::cg_variant::automatic>(s, 0); }, grids),
    hetero::bench::add(
        "cg_1000/baseline_plain_mpi", [](benchmark::State& s) { run_plain(s, 1); }, files),
    hetero::bench::add(
        "cg_1000/allgather", [](benchmark::State& s) { run_hetero<hetero::cg_variant::allgather>(s, 1); }, files),
    hetero::bench::add(
        "cg_1000/halo", [](benchmark::State& s) { run_hetero<hetero::cg_variant::halo>(s, 1); }, files),
    hetero::bench::add(
        "cg_1000/pipelined", [](benchmark::State& s) { run_hetero<hetero::cg_variant::pipelined>(s, 1); }, files),
    hetero::bench::add(
        "cg_1000/automatic", [](benchmark::State& s) { run_hetero<hetero::cg_variant::automatic>(s, 1); }, files),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

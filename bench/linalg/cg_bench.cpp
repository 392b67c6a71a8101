// Time per CG iteration of hetero::cg_solver's three communication variants on 3-D Poisson
// matrices of 16^3, 32^3 and 64^3 rows: the seed's allgather of the direction vector (seed
// 003, Fig. 13) is the baseline; the halo exchange and the pipelined variant (one overlapped
// allreduce per iteration) are the rivals. Each benchmark iteration runs a fixed number of CG
// iterations and reports the time of one (the slowest rank's).
#include <hetero/comm.hpp>
#include <hetero/linalg.hpp>

#include <string>

#include "bench_main.hpp"

namespace {

constexpr int cg_iterations = 20;

hetero::communicator& comm() {
  static hetero::communicator c;
  return c;
}

template <hetero::cg_variant V>
void run(benchmark::State& state) {
  // Built per case (not cached in a static): views must be gone before Kokkos finalizes.
  const hetero::distributed_csr<> a(comm(), hetero::poisson_3d(state.range(0)));
  hetero::cg_solver<> cg(a, {.variant = V, .max_iterations = cg_iterations, .fixed_iterations = true});
  auto b = a.make_vector("b"), x = a.make_vector("x");
  Kokkos::deep_copy(b, 1.0);
  for (auto _ : state) {
    Kokkos::deep_copy(x, 0.0);
    const hetero::cg_result r = cg.solve(b, x);  // r.seconds: the slowest rank's already
    hetero::bench::set_iteration_time(state, r.seconds_per_iteration);
  }
  state.counters["rows"] = static_cast<double>(a.global_rows());
}

const auto grids = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (long n : {16, 32, 64}) b->Arg(n);
};

const int registered[] = {hetero::bench::add("cg/baseline_allgather", run<hetero::cg_variant::allgather>, grids),
                          hetero::bench::add("cg/halo", run<hetero::cg_variant::halo>, grids),
                          hetero::bench::add("cg/pipelined", run<hetero::cg_variant::pipelined>, grids)};

}  // namespace

HETERO_BENCHMARK_MAIN()

// What checking every MPI return code costs: an 8-byte MPI_Allreduce called raw (the
// baseline) and through HETERO_MPI_CHECK, in batches of 64 so the clock's own cost is small.
#include <hetero/core/mpi.hpp>

#include <chrono>

#include "bench_main.hpp"

namespace {

constexpr int batch = 64;

template <bool Checked>
void allreduce_8B(benchmark::State& state) {
  double in = 1.0, out = 0.0;
  MPI_Comm comm = MPI_COMM_WORLD;
  for (int warm = 0; warm < 10; ++warm)
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);  // MPICH: shm after 5
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) {
      if constexpr (Checked) {
        HETERO_MPI_CHECK(MPI_Allreduce, &in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
      } else {
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
      }
    }
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    hetero::bench::set_iteration_time(state, elapsed.count() / batch);
  }
  benchmark::DoNotOptimize(out);
}

}  // namespace

BENCHMARK(allreduce_8B<false>)->Name("allreduce_8B/baseline_mpi")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(allreduce_8B<true>)->Name("allreduce_8B/hetero_checked")->UseManualTime()->Unit(benchmark::kMicrosecond);

HETERO_BENCHMARK_MAIN()

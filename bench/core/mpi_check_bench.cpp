// What checking every MPI return code costs: an 8-byte MPI_Allreduce called raw (the
// baseline) and through HETERO_MPI_CHECK. One iteration is a batch of 64 calls, so that the
// clock and the per-iteration synchronisation of the timing cost little; times are per batch.
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
    hetero::bench::set_iteration_time(state, elapsed.count());
  }
  benchmark::DoNotOptimize(out);
}

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
};
const int registered[] = {hetero::bench::add("allreduce_8B_x64/baseline_mpi", allreduce_8B<false>, configure),
                          hetero::bench::add("allreduce_8B_x64/hetero_checked", allreduce_8B<true>, configure)};

}  // namespace

HETERO_BENCHMARK_MAIN()

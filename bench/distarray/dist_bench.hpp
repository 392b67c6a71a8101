// What the dist module's benchmarks share: a wall clock, the timed loop every case runs, this
// rank's place in MPI_COMM_WORLD, and the plain-MPI baselines' own duplicate of MPI_COMM_WORLD.
#ifndef HETERO_BENCH_DIST_BENCH_HPP
#define HETERO_BENCH_DIST_BENCH_HPP

#include <mpi.h>

#include <chrono>

#include "bench_main.hpp"

namespace dist_bench {

/// Seconds on a monotonic clock.
inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Runs `work()` once per benchmark iteration and reports the slowest rank's time for it.
template <class Work>
void time_iterations(benchmark::State& state, Work&& work) {
  for (auto _ : state) {
    const double start = now();
    work();
    hetero::bench::set_iteration_time(state, now() - start);
  }
}

/// This rank's number and the number of ranks in MPI_COMM_WORLD, for the hetero cases (which
/// need no communicator of their own to size their arrays).
struct world_place {
  int me = 0;
  int size = 1;
};
inline world_place world() {
  world_place w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.me);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

/// A duplicate of MPI_COMM_WORLD for a hand-written baseline, with this rank's number and the
/// number of ranks; freed at the end of the case.
struct world_copy {
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0;
  int size = 1;
  world_copy() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
  }
  world_copy(const world_copy&) = delete;
  world_copy& operator=(const world_copy&) = delete;
  ~world_copy() { MPI_Comm_free(&comm); }
};

}  // namespace dist_bench

#endif  // HETERO_BENCH_DIST_BENCH_HPP

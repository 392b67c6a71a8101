// The main of hetero's benchmarks, for one or many MPI ranks: brings up hetero::runtime, runs
// Google Benchmark on every rank, and lets only rank 0 report (console and --benchmark_out).
//
// Benchmarks that communicate must give every rank the same iteration count, or ranks wait on
// each other forever: use UseManualTime() and report the slowest rank's time with
// hetero::bench::set_iteration_time (Google Benchmark then decides the same on every rank).
#ifndef HETERO_BENCH_SUPPORT_BENCH_MAIN_HPP
#define HETERO_BENCH_SUPPORT_BENCH_MAIN_HPP

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <hetero/core/runtime.hpp>

#include <string_view>
#include <vector>

namespace hetero::bench {

/// Reports the slowest rank's `seconds` as this iteration's time, identically on all ranks.
inline void set_iteration_time(benchmark::State& state, double seconds, MPI_Comm comm = MPI_COMM_WORLD) {
  double slowest = seconds;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  state.SetIterationTime(slowest);
}

/// A reporter that prints nothing: ranks other than 0 run the benchmarks silently.
class silent_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

/// Runs the registered benchmarks under a hetero::runtime; returns main's exit code.
inline int run_benchmarks(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    // Only rank 0 writes the output file; the others would truncate it under rank 0's feet.
    if (rt.world_rank() != 0 && std::string_view(argv[i]).starts_with("--benchmark_out")) continue;
    args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  if (rt.world_rank() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    silent_reporter silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace hetero::bench

#define HETERO_BENCHMARK_MAIN() \
  int main(int argc, char** argv) { return ::hetero::bench::run_benchmarks(argc, argv); }

#endif  // HETERO_BENCH_SUPPORT_BENCH_MAIN_HPP

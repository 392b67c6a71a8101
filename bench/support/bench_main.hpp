// The main of hetero's benchmarks, for one or many MPI ranks: brings up hetero::runtime, runs
// Google Benchmark on every rank, and lets only rank 0 report (console and --benchmark_out).
//
// Rounds: this machine's timings drift by 2x between phases of a run, so a baseline measured
// before its rival is not comparable. Cases added with hetero::bench::add are registered once
// per round, all cases in each round (--hetero_rounds=N, default 7; odd rounds in reverse
// order): baseline and rival alternate, and bench/report.sh takes the median over the rounds of each case.
//
// Benchmarks that communicate must give every rank the same iteration count, or ranks wait on
// each other forever: use UseManualTime() and report the slowest rank's time with
// hetero::bench::set_iteration_time (Google Benchmark then decides the same on every rank).
// For the same reason, never --benchmark_enable_random_interleaving (each rank would shuffle
// differently).
#ifndef HETERO_BENCH_SUPPORT_BENCH_MAIN_HPP
#define HETERO_BENCH_SUPPORT_BENCH_MAIN_HPP

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <hetero/core/runtime.hpp>

#include "bounds.hpp"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hetero::bench {

/// Reports the slowest rank's `seconds` as this iteration's time, identically on all ranks.
inline void set_iteration_time(benchmark::State& state, double seconds, MPI_Comm comm = MPI_COMM_WORLD) {
  double slowest = seconds;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  state.SetIterationTime(slowest);
}

/// Sets the case's counter bound_s: the least time `work` takes at the device rates the GPU kit
/// measured (bounds.hpp; bench/report.sh prints it with time / bound). Nothing where no rates
/// were measured (HETERO_DEVICE_RATES unset: every run off the kit).
inline void report_bound(benchmark::State& state, const device_work& work) {
  if (const auto& rates = measured_device_rates()) state.counters["bound_s"] = bound_seconds(work, *rates);
}

/// True in the test command's smoke run (`--hetero_rounds=1 --benchmark_min_time=0.01` or less),
/// which only shows that every case runs to its end: a benchmark may then register fewer sizes.
/// Cases are registered before `run_benchmarks` parses the arguments, so they are read from
/// /proc/self/cmdline; where it cannot be read, this is not a smoke run.
inline bool smoke_run() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  bool one_round = false, tiny_min_time = false;
  for (std::string arg; std::getline(in, arg, '\0');) {
    const std::string_view a = arg;
    if (a == "--hetero_rounds=1") one_round = true;
    if (a.starts_with("--benchmark_min_time=")) tiny_min_time = std::atof(arg.c_str() + 21) <= 0.01;
  }
  return one_round && tiny_min_time;
}

/// One benchmark case: a name "<family>/<variant>[/...]" (a variant named baseline_* is the
/// family's baseline), its function, and how to configure it (Args, UseManualTime, Unit...).
struct bench_case {
  std::string name;
  void (*function)(benchmark::State&);
  std::function<void(benchmark::internal::Benchmark*)> configure;
};

inline std::vector<bench_case>& registered_cases() {
  static std::vector<bench_case> cases;
  return cases;
}

/// Adds a case to every round; use at namespace scope through a static variable:
/// @code
/// const int registered = hetero::bench::add("triad/baseline_kokkos", triad_kokkos,
///                                           [](auto* b) { b->Arg(1 << 20); });
/// @endcode
inline int add(std::string name, void (*function)(benchmark::State&),
               std::function<void(benchmark::internal::Benchmark*)> configure = {}) {
  registered_cases().push_back({std::move(name), function, std::move(configure)});
  return static_cast<int>(registered_cases().size());
}

/// A reporter that prints nothing: ranks other than 0 run the benchmarks silently.
class silent_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

/// Records in the output's context the ranks and the nodes MPI sees them on (`mpi_ranks`,
/// `nodes`), so that a result says where it ran (emulated nodes included: docs/nodes.md).
inline void add_placement_context() {
  int ranks = 1, node_rank = 0, nodes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  const int leads = node_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leads, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  benchmark::AddCustomContext("mpi_ranks", std::to_string(ranks));
  benchmark::AddCustomContext("nodes", std::to_string(nodes));
}

/// Runs the registered benchmarks under a hetero::runtime; returns main's exit code.
inline int run_benchmarks(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  int rounds = 7;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--hetero_rounds=")) {
      rounds = std::stoi(std::string(arg.substr(16)));
      HETERO_EXPECTS(rounds >= 1, "--hetero_rounds is ", rounds, "; allowed: 1 or more");
      continue;
    }
    // Only rank 0 writes the output file; the others would truncate it under rank 0's feet.
    if (rt.world_rank() != 0 && arg.starts_with("--benchmark_out")) continue;
    args.push_back(argv[i]);
  }
  // Odd rounds run the cases in reverse order, so that neither side of a baseline/rival pair
  // always runs second (on this machine the later of two identical MPI calls came out up to 8 %
  // slower when the order was fixed).
  const auto& cases = registered_cases();
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& c = cases[round % 2 == 0 ? i : cases.size() - 1 - i];
      auto* b = benchmark::RegisterBenchmark(c.name.c_str(), c.function);
      if (c.configure) c.configure(b);
    }
  }
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  add_placement_context();
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

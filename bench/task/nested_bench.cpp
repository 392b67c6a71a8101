// Cost of tasks declared inside tasks: M outer tasks, each declaring K empty inner tasks and
// finishing when they all finished, 2 threads, one rank. Variants:
//   baseline_omp   libgomp: `#pragma omp task` whose body opens a `#pragma omp taskgroup` of K tasks
//   tbb            oneTBB: `task_group::run` whose body runs a nested `task_group` of K tasks and waits
//   hetero         hetero::task_graph: M tasks whose bodies take a hetero::subgraph and spawn K tasks
//   hetero_replay  the same M tasks recorded once and replayed (the bodies declare their subgraphs again)
//   hetero_flat    the M x K inner tasks declared in the graph itself (no nesting): what nesting adds
// Arguments: M (outer tasks: workers and 16 x workers) and K (inner tasks per outer task: 8, 64).
// The time per inner task is the time of one iteration divided by M x K.
#include <hetero/task.hpp>

#include <omp.h>

#include <chrono>
#include <string>

#include "bench_main.hpp"

#if HETERO_BENCH_HAS_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace {

constexpr int threads = 2;

// The body of every inner task: an opaque call the compiler cannot remove.
[[gnu::noinline]] void work() { asm volatile(""); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --- libgomp ---------------------------------------------------------------------------------

void omp_nested(int outer, int inner) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
    for (int m = 0; m < outer; ++m) {
#pragma omp task
      {
#pragma omp taskgroup
        {
          for (int k = 0; k < inner; ++k) {
#pragma omp task
            work();
          }
        }  // waits for the K tasks (and runs them meanwhile)
      }
    }
  }  // the barrier at the end of the region waits for every task
}

void omp_bench(benchmark::State& state) {
  const int outer = static_cast<int>(state.range(0)), inner = static_cast<int>(state.range(1));
  omp_nested(outer, inner);  // warm the thread pool
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    omp_nested(outer, inner);
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

// --- hetero ----------------------------------------------------------------------------------

using graph_type = hetero::task_graph<>;

void hetero_declare(graph_type& graph, int outer, int inner) {
  for (int m = 0; m < outer; ++m)
    graph.spawn([inner](graph_type::subgraph_type& sg) {
      for (int k = 0; k < inner; ++k) sg.spawn([] { work(); });
    });
}

template <bool Replay>
void hetero_bench(benchmark::State& state) {
  const int outer = static_cast<int>(state.range(0)), inner = static_cast<int>(state.range(1));
  graph_type graph({.workers = threads, .comm = MPI_COMM_SELF});
  hetero::task_recording recording;
  if constexpr (Replay) recording = graph.record([&] { hetero_declare(graph, outer, inner); });
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    if constexpr (Replay) {
      graph.run(recording);
    } else {
      hetero_declare(graph, outer, inner);
      graph.wait();
    }
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

void hetero_flat_bench(benchmark::State& state) {
  const int outer = static_cast<int>(state.range(0)), inner = static_cast<int>(state.range(1));
  graph_type graph({.workers = threads, .comm = MPI_COMM_SELF});
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < outer * inner; ++i) graph.spawn([] { work(); });
    graph.wait();
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

// --- oneTBB ----------------------------------------------------------------------------------

#if HETERO_BENCH_HAS_TBB
oneapi::tbb::global_control tbb_threads(oneapi::tbb::global_control::max_allowed_parallelism, threads);

void tbb_bench(benchmark::State& state) {
  const int outer = static_cast<int>(state.range(0)), inner = static_cast<int>(state.range(1));
  const auto run = [&] {
    oneapi::tbb::task_group group;
    for (int m = 0; m < outer; ++m)
      group.run([inner] {
        oneapi::tbb::task_group nested;
        for (int k = 0; k < inner; ++k) nested.run([] { work(); });
        nested.wait();  // TBB runs other tasks while it waits
      });
    group.wait();
  };
  run();  // start the workers
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    run();
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}
#endif

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->ArgNames({"M", "K"});
  for (int outer : {threads, 16 * threads})
    for (int inner : {8, 64}) b->Args({outer, inner});
};

const int registered[] = {
    hetero::bench::add("nested/baseline_omp", omp_bench, configure),
    hetero::bench::add("nested/hetero", hetero_bench<false>, configure),
    hetero::bench::add("nested/hetero_replay", hetero_bench<true>, configure),
    hetero::bench::add("nested/hetero_flat", hetero_flat_bench, configure),
#if HETERO_BENCH_HAS_TBB
    hetero::bench::add("nested/tbb", tbb_bench, configure),
#endif
};

}  // namespace

HETERO_BENCHMARK_MAIN()

// Task overhead of hetero::task_graph against libgomp's `depend` tasks (the baseline of the
// build families) and oneTBB's flow graph (the baseline of the replay families), with empty task
// bodies, 2 threads each, on one rank. Three patterns:
//   independent  N tasks without dependencies
//   chain        N tasks, each after the previous one (inout of one event)
//   lattice      N tasks in layers of 16; each reads 4 tasks of the layer before (a fan-in and
//                fan-out of 4) and writes its own event
// and two ways:
//   build        declare the N tasks and run them, every iteration (what OpenMP always does)
//   replay       run a graph declared once (TBB: try_put into a built graph; hetero: replay a
//                recording). OpenMP cannot replay: its `omp_rebuild` variant builds again.
// hetero_in_order: the same graphs with every task priority(1), through the shared priority
// queue (what the Cholesky example does), for its cost per task.
// One iteration is one graph of N tasks; the time per task is the time divided by N (with
// N = 10000 and times in microseconds, 1 us per iteration is 0.1 ns per task).
#include <hetero/task.hpp>

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <vector>

#include "bench_main.hpp"

#if HETERO_BENCH_HAS_TBB
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#endif

namespace {

constexpr int threads = 2;
constexpr int width = 16;  // lattice: tasks per layer
constexpr int fan = 4;     // lattice: predecessors per task

// The body of every task: an opaque call the compiler cannot remove.
[[gnu::noinline]] void work() { asm volatile(""); }

enum class pattern { independent, chain, lattice };

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --- libgomp ---------------------------------------------------------------------------------

template <pattern P>
void omp_graph(int n, std::vector<char>& deps) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
    [[maybe_unused]] char* d = deps.data();
    for (int i = 0; i < n; ++i) {
      if constexpr (P == pattern::independent) {
#pragma omp task
        work();
      } else if constexpr (P == pattern::chain) {
#pragma omp task depend(inout : d[0])
        work();
      } else if (i < width) {
#pragma omp task depend(out : d[i])
        work();
      } else {
        // Read only by the pragma, which nvcc's front end does not see.
        [[maybe_unused]] const int layer = i / width, k = i % width, before = (layer - 1) * width;
#pragma omp task depend(in                                                                         \
                        : d[before + k], d[before + (k + 1) % width], d[before + (k + 2) % width], \
                          d[before + (k + 3) % width]) depend(out                                  \
                                                              : d[i])
        work();
      }
    }
  }  // the barrier at the end of the region waits for every task
}

template <pattern P>
void omp_bench(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<char> deps(static_cast<std::size_t>(n));
  omp_graph<P>(n, deps);  // warm the thread pool
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    omp_graph<P>(n, deps);
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

// --- hetero ----------------------------------------------------------------------------------

// With `order` = priority(1) every task goes through the shared priority queue (declaration
// order); priority(0) is the default work stealing.
template <pattern P>
void hetero_declare(hetero::task_graph<>& graph, int n, const hetero::event_array<1>& e,
                    hetero::priority_clause order) {
  for (int i = 0; i < n; ++i) {
    if constexpr (P == pattern::independent) {
      graph.spawn(order, [] { work(); });
    } else if constexpr (P == pattern::chain) {
      graph.spawn(order, hetero::inout(e(0)), [] { work(); });
    } else if (i < width) {
      graph.spawn(order, hetero::out(e(i)), [] { work(); });
    } else {
      const int layer = i / width, k = i % width, before = (layer - 1) * width;
      graph.spawn(order,
                  hetero::in(e(before + k), e(before + (k + 1) % width), e(before + (k + 2) % width),
                             e(before + (k + 3) % width)),
                  hetero::out(e(i)), [] { work(); });
    }
  }
}

template <pattern P, bool Replay, bool InOrder = false>
void hetero_bench(benchmark::State& state) {
  const auto order = hetero::priority(InOrder ? 1 : 0);
  const int n = static_cast<int>(state.range(0));
  hetero::task_graph graph({.workers = threads, .comm = MPI_COMM_SELF});
  const auto e = graph.events("e", n);
  hetero::task_recording recording;
  if constexpr (Replay) recording = graph.record([&] { hetero_declare<P>(graph, n, e, order); });
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    if constexpr (Replay) {
      graph.run(recording);
    } else {
      hetero_declare<P>(graph, n, e, order);
      graph.wait();
    }
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

// --- oneTBB flow graph ---------------------------------------------------------------------

#if HETERO_BENCH_HAS_TBB
namespace flow = oneapi::tbb::flow;
using node_type = flow::continue_node<flow::continue_msg>;

// The graph of one pattern; `start` fires the nodes without predecessors.
struct tbb_graph {
  flow::graph g;
  flow::broadcast_node<flow::continue_msg> start{g};
  std::deque<node_type> nodes;

  template <pattern P>
  void build(int n) {
    const auto body = [](const flow::continue_msg&) { work(); };
    for (int i = 0; i < n; ++i) {
      nodes.emplace_back(g, body);
      if constexpr (P == pattern::independent) {
        flow::make_edge(start, nodes.back());
      } else if constexpr (P == pattern::chain) {
        flow::make_edge(i == 0 ? static_cast<flow::sender<flow::continue_msg>&>(start) : nodes[nodes.size() - 2],
                        nodes.back());
      } else if (i < width) {
        flow::make_edge(start, nodes.back());
      } else {
        const int before = (i / width - 1) * width, k = i % width;
        for (int j = 0; j < fan; ++j)
          flow::make_edge(nodes[static_cast<std::size_t>(before + (k + j) % width)], nodes.back());
      }
    }
  }
  void run() {
    start.try_put(flow::continue_msg());
    g.wait_for_all();
  }
};

oneapi::tbb::global_control tbb_threads(oneapi::tbb::global_control::max_allowed_parallelism, threads);

template <pattern P, bool Replay>
void tbb_bench(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  tbb_graph built;
  if constexpr (Replay) built.build<P>(n);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    if constexpr (Replay) {
      built.run();
    } else {
      tbb_graph g;
      g.build<P>(n);
      g.run();
    }
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}
#endif

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Arg(1000)->Arg(10000);
};

template <pattern P>
int add_pattern(const char* name) {
  const std::string p = name;
  hetero::bench::add(p + "_build/baseline_omp", omp_bench<P>, configure);
  hetero::bench::add(p + "_build/hetero", hetero_bench<P, false>, configure);
  hetero::bench::add(p + "_replay/omp_rebuild", omp_bench<P>, configure);
  hetero::bench::add(p + "_replay/hetero", hetero_bench<P, true>, configure);
  hetero::bench::add(p + "_build/hetero_in_order", hetero_bench<P, false, true>, configure);
  hetero::bench::add(p + "_replay/hetero_in_order", hetero_bench<P, true, true>, configure);
#if HETERO_BENCH_HAS_TBB
  hetero::bench::add(p + "_build/tbb", tbb_bench<P, false>, configure);
  hetero::bench::add(p + "_replay/baseline_tbb", tbb_bench<P, true>, configure);
#endif
  return 0;
}

const int registered[] = {add_pattern<pattern::independent>("independent"), add_pattern<pattern::chain>("chain"),
                          add_pattern<pattern::lattice>("lattice")};

}  // namespace

HETERO_BENCHMARK_MAIN()

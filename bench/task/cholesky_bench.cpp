// Block Cholesky on one rank, 2 threads, b = 128, N = 2048 and 4096, float and double:
// hetero tasklets (examples/cholesky: left-looking, each tile's updates in calls of
// `update_width` tile columns; declared and run in declaration order (every task priority(1))
// and with the default work stealing, and replayed from a recording) against the same
// left-looking version in OpenMP tasks (the baseline), the seed's Figure 7 shape in OpenMP
// tasks (right-looking, one b x b x b call per task) and LAPACKE_?potrf with 2 OpenBLAS
// threads, all in this binary; hetero_data is the same factorisation on task data (host tiles,
// examples/cholesky/cholesky_data.hpp); plus N = 4096 with b = 256 as extra families. With StarPU
// (libstarpu-dev), the families cholesky_starpu_* put hetero beside StarPU 1.3 on the same
// tiles, kernels and number of workers, N = 4096 and 8192 (cholesky_starpu.hpp). Tile kernels
// run one BLAS thread each. GFLOP/s = N^3/3 / time (docs/results/task.md).
#include <hetero/task.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_main.hpp"
#include "cholesky_data.hpp"
#include "cholesky_omp.hpp"
#include "cholesky_omp_right_looking.hpp"
#include "cholesky_tasklet.hpp"
#include "tiles.hpp"
#if HETERO_BENCH_HAS_STARPU
#include "cholesky_starpu.hpp"
#endif

namespace {

constexpr int threads = 2;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The left-looking version (the baseline) or, with RightLooking, the seed's Figure 7 shape.
template <cholesky::real T, int tile, bool RightLooking = false>
void omp_tasks(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  cholesky::tiles<T> a(n / tile, tile, hetero::communicator(MPI_COMM_SELF));
  openblas_set_num_threads(1);
  for (auto _ : state) {
    a.fill();
    const auto start = std::chrono::steady_clock::now();
    if constexpr (RightLooking) {
      cholesky::factorize_omp_right_looking(a, threads);
    } else {
      cholesky::factorize_omp(a, threads);
    }
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

template <cholesky::real T, int tile, bool Replay, bool InOrder = true>
void tasklets(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  hetero::task_graph graph(
      {.workers = threads, .comm = MPI_COMM_SELF, .window = cholesky::whole_graph_window(n / tile)});
  cholesky::tiles<T> a(n / tile, tile, hetero::communicator(MPI_COMM_SELF));
  cholesky::tasklet_factorization<T> factorization(graph, a, InOrder);
  hetero::task_recording recording;
  if constexpr (Replay) recording = graph.record([&] { factorization.declare(); });
  openblas_set_num_threads(1);
  for (auto _ : state) {
    a.fill();
    const auto start = std::chrono::steady_clock::now();
    if constexpr (Replay) {
      graph.run(recording);
    } else {
      factorization.declare();
      graph.wait();
    }
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

// The same factorisation on task data (host tiles): the graph derives the dependencies from
// the tiles each task reads and updates.
template <cholesky::real T, int tile>
void on_data(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  hetero::task_graph graph(
      {.workers = threads, .comm = MPI_COMM_SELF, .window = cholesky::whole_graph_window(n / tile)});
  cholesky::tiles<T> a(n / tile, tile, hetero::communicator(MPI_COMM_SELF));
  cholesky::data_factorization<T> factorization(graph, a);
  openblas_set_num_threads(1);
  for (auto _ : state) {
    a.fill();
    const auto start = std::chrono::steady_clock::now();
    factorization.declare();
    graph.wait();
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
}

template <cholesky::real T>
void lapacke(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<T> a(static_cast<std::size_t>(n * n));
  openblas_set_num_threads(threads);
  for (auto _ : state) {
    for (std::int64_t c = 0; c < n; ++c)
      for (std::int64_t r = 0; r <= c; ++r) a[static_cast<std::size_t>(c * n + r)] = cholesky::element<T>(r, c, n);
    const auto start = std::chrono::steady_clock::now();
    const int info = std::same_as<T, double>
                         ? LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', static_cast<int>(n),
                                          reinterpret_cast<double*>(a.data()), static_cast<int>(n))
                         : LAPACKE_spotrf(LAPACK_COL_MAJOR, 'U', static_cast<int>(n),
                                          reinterpret_cast<float*>(a.data()), static_cast<int>(n));
    hetero::bench::set_iteration_time(state, seconds_since(start));
    if (info != 0) state.SkipWithError("potrf failed");
  }
  openblas_set_num_threads(1);
}

#if HETERO_BENCH_HAS_STARPU
// StarPU with `threads` CPU workers, started for this case only and shut down after it.
template <cholesky::real T, bool RightLooking>
void starpu(benchmark::State& state, const char* scheduler, cholesky::starpu::priority_mode priorities) {
  const int n = static_cast<int>(state.range(0));
  cholesky::tiles<T> a(n / 128, 128, hetero::communicator(MPI_COMM_SELF));
  openblas_set_num_threads(1);
  cholesky::starpu::start(threads, scheduler);
  {
    cholesky::starpu::tile_handles<T> handles(a);
    for (auto _ : state) {
      a.fill();  // on the tiles in main memory: StarPU holds no other copy (CPU workers only)
      const auto start = std::chrono::steady_clock::now();
      if constexpr (RightLooking) {
        cholesky::starpu::factorize_right_looking(handles, priorities);
      } else {
        cholesky::starpu::factorize_left_looking(handles, priorities);
      }
      hetero::bench::set_iteration_time(state, seconds_since(start));
    }
  }
  cholesky::starpu::stop();
  // The peer's factor checked where that is cheap (the smoke run of the test command): a
  // baseline that computes something else would make every ratio meaningless.
  const double allowed = sizeof(T) == 8 ? 1e-12 : 1e-5;
  if (n <= 2048 && !(a.residual() < allowed))
    throw std::runtime_error("StarPU's Cholesky factor has residual " + std::to_string(a.residual()) +
                             " at n = " + std::to_string(n) + "; allowed below " + std::to_string(allowed));
}
template <cholesky::real T, bool RightLooking, cholesky::starpu::priority_mode Priorities>
void starpu_default(benchmark::State& state) {
  starpu<T, RightLooking>(state, nullptr, Priorities);
}
template <cholesky::real T>
void starpu_dmdas(benchmark::State& state) {
  starpu<T, true>(state, "dmdas", cholesky::starpu::priority_mode::critical_path);
}

// hetero against StarPU at N = 4096 and 8192 (the seed's sizes); the smoke run takes 1024.
const auto configure_starpu = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  if (hetero::bench::smoke_run()) {
    b->Arg(1024);
  } else {
    b->Arg(4096)->Arg(8192);
  }
};

// StarPU's best order (right-looking) with its default scheduler and every task at the default
// priority (faster here than with critical-path priorities) is the family's baseline; the same
// with the critical-path priorities of StarPU's examples, dmdas with them (the scheduler its
// documentation recommends with performance models) and hetero's left-looking order are
// StarPU's other chances.
template <cholesky::real T>
int add_starpu(const std::string& family) {
  using cholesky::starpu::priority_mode;
  hetero::bench::add(family + "/baseline_starpu", starpu_default<T, true, priority_mode::none>, configure_starpu);
  hetero::bench::add(family + "/starpu_priorities", starpu_default<T, true, priority_mode::critical_path>,
                     configure_starpu);
  hetero::bench::add(family + "/starpu_dmdas", starpu_dmdas<T>, configure_starpu);
  hetero::bench::add(family + "/starpu_left_looking", starpu_default<T, false, priority_mode::none>,
                     configure_starpu);
  hetero::bench::add(family + "/hetero", tasklets<T, 128, false>, configure_starpu);
  hetero::bench::add(family + "/hetero_data", on_data<T, 128>, configure_starpu);
  return 0;
}
#endif

// The sizes; the smoke run takes one small size (8 tiles a side at b = 128, 4 at 256):
// every case still runs to its end, in a second where the full sizes took 25 s of the tests.
const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  if (hetero::bench::smoke_run()) {
    b->Arg(1024);
  } else {
    b->Arg(2048)->Arg(4096);
  }
};
const auto configure_large_tiles = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Arg(hetero::bench::smoke_run() ? 1024 : 4096);
};

// The table: b = 128, N = 2048 and 4096; hetero_no_priority is the same tasklet code
// without priorities (the scheduler's default work-stealing order). The families *_b256
// (N = 4096, b = 256) are extra information: the same four versions with 256-wide tiles
// (docs/results/task.md says why).
template <cholesky::real T, int tile>
int add_precision(const std::string& family, const auto& sizes) {
  hetero::bench::add(family + "/baseline_omp_tasks", omp_tasks<T, tile>, sizes);
  hetero::bench::add(family + "/omp_tasks_right_looking", omp_tasks<T, tile, true>, sizes);
  hetero::bench::add(family + "/lapacke_potrf", lapacke<T>, sizes);
  hetero::bench::add(family + "/hetero", tasklets<T, tile, false>, sizes);
  hetero::bench::add(family + "/hetero_replay", tasklets<T, tile, true>, sizes);
  hetero::bench::add(family + "/hetero_data", on_data<T, tile>, sizes);
  if (tile == 128) hetero::bench::add(family + "/hetero_no_priority", tasklets<T, tile, false, false>, sizes);
  return 0;
}

const int registered[] = {add_precision<double, 128>("cholesky_double", configure),
                          add_precision<float, 128>("cholesky_float", configure),
                          add_precision<double, 256>("cholesky_double_b256", configure_large_tiles),
                          add_precision<float, 256>("cholesky_float_b256", configure_large_tiles)};
#if HETERO_BENCH_HAS_STARPU
const int registered_starpu[] = {add_starpu<double>("cholesky_starpu_double"),
                                 add_starpu<float>("cholesky_starpu_float")};
#endif

}  // namespace

HETERO_BENCHMARK_MAIN()

// Block Cholesky on 2 ranks, 1 worker (thread) each, tile rows cyclic over the ranks, b = 128,
// N = 2048, 4096 and 8192: hetero tasklets with cross-rank events (examples/cholesky, in the
// manner of the seed's Figure 9) against MPI+OpenMP (the baseline, the seed's other peer):
// per panel, potrf, a broadcast of the diagonal tile, the trsms, an allgather of the panel and
// the updates, the loops over a rank's tile rows shared by `workers` OpenMP threads, and no
// overlap between steps (bulk-synchronous, as such codes are written); hetero_data is the same
// factorisation on task data (examples/cholesky/cholesky_data.hpp: the graph moves the tiles).
// The cholesky_2ranks_double_trace family measures hetero's trace (docs/results/core.md): the same
// tasklets with a `hetero::tracer` recording every task, wait and collective, against the same
// tasklets untraced. Every variant runs one untimed factorisation first (counter first_ms).
#include <hetero/core/trace.hpp>
#include <hetero/task.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_main.hpp"
#include "cholesky_data.hpp"
#include "cholesky_tasklet.hpp"
#include "tiles.hpp"

namespace {

/// The MPI datatype of T (the bulk-synchronous version's messages).
template <cholesky::real T>
MPI_Datatype mpi_type() {
  return std::same_as<T, double> ? MPI_DOUBLE : MPI_FLOAT;
}

constexpr int tile = 128;
constexpr int workers = 1;  // per rank: 2 ranks on this 2-core machine, one core each

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The first factorisation of a variant, untimed by the benchmark (its seconds go to the
// counter first_ms): what a variant does once per program (each version allocates its copies
// of other ranks' tiles in its first run) does not count among the repeated runs, of which
// Google Benchmark takes only 1-2 at the largest sizes, and is shown beside them.
template <class Tiles, class Factorize>
double first_factorization(Tiles& a, Factorize factorize) {
  a.fill();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  factorize();
  return seconds_since(start);
}

// The same, for a version whose factorisation a task graph runs.
template <class Tiles, class Factorization, class Graph>
double first_graph_run(Tiles& a, Factorization& factorization, Graph& graph) {
  return first_factorization(a, [&] {
    factorization.declare();
    graph.wait();
  });
}

// Both versions' factors are checked where that is cheap (n <= 2048, which the smoke run of
// the test command takes): a baseline that computed something else would void every ratio.
// Collective.
template <cholesky::real T>
void check_factor(const cholesky::tiles<T>& a, const char* version) {
  if (a.order() > 2048) return;
  const double allowed = sizeof(T) == 8 ? 1e-12 : 1e-5, residual = a.residual();
  if (!(residual < allowed))
    throw std::runtime_error(std::string(version) + "'s Cholesky factor has residual " + std::to_string(residual) +
                             " at n = " + std::to_string(a.order()) + "; allowed below " +
                             std::to_string(allowed));
}

// Right-looking, one collective step per panel.
template <cholesky::real T>
void factorize_bulk(cholesky::tiles<T>& a, MPI_Comm comm) {
  const int nt = a.tiles_per_side(), b = a.tile_size();
  int me = 0, p = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  const auto elements = static_cast<std::size_t>(a.tile_elements());
  std::vector<T> diagonal(elements), panel(static_cast<std::size_t>(nt) * elements), mine;
  std::vector<int> counts(static_cast<std::size_t>(p)), displacements(static_cast<std::size_t>(p));
  for (int k = 0; k < nt; ++k) {
    if (a.mine(k)) {
      cholesky::potrf(a.local(k, k), b);
      std::copy_n(a.local(k, k), elements, diagonal.data());
    }
    MPI_Bcast(diagonal.data(), static_cast<int>(elements), mpi_type<T>(), a.owner(k), comm);
    mine.clear();
#pragma omp parallel for num_threads(workers) schedule(dynamic)
    for (int i = k + 1; i < nt; ++i)
      if (a.mine(i)) cholesky::trsm(diagonal.data(), a.local(i, k), b);
    for (int i = k + 1; i < nt; ++i)
      if (a.mine(i)) mine.insert(mine.end(), a.local(i, k), a.local(i, k) + elements);
    // Gather the column panel (k+1 ... nt-1, k), rank by rank, then put it in row order.
    int offset = 0;
    for (int r = 0; r < p; ++r) {
      int tiles_of_r = 0;
      for (int i = k + 1; i < nt; ++i) tiles_of_r += a.owner(i) == r;
      counts[static_cast<std::size_t>(r)] = tiles_of_r * static_cast<int>(elements);
      displacements[static_cast<std::size_t>(r)] = offset;
      offset += counts[static_cast<std::size_t>(r)];
    }
    std::vector<T> gathered(static_cast<std::size_t>(offset));
    MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), mpi_type<T>(), gathered.data(), counts.data(),
                   displacements.data(), mpi_type<T>(), comm);
    std::vector<int> next(displacements.begin(), displacements.end());
    for (int i = k + 1; i < nt; ++i) {
      const int r = a.owner(i);
      std::copy_n(gathered.data() + next[static_cast<std::size_t>(r)], elements,
                  panel.data() + static_cast<std::size_t>(i) * elements);
      next[static_cast<std::size_t>(r)] += static_cast<int>(elements);
    }
#pragma omp parallel for num_threads(workers) schedule(dynamic)
    for (int i = nt - 1; i > k; --i) {  // the longest rows first
      if (!a.mine(i)) continue;
      for (int j = k + 1; j < i; ++j)
        cholesky::gemm(a.local(i, k), panel.data() + static_cast<std::size_t>(j) * elements, a.local(i, j), b);
      cholesky::syrk(a.local(i, k), a.local(i, i), b);
    }
  }
}

template <cholesky::real T>
void mpi_openmp(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  cholesky::tiles<T> a(n / tile, tile, hetero::communicator(MPI_COMM_WORLD));
  openblas_set_num_threads(1);
  const auto factorize = [&] {
    a.fill();
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    factorize_bulk(a, MPI_COMM_WORLD);
    return seconds_since(start);
  };
  state.counters["first_ms"] = factorize() * 1e3;
  for (auto _ : state) hetero::bench::set_iteration_time(state, factorize());
  check_factor(a, "MPI+OpenMP");
}

// The tasklet factorization; `traced`: a fresh tracer records each run (its events are written
// out after the run's time, as the runtime writes its trace at the end).
template <cholesky::real T>
void tasklets(benchmark::State& state, bool traced) {
  const int n = static_cast<int>(state.range(0));
  hetero::task_graph graph({.workers = workers, .window = cholesky::whole_graph_window(n / tile)});
  cholesky::tiles<T> a(n / tile, tile, hetero::communicator(MPI_COMM_WORLD));
  cholesky::tasklet_factorization<T> factorization(graph, a);
  openblas_set_num_threads(1);
  std::size_t trace_bytes = 0;
  state.counters["first_ms"] = first_graph_run(a, factorization, graph) * 1e3;
  for (auto _ : state) {
    a.fill();
    auto tracer = traced ? std::make_shared<hetero::tracer>() : nullptr;
    std::optional<hetero::scoped_observer> listening;
    if (tracer) listening.emplace(tracer);
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    factorization.declare();
    graph.wait();
    hetero::bench::set_iteration_time(state, seconds_since(start));
    listening.reset();
    if (tracer) trace_bytes = tracer->json_events(0).size();
  }
  if (traced) state.counters["trace_bytes"] = static_cast<double>(trace_bytes);
  check_factor(a, traced ? "hetero (traced)" : "hetero");
}

// The factorisation on task data (host tiles): the graph moves the tiles between the ranks.
template <cholesky::real T>
void on_data(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  hetero::task_graph graph({.workers = workers, .window = cholesky::whole_graph_window(n / tile)});
  cholesky::tiles<T> a(n / tile, tile, hetero::communicator(MPI_COMM_WORLD));
  cholesky::data_factorization<T> factorization(graph, a);
  openblas_set_num_threads(1);
  state.counters["first_ms"] = first_graph_run(a, factorization, graph) * 1e3;
  for (auto _ : state) {
    a.fill();
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    factorization.declare();
    graph.wait();
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
  check_factor(a, "hetero on task data");
}

template <cholesky::real T>
void tasklets_untraced(benchmark::State& state) {
  tasklets<T>(state, false);
}

template <cholesky::real T>
void tasklets_traced(benchmark::State& state) {
  tasklets<T>(state, true);
}

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Arg(2048);
  if (!hetero::bench::smoke_run()) b->Arg(4096)->Arg(8192);
};

template <cholesky::real T>
int add_precision(const char* family) {
  const std::string f = family;
  hetero::bench::add(f + "/baseline_mpi_openmp", mpi_openmp<T>, configure);
  hetero::bench::add(f + "/hetero", tasklets_untraced<T>, configure);
  hetero::bench::add(f + "/hetero_data", on_data<T>, configure);
  return 0;
}

int add_trace(const char* family) {
  const std::string f = family;
  hetero::bench::add(f + "/baseline_hetero_untraced", tasklets_untraced<double>, configure);
  hetero::bench::add(f + "/hetero_traced", tasklets_traced<double>, configure);
  return 0;
}

const int registered[] = {add_precision<double>("cholesky_2ranks_double"),
                          add_precision<float>("cholesky_2ranks_float"),
                          add_trace("cholesky_2ranks_double_trace")};

}  // namespace

HETERO_BENCHMARK_MAIN()

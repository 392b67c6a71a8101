// Block Cholesky with device tiles on one GPU (examples/cholesky on task data: cuBLAS and
// cuSOLVER tile kernels, the graph moving the tiles) against cuSOLVER's potrf on the whole
// matrix on the same GPU. Both start and end with the matrix in host memory: the baseline copies
// it to the GPU, factorises it and copies it back; `cusolver_on_device` is the factorisation
// alone (the GPU's rate, no copy). The task data version runs on 1 stream and on 4 (four
// instances of the GPU: tasks overlap), with device tiles and with both bodies (the graph
// picking the side), and with host tiles at the smallest size. Counters: the tiles moved to the
// device and back per factorisation, and the minimum (each tile of the lower triangle in once
// and out once). Each variant factorises once untimed first (for both bodies, the calibration:
// counter calibration_ms). CUDA builds only (the GPU kit).
#include <hetero/core/runtime.hpp>
#include <hetero/task.hpp>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench_main.hpp"
#include "cholesky_data.hpp"
#include "kernels.hpp"

namespace {

using device = Kokkos::Cuda;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status));
}
void check(cusolverStatus_t status, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + " failed");
}

// The tile size for order n: 16 tile rows, tiles of 512 to 2048.
int tile_for(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>(n / 16, 512, 2048)); }

// The test matrix in tiles on this rank alone (no coarray: one rank, and matrices of GBs).
class local_tiles {
 public:
  local_tiles(int nt, int b) : m_nt(nt), m_b(b), m_data("tiles", static_cast<std::size_t>(nt) * nt * b * b) {}
  [[nodiscard]] int tiles_per_side() const noexcept { return m_nt; }
  [[nodiscard]] int tile_size() const noexcept { return m_b; }
  [[nodiscard]] int owner(std::int64_t) const noexcept { return 0; }
  [[nodiscard]] cholesky::tile_view<double> tile(std::int64_t i, std::int64_t k) const {
    return cholesky::tile_view<double>(m_data.data() + (i * m_nt + k) * m_b * m_b, m_b, m_b);
  }
  // One rank owns every tile: no other rank's to map.
  [[nodiscard]] cholesky::tile_view<double> peer_tile(std::int64_t, std::int64_t) const { return {}; }
  void fill() {
    const std::int64_t n = static_cast<std::int64_t>(m_nt) * m_b;
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, m_nt), [&](std::int64_t i) {
          for (std::int64_t k = 0; k <= i; ++k)
            cholesky::fill_tile(tile(i, k).data(), static_cast<int>(i), static_cast<int>(k), m_b, n);
        });
  }
  // ||A - L L^T|| / ||A|| (checked at the smallest size only: it takes n^3 host flops).
  [[nodiscard]] double residual() const {
    std::vector<double> row(static_cast<std::size_t>(m_nt) * m_b * m_b);
    return cholesky::residual<double>(m_nt, m_b, [&](int i) -> const double* {
      for (int k = 0; k <= i; ++k)
        std::copy(tile(i, k).data(), tile(i, k).data() + m_b * m_b,
                  row.data() + static_cast<std::size_t>(k) * m_b * m_b);
      return row.data();
    });
  }

 private:
  int m_nt;
  int m_b;
  Kokkos::View<double*, Kokkos::HostSpace> m_data;
};

// The task data version with `streams` instances of the GPU.
void hetero_tiles(benchmark::State& state, cholesky::tiles_on where, int streams) {
  const std::int64_t n = state.range(0);
  const int b = tile_for(n), nt = static_cast<int>(n / b);
  std::vector<cudaStream_t> handles(static_cast<std::size_t>(streams));
  std::vector<device> instances;
  for (auto& s : handles) {
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    instances.emplace_back(s);
  }
  {
    // A worker waits for each device task it launches: one per stream, and 4 for host tiles.
    hetero::task_graph<device> graph(
        {.workers = streams + 4, .comm = MPI_COMM_SELF, .window = cholesky::whole_graph_window(nt)}, instances);
    local_tiles a(nt, b);
    cholesky::data_factorization<double, device> factorization(graph, a, where);
    openblas_set_num_threads(1);
    // One untimed factorisation first: the calibration of tasks with both bodies (the first runs
    // of each side, on the host tens to hundreds of milliseconds a tile kernel at these sizes),
    // paid once by a program that factorises more than once; every variant gets it.
    a.fill();
    const auto calibrating = std::chrono::steady_clock::now();
    factorization.declare();
    graph.wait();
    state.counters["calibration_ms"] = seconds_since(calibrating) * 1e3;
    std::uint64_t to_device = 0, to_host = 0, runs = 0;
    for (auto _ : state) {
      a.fill();
      graph.reset_statistics();
      const auto start = std::chrono::steady_clock::now();
      factorization.declare();
      graph.wait();
      hetero::bench::set_iteration_time(state, seconds_since(start));
      const auto stats = graph.statistics();
      to_device += stats.moves.to_device.moves;
      to_host += stats.moves.to_host.moves;
      ++runs;
    }
    const double minimum = static_cast<double>(nt) * (nt + 1) / 2;
    state.counters["tiles_to_device"] = static_cast<double>(to_device) / static_cast<double>(runs);
    state.counters["tiles_to_host"] = static_cast<double>(to_host) / static_cast<double>(runs);
    state.counters["tiles_minimum"] = minimum;
    state.counters["gflops"] =
        benchmark::Counter(cholesky::flops(n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    hetero::bench::report_bound(state, hetero::bench::potrf_work(n, true));  // from host memory and back
    // The factor checked once per size and placement (not every round), with OpenBLAS on all
    // of the host's cores: its n^3 flops took 14 s on one.
    static std::set<std::tuple<std::int64_t, int, int>> checked;
    if (n <= 8192 && checked.emplace(n, static_cast<int>(where), streams).second) {
      openblas_set_num_threads(static_cast<int>(Kokkos::DefaultHostExecutionSpace().concurrency()));
      const double residual = a.residual();
      openblas_set_num_threads(1);
      if (!(residual < 1e-12))
        throw std::runtime_error("the task data Cholesky's factor is wrong at n = " + std::to_string(n));
    }
  }
  for (auto s : handles) cudaStreamDestroy(s);
}

// cuSOLVER on the whole matrix; `with_copies`: from host memory and back.
void cusolver(benchmark::State& state, bool with_copies) {
  const std::int64_t n = state.range(0);
  std::vector<double> host(static_cast<std::size_t>(n * n));
  double* a = nullptr;
  int* info = nullptr;
  cusolverDnHandle_t solver = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&a), host.size() * sizeof(double)), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&info), sizeof(int)), "cudaMalloc");
  check(cusolverDnCreate(&solver), "cusolverDnCreate");
  int lwork = 0;
  check(cusolverDnDpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), a, static_cast<int>(n),
                                    &lwork),
        "cusolverDnDpotrf_bufferSize");
  double* work = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&work), static_cast<std::size_t>(lwork) * sizeof(double)),
        "cudaMalloc");
  const auto factorize = [&] {  // the seconds of one factorisation (with its copies)
    Kokkos::parallel_for("fill", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n),
                         [&](std::int64_t c) {
                           for (std::int64_t r = c; r < n; ++r)
                             host[static_cast<std::size_t>(c * n + r)] = cholesky::element<double>(r, c, n);
                         });
    if (!with_copies)
      check(cudaMemcpy(a, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto start = std::chrono::steady_clock::now();
    if (with_copies)
      check(cudaMemcpy(a, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cusolverDnDpotrf(solver, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), a, static_cast<int>(n), work,
                           lwork, info),
          "cusolverDnDpotrf");
    if (with_copies)
      check(cudaMemcpy(host.data(), a, host.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return seconds_since(start);
  };
  factorize();  // untimed, as the task data versions' first factorisation (cuSOLVER's kernels loaded)
  for (auto _ : state) hetero::bench::set_iteration_time(state, factorize());
  int result = 0;
  check(cudaMemcpy(&result, info, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (result != 0) throw std::runtime_error("cusolverDnDpotrf info " + std::to_string(result));
  state.counters["gflops"] =
      benchmark::Counter(cholesky::flops(n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  hetero::bench::report_bound(state, hetero::bench::potrf_work(n, with_copies));
  cudaFree(work);
  cudaFree(info);
  cudaFree(a);
  cusolverDnDestroy(solver);
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  if (hetero::bench::smoke_run()) {
    b->Arg(2048);
  } else {
    b->Arg(8192)->Arg(16384)->Arg(32768);
  }
};
const auto smallest = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Arg(hetero::bench::smoke_run() ? 2048 : 8192);
};

const int registered = [] {
  const std::string f = "cholesky_gpu_double/";
  hetero::bench::add(
      f + "baseline_cusolver", [](benchmark::State& s) { cusolver(s, true); }, sizes);
  hetero::bench::add(
      f + "cusolver_on_device", [](benchmark::State& s) { cusolver(s, false); }, sizes);
  hetero::bench::add(
      f + "hetero_device", [](benchmark::State& s) { hetero_tiles(s, cholesky::tiles_on::device, 1); }, sizes);
  hetero::bench::add(
      f + "hetero_device_4streams", [](benchmark::State& s) { hetero_tiles(s, cholesky::tiles_on::device, 4); },
      sizes);
  hetero::bench::add(
      f + "hetero_either_4streams", [](benchmark::State& s) { hetero_tiles(s, cholesky::tiles_on::either, 4); },
      sizes);
  hetero::bench::add(
      f + "hetero_host", [](benchmark::State& s) { hetero_tiles(s, cholesky::tiles_on::host, 1); }, smallest);
  return 0;
}();

}  // namespace

HETERO_BENCHMARK_MAIN()

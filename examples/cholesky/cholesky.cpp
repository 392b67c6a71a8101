// Block Cholesky on task data across ranks (tile rows cyclic over the ranks; left-looking,
// cholesky_data.hpp): the tiles on the GPU in a CUDA build (cuBLAS and cuSOLVER), on the host
// otherwise, or on either side as the graph finds fastest; and the explicit tasklet version
// (cross-rank events and fetch tasks as in Figure 9 of the XcalableMP tasklet paper,
// cholesky_tasklet.hpp) for comparison. Prints the time, GFLOP/s, the moves and the residual
// ||A - L L^T|| / ||A||; exits non-zero when a residual is too large.
//   mpiexec -n <ranks> cholesky [n=2048] [b=128] [double|float|both] [workers=0]
//                               [tiles=default|host|device|either|tasklet|all]
// default: device in a CUDA build, host otherwise; all: the four one after the other.
#include <hetero/comm/communicator.hpp>
#include <hetero/config.hpp>
#include <hetero/core/runtime.hpp>
#include <hetero/task.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cholesky_data.hpp"
#include "cholesky_tasklet.hpp"
#include "tiles.hpp"

namespace {

template <cholesky::real T>
bool run(int n, int b, int workers, const std::string& version) {
  hetero::task_graph graph({.workers = workers, .window = cholesky::whole_graph_window(n / b)});
  const hetero::communicator world;
  cholesky::tiles<T> a(n / b, b, world);
  const auto where = version == "device"   ? cholesky::tiles_on::device
                     : version == "either" ? cholesky::tiles_on::either
                                           : cholesky::tiles_on::host;
  cholesky::data_factorization<T> on_data(graph, a, where);
  cholesky::tasklet_factorization<T> tasklets(graph, a);
  a.fill();
  openblas_set_num_threads(1);  // one BLAS thread per task
  world.barrier();
  const auto start = std::chrono::steady_clock::now();
  if (version == "tasklet") {
    tasklets.declare();
  } else {
    on_data.declare();
  }
  graph.wait();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double residual = a.residual();
  const double allowed = sizeof(T) == 8 ? 1e-12 : 1e-5;
  const hetero::task_statistics stats = graph.statistics();
  if (graph.rank() == 0) {
    std::printf(
        "%-6s %-7s n=%d b=%d ranks=%d workers=%d: %.3f s, %.1f GFLOP/s, residual %.2e (%s, allowed %.0e)\n",
        sizeof(T) == 8 ? "double" : "float", version.c_str(), n, b, graph.size(), graph.workers(), seconds,
        cholesky::flops(n) / seconds * 1e-9, residual, residual < allowed ? "ok" : "FAILED", allowed);
    if (version != "tasklet") {
      const auto* gemm = stats.find("gemm");
      std::printf(
          "       rank 0 moved %llu tiles to the device, %llu to the host, %llu from other ranks; gemm ran "
          "%llu times on the host, %llu on the device\n",
          static_cast<unsigned long long>(stats.moves.to_device.moves),
          static_cast<unsigned long long>(stats.moves.to_host.moves),
          static_cast<unsigned long long>(stats.moves.from_ranks.moves),
          static_cast<unsigned long long>(gemm ? gemm->host_runs : 0),
          static_cast<unsigned long long>(gemm ? gemm->device_runs : 0));
    }
  }
  return residual < allowed;
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
  const int b = argc > 2 ? std::atoi(argv[2]) : 128;
  const std::string precision = argc > 3 ? argv[3] : "both";
  const int workers = argc > 4 ? std::atoi(argv[4]) : 0;
  std::string tiles = argc > 5 ? argv[5] : "default";
  if (tiles == "default") tiles = HETERO_HAS_CUDA() ? "device" : "host";
  const std::vector<std::string> known{"host", "device", "either", "tasklet"};
  const bool known_tiles = tiles == "all" || std::find(known.begin(), known.end(), tiles) != known.end();
  if (n <= 0 || b <= 0 || n % b != 0 || (precision != "double" && precision != "float" && precision != "both") ||
      workers < 0 || !known_tiles) {
    if (rt.world_rank() == 0)
      std::fprintf(stderr,
                   "usage: cholesky [n > 0] [b > 0 dividing n] [double|float|both] [workers >= 0] "
                   "[default|host|device|either|tasklet|all]; got n=%d b=%d %s %d %s\n",
                   n, b, precision.c_str(), workers, tiles.c_str());
    return 2;
  }
  const std::vector<std::string> versions = tiles == "all" ? known : std::vector<std::string>{tiles};
  bool ok = true;
  for (const auto& version : versions) {
    if (precision != "float") ok = run<double>(n, b, workers, version) && ok;
    if (precision != "double") ok = run<float>(n, b, workers, version) && ok;
  }
  return ok ? 0 : 1;
}

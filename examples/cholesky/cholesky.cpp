// Block Cholesky with hetero tasklets on every rank (tile rows cyclic over the ranks,
// cross-rank events as in Figure 9 of the XcalableMP tasklet paper; left-looking, cholesky_tasklet.hpp). Prints
// the time, GFLOP/s and the residual ||A - L L^T|| / ||A||; exits non-zero when the residual is too large.
//   mpiexec -n <ranks> cholesky [n=2048] [b=128] [double|float|both] [workers=0]
#include <hetero/comm/communicator.hpp>
#include <hetero/core/runtime.hpp>
#include <hetero/task.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cholesky_tasklet.hpp"
#include "tiles.hpp"

namespace {

template <cholesky::real T>
bool run(int n, int b, int workers) {
  hetero::task_graph graph({.workers = workers, .window = cholesky::whole_graph_window(n / b)});
  const hetero::communicator world;
  cholesky::tiles<T> a(n / b, b, world);
  cholesky::tasklet_factorization<T> factorization(graph, a);
  a.fill();
  openblas_set_num_threads(1);  // one BLAS thread per task
  world.barrier();
  const auto start = std::chrono::steady_clock::now();
  factorization.declare();
  graph.wait();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double residual = a.residual();
  const double allowed = sizeof(T) == 8 ? 1e-12 : 1e-5;
  if (graph.rank() == 0)
    std::printf("%-6s n=%d b=%d ranks=%d workers=%d: %.3f s, %.1f GFLOP/s, residual %.2e (%s, allowed %.0e)\n",
                sizeof(T) == 8 ? "double" : "float", n, b, graph.size(), graph.workers(), seconds,
                cholesky::flops(n) / seconds * 1e-9, residual, residual < allowed ? "ok" : "FAILED", allowed);
  return residual < allowed;
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
  const int b = argc > 2 ? std::atoi(argv[2]) : 128;
  const std::string precision = argc > 3 ? argv[3] : "both";
  const int workers = argc > 4 ? std::atoi(argv[4]) : 0;
  if (n <= 0 || b <= 0 || n % b != 0 || (precision != "double" && precision != "float" && precision != "both") ||
      workers < 0) {
    if (rt.world_rank() == 0)
      std::fprintf(
          stderr,
          "usage: cholesky [n > 0] [b > 0 dividing n] [double|float|both] [workers >= 0]; got n=%d b=%d %s %d\n",
          n, b, precision.c_str(), workers);
    return 2;
  }
  bool ok = true;
  if (precision != "float") ok = run<double>(n, b, workers) && ok;
  if (precision != "double") ok = run<float>(n, b, workers) && ok;
  return ok ? 0 : 1;
}

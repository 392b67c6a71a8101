// Every Cholesky version of this directory on one rank, checked by its residual
// ||A - L L^T|| / ||A||: the serial reference (the delta-SLOC baseline), the left-looking OpenMP
// tasks, the Figure 7 OpenMP tasks, the tasklets with update widths 1, 2 and 4 (chunks that do
// and do not divide the number of tile columns), in declaration order and, at width 4, also
// without priorities (the work-stealing order), and the version on task data with host tiles,
// device tiles (the device a host space standing in for a GPU when there is none) and both
// bodies, at widths 1 and 4. Both precisions. Exits non-zero and names
// the version whose residual is too large. The benchmarks time these versions; this checks them.
//   mpiexec -n 1 versions_check [n=768] [b=64]
#include <hetero/comm/communicator.hpp>
#include <hetero/core/runtime.hpp>
#include <hetero/task.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cholesky_data.hpp"
#include "cholesky_omp.hpp"
#include "cholesky_omp_right_looking.hpp"
#include "cholesky_serial.hpp"
#include "cholesky_tasklet.hpp"
#include "tiles.hpp"

namespace {

template <cholesky::real T>
bool check_all(int n, int b) {
  using factorize = std::function<void(cholesky::tiles<T>&)>;
  const auto tasklets = [](int width, bool in_order = true) {
    return [width, in_order](cholesky::tiles<T>& a) {
      hetero::task_graph graph({.workers = 2});
      cholesky::tasklet_factorization<T> factorization(graph, a, in_order, width);
      factorization.declare();
      graph.wait();
    };
  };
  const auto on_data = [](cholesky::tiles_on where, int width) {
    return [where, width](cholesky::tiles<T>& a) {
      hetero::task_graph graph({.workers = 2});
      cholesky::data_factorization<T> factorization(graph, a, where, width);
      factorization.declare();
      graph.wait();
    };
  };
  const std::vector<std::pair<std::string, factorize>> versions{
      {"serial", [](cholesky::tiles<T>& a) { cholesky::factorize_serial(a); }},
      {"omp", [](cholesky::tiles<T>& a) { cholesky::factorize_omp(a, 2); }},
      {"omp_right_looking", [](cholesky::tiles<T>& a) { cholesky::factorize_omp_right_looking(a, 2); }},
      {"tasklet_width1", tasklets(1)},
      {"tasklet_width2", tasklets(2)},
      {"tasklet_width4", tasklets(4)},
      {"tasklet_unordered", tasklets(4, false)},
      {"data_host_width1", on_data(cholesky::tiles_on::host, 1)},
      {"data_host_width4", on_data(cholesky::tiles_on::host, 4)},
      {"data_device_width1", on_data(cholesky::tiles_on::device, 1)},
      {"data_device_width4", on_data(cholesky::tiles_on::device, 4)},
      {"data_either_width4", on_data(cholesky::tiles_on::either, 4)}};
  const double allowed = sizeof(T) == 8 ? 1e-12 : 1e-5;
  bool ok = true;
  for (const auto& [name, run] : versions) {
    cholesky::tiles<T> a(n / b, b, hetero::communicator());
    a.fill();
    run(a);
    const double residual = a.residual();
    const bool good = residual < allowed;
    std::printf("%-6s %-18s n=%d b=%d: residual %.2e (%s, allowed %.0e)\n", sizeof(T) == 8 ? "double" : "float",
                name.c_str(), n, b, residual, good ? "ok" : "FAILED", allowed);
    ok = ok && good;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 768;
  const int b = argc > 2 ? std::atoi(argv[2]) : 64;
  if (n <= 0 || b <= 0 || n % b != 0 || rt.world_size() != 1) {
    std::fprintf(stderr,
                 "usage: mpiexec -n 1 versions_check [n > 0] [b > 0 dividing n]; got n=%d b=%d on %d rank(s)\n", n,
                 b, rt.world_size());
    return 2;
  }
  openblas_set_num_threads(1);  // one BLAS thread per task
  const bool ok_double = check_all<double>(n, b);
  const bool ok_float = check_all<float>(n, b);
  return ok_double && ok_float ? 0 : 1;
}

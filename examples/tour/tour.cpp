// tour: the README's example. Three modules in one program: a distributed vector filled where it
// lives (distarray), two tasks on each rank that square it and sum the rank's block (task), and
// the ranks' sums added (comm). Exits non-zero unless the total equals the closed form.
//   mpiexec -n 2 ./tour [n=1000000]
#include <hetero/hetero.hpp>

#include <cmath>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);  // MPI and Kokkos, unless they are up already
  const std::int64_t n = argc > 1 ? std::stoll(argv[1]) : 1'000'000;
  const hetero::index_space<1> space({n}, hetero::process_grid<1>());  // blocks over the ranks
  hetero::distributed_array<double, 1> x(space);
  const auto v = x.block_view();  // this rank's block, indexed by global index
  const auto fill = KOKKOS_LAMBDA(std::int64_t i) { v(i) = static_cast<double>(i); };
  const auto square = KOKKOS_LAMBDA(std::int64_t i) { v(i) *= v(i); };
  const auto add = KOKKOS_LAMBDA(std::int64_t i, double& sum) { sum += v(i); };
  hetero::for_each_owned("fill", space, space.box(), fill);

  double mine = 0;
  hetero::task_graph graph({.workers = 1});  // tasks with dependencies, run here in wait()
  const auto squared = graph.event("squared");
  graph.spawn("square", hetero::out(squared),
              [&] { hetero::for_each_owned("square", space, space.box(), square); });
  graph.spawn("sum", hetero::in(squared), [&] { hetero::reduce_owned("sum", space, space.box(), add, mine); });
  graph.wait();

  const double total = x.comm().allreduce(hetero::send_buf(mine), hetero::op(hetero::ops::sum{}));
  const double exact = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;  // the sum of i^2 for i < n
  const bool ok = std::abs(total - exact) <= 1e-9 * exact;     // rounding of the partial sums
  if (rt.world_rank() == 0)
    std::printf("sum of i^2, i < %lld, on %d rank(s): %.17g (exact %.17g): %s\n", static_cast<long long>(n),
                rt.world_size(), total, exact, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}

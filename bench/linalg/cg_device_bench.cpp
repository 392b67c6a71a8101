// Time per CG iteration on a GPU against the same solver on the node's host cores, in one
// program (builds with a device backend only): hetero::cg_solver on a distributed_csr in the
// device's memory (Kokkos::DefaultExecutionSpace) and on one in host memory
// (Kokkos::DefaultHostExecutionSpace, all of the rank's cores), per variant, on 3-D Poisson
// matrices of 32^3 to 128^3 rows, 20 fixed iterations per solve and 10 solves per round. Family cg_gpu_<variant>:
//  - baseline_host_cores: the solver on the host cores;
//  - device: the same solver on the GPU.
// Before its first timing, each size and variant checks that both compute the same iterate
// after 15 iterations. Families cg_gpu_halo_jacobi and cg_gpu_halo_chebyshev (degree 3: 2 products
// in the preconditioner) time the preconditioned solver likewise. In a run of the GPU kit each
// device case's bound is its iteration's floor at the measured rates (bench/support/bounds.hpp:
// the matrix once per product, the vector passes of fused kernels, the waits of its reductions).
#include <hetero/comm.hpp>
#include <hetero/linalg.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "bench_main.hpp"

namespace {

using device_space = Kokkos::DefaultExecutionSpace;
using host_space = Kokkos::DefaultHostExecutionSpace;
constexpr int iterations = 20;

hetero::communicator& comm() {
  static hetero::communicator c;
  return c;
}

template <class Space>
Kokkos::View<double*, Kokkos::HostSpace> iterate_after(const hetero::poisson_matrix& m, hetero::cg_variant v,
                                                       int k) {
  const hetero::distributed_csr<Space> a(m, comm());
  hetero::cg_solver<Space> cg(a, {.variant = v,
                                  .preconditioner = hetero::cg_preconditioner::none,
                                  .max_iterations = k,
                                  .fixed_iterations = true});
  auto b = a.make_vector("b"), x = a.make_vector("x");
  Kokkos::deep_copy(b, 1.0);
  cg.solve(b, x);
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
}

// Once per size and variant (not in every round): both compute the same iterate.
void check_same_iterates(std::int64_t n, hetero::cg_variant v) {
  static std::set<std::pair<std::int64_t, hetero::cg_variant>> checked;
  if (!checked.emplace(n, v).second) return;
  const auto m = hetero::poisson_3d(n);
  const auto on_device = iterate_after<device_space>(m, v, 15), on_host = iterate_after<host_space>(m, v, 15);
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < on_host.extent(0); ++i) {
    worst = std::max(worst, std::abs(on_device(i) - on_host(i)));
    largest = std::max(largest, std::abs(on_host(i)));
  }
  if (worst > 1e-10 * std::max(largest, 1.0))
    throw std::runtime_error("CG on the device and on the host differ after 15 iterations by " +
                             std::to_string(worst));
}

// The floor of one iteration of variant V with preconditioner P on n^3 rows (7 n^3 - 6 n^2
// entries), one rank: the halo variant's local columns are 4-byte, the allgather's global 8.
hetero::bench::device_work floor_of(hetero::cg_variant v, hetero::cg_preconditioner p, std::int64_t n) {
  namespace hb = hetero::bench;
  const std::int64_t rows = n * n * n, nnz = 7 * rows - 6 * n * n;
  const auto recurrence =
      v == hetero::cg_variant::pipelined ? hb::cg_recurrence::pipelined : hb::cg_recurrence::classic;
  const auto pre = p == hetero::cg_preconditioner::none     ? hb::cg_preconditioning::none
                   : p == hetero::cg_preconditioner::jacobi ? hb::cg_preconditioning::jacobi
                                                            : hb::cg_preconditioning::polynomial;
  return hb::cg_iteration_work(recurrence, pre, 3, rows, nnz, 8, v == hetero::cg_variant::allgather ? 8 : 4);
}

template <class Space, hetero::cg_variant V, hetero::cg_preconditioner P = hetero::cg_preconditioner::none>
void run(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  if constexpr (std::is_same_v<Space, host_space>) check_same_iterates(n, V);
  const hetero::distributed_csr<Space> a(hetero::poisson_3d(n), comm());
  hetero::cg_solver<Space> cg(a, {.variant = V,
                                  .preconditioner = P,
                                  .polynomial_degree = 3,
                                  .max_iterations = iterations,
                                  .fixed_iterations = true});
  auto b = a.make_vector("b"), x = a.make_vector("x");
  Kokkos::deep_copy(b, 1.0);
  for (auto _ : state) {
    Kokkos::deep_copy(x, 0.0);
    const hetero::cg_result r = cg.solve(b, x);  // r.seconds: the slowest rank's already
    hetero::bench::set_iteration_time(state, r.seconds_per_iteration);
  }
  state.counters["rows"] = static_cast<double>(a.global_rows());
  if constexpr (std::is_same_v<Space, device_space>) hetero::bench::report_bound(state, floor_of(V, P, n));
}

// A fixed count of solves per round: each reports one CG iteration's time while it runs 20 (and
// on the host 128^3 rows take 4 ms an iteration), so Google Benchmark would otherwise run ~20x
// its minimum time.
const auto grids = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(10);
  if (hetero::bench::smoke_run()) {
    b->Arg(16);
  } else {
    for (long n : {32, 64, 128}) b->Arg(n);
  }
};

template <hetero::cg_variant V, hetero::cg_preconditioner P = hetero::cg_preconditioner::none>
int add_family(const std::string& name) {
  hetero::bench::add("cg_gpu_" + name + "/baseline_host_cores", run<host_space, V, P>, grids);
  return hetero::bench::add("cg_gpu_" + name + "/device", run<device_space, V, P>, grids);
}

static_assert(!std::is_same_v<device_space, host_space>, "hetero: cg_device_bench needs a device backend");

const int registered[] = {
    add_family<hetero::cg_variant::allgather>("allgather"),
    add_family<hetero::cg_variant::halo>("halo"),
    add_family<hetero::cg_variant::pipelined>("pipelined"),
    add_family<hetero::cg_variant::automatic>("automatic"),
    add_family<hetero::cg_variant::halo, hetero::cg_preconditioner::jacobi>("halo_jacobi"),
    add_family<hetero::cg_variant::halo, hetero::cg_preconditioner::chebyshev>("halo_chebyshev"),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

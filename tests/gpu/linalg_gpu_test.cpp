// linalg on a GPU: the distributed CSR matrix in CudaSpace, its halo product, and CG in every
// variant on Kokkos::Cuda, against the same solver on the host cores. After a fixed number of
// iterations the GPU's iterate equals the host's up to rounding (the same algorithm, sums in
// another order), and converged solves reach the known solution in the same number of
// iterations (within rounding's reach), on 1 and 2 ranks.
#include <hetero/comm.hpp>
#include <hetero/linalg.hpp>

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_support.hpp"
#include "random.hpp"

namespace {

struct outcome {
  hetero::cg_result result;
  std::vector<double> x;      // this rank's rows
  std::vector<double> exact;  // x* on this rank's rows
};

const char* name_of(hetero::cg_variant v) {
  switch (v) {
    case hetero::cg_variant::allgather: return "allgather";
    case hetero::cg_variant::halo: return "halo";
    case hetero::cg_variant::pipelined: return "pipelined";
    default: return "automatic";
  }
}

// Solves A x = A x* from x = 0 on `Space` (x*_i = cos(0.05 i + phase)).
template <class Space, class Source>
outcome solve_on(const hetero::communicator& comm, const Source& source, double phase,
                 hetero::cg_options options) {
  const hetero::distributed_csr<Space> a(source, comm);
  auto exact = a.make_halo_vector("x*");
  auto b = a.make_vector("b"), x = a.make_vector("x");
  const auto first = a.rows().begin;
  Kokkos::parallel_for(
      "x*", Kokkos::RangePolicy<Space>(0, a.local_rows()), KOKKOS_LAMBDA(const std::size_t i) {
        exact(i) = std::cos(0.05 * static_cast<double>(first + static_cast<long>(i)) + phase);
      });
  a.multiply_halo(exact, b);
  hetero::cg_solver<Space> cg(a, options);
  outcome o{cg.solve(b, x), gpu_test::to_host(x), gpu_test::to_host(exact)};
  o.exact.resize(a.local_rows());
  return o;
}

// The largest |a_i - b_i| over every rank's rows, relative to the largest |b_i|.
double relative_difference(const hetero::communicator& comm, const std::vector<double>& a,
                           const std::vector<double>& b) {
  double local[2] = {0, 0};
  for (std::size_t i = 0; i < a.size(); ++i) {
    local[0] = std::max(local[0], std::abs(a[i] - b[i]));
    local[1] = std::max(local[1], std::abs(b[i]));
  }
  std::vector<double> most(local, local + 2);
  comm.allreduce(hetero::send_recv_buf(most), hetero::op(hetero::ops::max{}));
  return most[0] / most[1];
}

}  // namespace

TEST_CASE("CG on the GPU computes the host's iterates and converges like it, every variant", "[gpu][linalg][cg]") {
  const hetero::communicator comm;
  auto gen = hetero::testing::rng(301);
  const double phase = std::uniform_real_distribution<double>(0, 6.28)(gen);
  const hetero::poisson_matrix matrices[] = {hetero::poisson_3d(24), hetero::poisson_2d(90)};
  for (const auto& m : matrices) {
    for (const auto variant : {hetero::cg_variant::allgather, hetero::cg_variant::halo,
                               hetero::cg_variant::pipelined, hetero::cg_variant::automatic}) {
      INFO(m.global_rows() << " rows, variant " << name_of(variant) << ", phase " << phase);
      for (const int k : {3, 20}) {
        const hetero::cg_options fixed{.variant = variant,
                                       .preconditioner = hetero::cg_preconditioner::none,
                                       .max_iterations = k,
                                       .fixed_iterations = true};
        const auto on_gpu = solve_on<gpu_test::device>(comm, m, phase, fixed);
        const auto on_host = solve_on<gpu_test::host>(comm, m, phase, fixed);
        INFO(k << " fixed iterations");
        CHECK(on_gpu.result.iterations == k);
        CHECK(on_host.result.iterations == k);
        CHECK(relative_difference(comm, on_gpu.x, on_host.x) < 1e-10);
      }
      const hetero::cg_options converge{
          .variant = variant, .preconditioner = hetero::cg_preconditioner::none, .tolerance = 1e-10};
      const auto on_gpu = solve_on<gpu_test::device>(comm, m, phase, converge);
      const auto on_host = solve_on<gpu_test::host>(comm, m, phase, converge);
      CHECK(on_gpu.result.converged);
      CHECK(on_host.result.converged);
      CHECK(std::abs(on_gpu.result.iterations - on_host.result.iterations) <= 2);
      CHECK(on_gpu.result.residual < 1e-10);
      CHECK(relative_difference(comm, on_gpu.x, on_gpu.exact) < 1e-7);
      CHECK(relative_difference(comm, on_gpu.x, on_host.x) < 1e-8);
      if (comm.rank() == 0 && m.global_rows() == matrices[0].global_rows())
        std::printf("kit: cg %s on %lld rows: GPU %d iterations (%.1f us each), host %d (%.1f us each)\n",
                    name_of(variant), static_cast<long long>(m.global_rows()), on_gpu.result.iterations,
                    on_gpu.result.seconds_per_iteration * 1e6, on_host.result.iterations,
                    on_host.result.seconds_per_iteration * 1e6);
    }
  }
}

TEST_CASE("preconditioned CG on the GPU computes the host's iterates", "[gpu][linalg][cg][preconditioner]") {
  const hetero::communicator comm;
  auto gen = hetero::testing::rng(302);
  const double phase = std::uniform_real_distribution<double>(0, 6.28)(gen);
  const hetero::poisson_matrix m = hetero::poisson_3d(24);
  for (const auto pc : {hetero::cg_preconditioner::jacobi, hetero::cg_preconditioner::chebyshev,
                        hetero::cg_preconditioner::block_ic0}) {
    for (const auto variant : {hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
      INFO(hetero::to_string(pc) << ", variant " << name_of(variant) << ", phase " << phase);
      const hetero::cg_options fixed{
          .variant = variant, .preconditioner = pc, .max_iterations = 20, .fixed_iterations = true};
      const auto on_gpu = solve_on<gpu_test::device>(comm, m, phase, fixed);
      const auto on_host = solve_on<gpu_test::host>(comm, m, phase, fixed);
      CHECK(relative_difference(comm, on_gpu.x, on_host.x) < 1e-10);
      const hetero::cg_options converge{.variant = variant, .preconditioner = pc, .tolerance = 1e-10};
      const auto solved = solve_on<gpu_test::device>(comm, m, phase, converge);
      CHECK(solved.result.converged);
      CHECK(relative_difference(comm, solved.x, solved.exact) < 1e-7);
      if (comm.rank() == 0)
        std::printf("kit: cg %s + %s on %lld rows: GPU %d iterations (%.1f us each)\n", name_of(variant),
                    std::string(hetero::to_string(pc)).c_str(), static_cast<long long>(m.global_rows()),
                    solved.result.iterations, solved.result.seconds_per_iteration * 1e6);
    }
  }
  // The default (automatic) on the GPU: converges; what it chose goes to the kit's log.
  const hetero::distributed_csr<gpu_test::device> a(m, comm);
  hetero::cg_solver<gpu_test::device> cg(a);
  const auto solved = solve_on<gpu_test::device>(comm, m, phase, {.tolerance = 1e-10});
  CHECK(solved.result.converged);
  if (comm.rank() == 0)
    for (const hetero::cg_trial& t : cg.trials())
      std::printf("kit: cg automatic on %lld rows, GPU: %s %d iterations, %.1f us each, estimated %.3f ms%s\n",
                  static_cast<long long>(m.global_rows()),
                  std::string(hetero::to_string(t.preconditioner)).c_str(), t.iterations,
                  t.seconds_per_iteration * 1e6, t.estimated_seconds * 1e3,
                  t.preconditioner == cg.preconditioner() ? " (chosen)" : "");
}

TEST_CASE("the halo product of a matrix in GPU memory equals the host's", "[gpu][linalg]") {
  const hetero::communicator comm;
  auto gen = hetero::testing::rng(302);
  const auto m = hetero::poisson_3d(std::uniform_int_distribution<long>(8, 40)(gen));
  const hetero::distributed_csr<gpu_test::device> ad(m, comm);
  const hetero::distributed_csr<gpu_test::host> ah(m, comm);
  auto xh = ah.make_halo_vector(), yh = ah.make_vector();
  for (std::size_t i = 0; i < ad.local_rows(); ++i) xh(i) = std::uniform_real_distribution<double>(-1, 1)(gen);
  auto xd = ad.make_halo_vector(), yd = ad.make_vector();
  Kokkos::deep_copy(Kokkos::subview(xd, std::pair<std::size_t, std::size_t>(0, ad.local_rows())),
                    Kokkos::subview(xh, std::pair<std::size_t, std::size_t>(0, ah.local_rows())));
  ad.multiply_halo(xd, yd);
  ah.multiply_halo(xh, yh);
  CHECK(relative_difference(comm, gpu_test::to_host(yd), gpu_test::to_host(yh)) < 1e-14);
}

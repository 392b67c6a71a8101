// Conjugate gradients: every variant converges to a known solution on Poisson and SuiteSparse
// matrices on 1, 2 and 3 ranks; the allgather and halo variants compute the same iterates, on
// Serial and on the space's threads alike; non-SPD matrices are found.
#include <hetero/comm.hpp>
#include <hetero/core.hpp>
#include <hetero/linalg.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "paired_matrix.hpp"
#include "random.hpp"

using Catch::Matchers::ContainsSubstring;
using matrix = hetero::distributed_csr<>;

namespace {

struct outcome {
  hetero::cg_result result;
  double error;
  std::vector<double> x;  // this rank's rows
};

// Solves A x = A x* from x = 0 and measures the distance to x*.
template <class Space>
outcome solve(const hetero::distributed_csr<Space>& a, hetero::cg_options options) {
  auto exact = a.make_halo_vector();
  auto b = a.make_vector(), x = a.make_vector();
  const auto first = a.rows().begin;
  Kokkos::parallel_for(
      "x*", Kokkos::RangePolicy<Space>(0, a.local_rows()), KOKKOS_LAMBDA(const std::size_t i) {
        exact(i) = std::cos(0.05 * static_cast<double>(first + static_cast<long>(i)));
      });
  a.multiply_halo(exact, b);
  hetero::cg_solver<Space> cg(a, options);
  outcome o{cg.solve(b, x), 0, {}};
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, exact);
  double local[2] = {0, 0};
  for (std::size_t i = 0; i < a.local_rows(); ++i) {
    local[0] += (hx(i) - he(i)) * (hx(i) - he(i));
    local[1] += he(i) * he(i);
    o.x.push_back(hx(i));
  }
  std::vector<double> sums(local, local + 2);
  a.comm().allreduce(hetero::send_recv_buf(sums), hetero::op(hetero::ops::sum{}));
  CHECK(hetero::comm_ref(a).get() == a.comm().mpi_comm());  // a matrix is a handle like the others
  o.error = std::sqrt(sums[0] / sums[1]);
  return o;
}

// Kernels a Kokkos tool was told of whose label starts with "hetero::", by label.
std::map<std::string, int> hetero_kernels_by_label;  // the tests call kernels from one thread
void count_hetero_kernel(const char* label, std::uint32_t, std::uint64_t*) {
  if (std::string_view(label).starts_with("hetero::")) ++hetero_kernels_by_label[label];
}

// A Kokkos tool (as a profiler loads it) that counts hetero's kernels while it lives. It
// assumes no other tool is loaded (the test skips where one is): removing it unloads tools.
struct kernel_counting_tool {
  kernel_counting_tool() {
    hetero_kernels_by_label.clear();
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(count_hetero_kernel);
  }
  ~kernel_counting_tool() { Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr); }
  kernel_counting_tool(const kernel_counting_tool&) = delete;
  kernel_counting_tool& operator=(const kernel_counting_tool&) = delete;
};

}  // namespace

TEST_CASE("every variant converges to the known solution", "[linalg][cg]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  const matrix poisson2(hetero::poisson_2d(30), comm);
  const matrix poisson3(hetero::poisson_3d(12), comm);
  const matrix grid(hetero::read_matrix_market_file(dir + "/gr_30_30.mtx.gz", {.require_spd = true}), comm);
  const matrix bus(hetero::read_matrix_market_file(dir + "/494_bus.mtx.gz", {.require_spd = true}), comm);
  const matrix stiff(hetero::read_matrix_market_file(dir + "/bcsstk01.mtx.gz", {.require_spd = true}), comm);
  for (const matrix* a : {&poisson2, &poisson3, &grid, &bus, &stiff}) {
    std::vector<outcome> allgather_runs;
    for (auto k : {hetero::cg_kernels::space, hetero::cg_kernels::serial, hetero::cg_kernels::automatic}) {
      std::vector<outcome> runs;
      for (auto v : {hetero::cg_variant::allgather, hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
        INFO(a->global_rows() << " rows, variant " << hetero::to_string(v) << ", kernels "
                              << hetero::to_string(k));
        const outcome o = solve(
            *a,
            {.variant = v, .preconditioner = hetero::cg_preconditioner::none, .kernels = k, .tolerance = 1e-10});
        CHECK(o.result.converged);
        CHECK(o.result.residual < 1e-9);
        CHECK(o.error < 1e-5);
        CHECK(o.result.iterations > 0);
        CHECK(o.result.seconds_per_iteration > 0);
        runs.push_back(o);
      }
      // Allgather and halo products sum the same terms in the same order, and a dot product gives
      // the same bits on any space and thread count: the same iterates, whatever kernels
      // `automatic` chose for each solver.
      INFO(a->global_rows() << " rows, kernels " << hetero::to_string(k));
      CHECK(runs[0].result.iterations == runs[1].result.iterations);
      CHECK(runs[0].x == runs[1].x);
      allgather_runs.push_back(runs[0]);
    }
    // Serial and the space's threads: the same iterates too.
    INFO(a->global_rows() << " rows: space, serial and automatic kernels");
    CHECK(allgather_runs[0].result.iterations == allgather_runs[1].result.iterations);
    CHECK(allgather_runs[0].x == allgather_runs[1].x);
    CHECK(allgather_runs[0].x == allgather_runs[2].x);
  }
}

TEST_CASE("the kernels run where cg_kernels says", "[linalg][cg]") {
  hetero::communicator comm;
  const matrix a(hetero::poisson_2d(16), comm);
  CHECK(hetero::cg_solver<>(a, {.kernels = hetero::cg_kernels::space}).kernels() == hetero::cg_kernels::space);
  CHECK(hetero::cg_solver<>(a, {.kernels = hetero::cg_kernels::serial}).kernels() == hetero::cg_kernels::serial);
  // `automatic` resolves to one of the two (which, depends on this machine's timings).
  const auto chosen = hetero::cg_solver<>(a).kernels();
  CHECK((chosen == hetero::cg_kernels::space || chosen == hetero::cg_kernels::serial));
  CHECK(hetero::to_string(hetero::cg_kernels::automatic) == "automatic");
  CHECK(hetero::to_string(hetero::cg_kernels::space) == "space");
  CHECK(hetero::to_string(hetero::cg_kernels::serial) == "serial");
  // The same iterates on both, bit for bit, whatever the space's thread count (detail::dot):
  // both reach the known solution.
  const outcome on_space = solve(a, {.variant = hetero::cg_variant::halo,
                                     .preconditioner = hetero::cg_preconditioner::none,
                                     .kernels = hetero::cg_kernels::space});
  const outcome on_serial = solve(a, {.variant = hetero::cg_variant::halo,
                                      .preconditioner = hetero::cg_preconditioner::none,
                                      .kernels = hetero::cg_kernels::serial});
  CHECK(on_space.result.converged);
  CHECK(on_serial.result.converged);
  CHECK(on_space.error < 1e-5);
  CHECK(on_serial.error < 1e-5);
  CHECK(on_space.result.iterations == on_serial.result.iterations);
  CHECK(on_space.x == on_serial.x);
}

TEST_CASE("Serial kernels run as plain loops, and a loaded Kokkos tool still sees each", "[linalg][cg]") {
  if (Kokkos::Tools::profileLibraryLoaded())
    SKIP("a Kokkos tool is loaded (KOKKOS_TOOLS_LIBS or --kokkos-tools-library): this test loads its own");
  using serial_rows = Kokkos::RangePolicy<Kokkos::Serial, Kokkos::IndexType<std::int64_t>>;
  auto gen = hetero::testing::rng(23);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(2, 5000)(gen);
  const std::int64_t begin = std::uniform_int_distribution<std::int64_t>(0, n - 1)(gen);
  for (const bool tool : {false, true}) {
    CAPTURE(tool, n, begin);
    std::optional<kernel_counting_tool> counting;
    if (tool) counting.emplace();
    REQUIRE(Kokkos::Tools::profileLibraryLoaded() == tool);
    // Each index of the range once, none outside it.
    std::vector<int> visits(static_cast<std::size_t>(n));
    hetero::detail::for_rows("hetero::test rows", serial_rows(begin, n),
                             [&](std::int64_t i) { ++visits[static_cast<std::size_t>(i)]; });
    for (std::int64_t i = 0; i < n; ++i) REQUIRE(visits[static_cast<std::size_t>(i)] == (i >= begin ? 1 : 0));
    CHECK(hetero_kernels_by_label["hetero::test rows"] == (tool ? 1 : 0));
  }

  // A solve on Serial kernels, with and without the tool: the same bits, and the tool is told of
  // every kernel of every iteration (a product, three dot products, the update, Jacobi's scaling
  // and the new direction), each kind by its label.
  hetero::communicator comm;
  const hetero::distributed_csr<Kokkos::DefaultHostExecutionSpace> a(hetero::poisson_2d(16), comm);
  const hetero::cg_options options{.variant = hetero::cg_variant::halo,
                                   .preconditioner = hetero::cg_preconditioner::jacobi,
                                   .kernels = hetero::cg_kernels::serial};
  const outcome unseen = solve(a, options);
  std::optional<kernel_counting_tool> counting(std::in_place);
  const outcome seen = solve(a, options);
  const int iterations = seen.result.iterations;
  CHECK(hetero_kernels_by_label["hetero::spmv"] >= iterations);
  CHECK(hetero_kernels_by_label["hetero::cg dot"] >= 3 * iterations);
  CHECK(hetero_kernels_by_label["hetero::cg update"] >= iterations);
  CHECK(hetero_kernels_by_label["hetero::cg jacobi"] >= iterations);
  CHECK(hetero_kernels_by_label["hetero::cg xpby"] >= iterations);
  counting.reset();
  CHECK(seen.result.converged);
  CHECK(seen.result.iterations == unseen.result.iterations);
  CHECK(seen.x == unseen.x);
}

TEST_CASE("fixed iterations, a zero right-hand side, bad options", "[linalg][cg]") {
  hetero::communicator comm;
  const matrix a(hetero::poisson_2d(16), comm);
  const outcome fixed =
      solve(a, {.variant = hetero::cg_variant::pipelined, .max_iterations = 7, .fixed_iterations = true});
  CHECK(fixed.result.iterations == 7);
  CHECK_FALSE(fixed.result.converged);
  const outcome few = solve(a, {.max_iterations = 3});
  CHECK(few.result.iterations == 3);
  CHECK_FALSE(few.result.converged);
  hetero::cg_solver<> cg(a);
  auto zero = a.make_vector(), x = a.make_vector();
  Kokkos::deep_copy(x, 5.0);
  const auto r = cg.solve(zero, x);
  CHECK(r.converged);
  CHECK(r.iterations == 0);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  for (std::size_t i = 0; i < hx.extent(0); ++i) CHECK(hx(i) == 0.0);
  CHECK_THROWS_WITH(hetero::cg_solver<>(a, {.tolerance = -1}), ContainsSubstring("must not be negative"));
  auto wrong = matrix::vector_type("wrong", a.local_rows() + 1);
  CHECK_THROWS_WITH(cg.solve(wrong, x), ContainsSubstring("this rank's"));
}

TEST_CASE("a matrix that is not positive definite stops the solve on every rank", "[linalg][cg][errors]") {
  hetero::communicator comm;
  // Symmetric and indefinite: diagonal 1, off-diagonal 2 couples pairs of rows.
  const matrix a(paired_matrix(40, 1.0, 2.0), comm);
  for (auto v : {hetero::cg_variant::allgather, hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
    INFO(hetero::to_string(v));
    // Plain CG, so that the solve finds it (the default's race would, when the solver is made).
    CHECK_THROWS_WITH(solve(a, {.variant = v, .preconditioner = hetero::cg_preconditioner::none}),
                      ContainsSubstring("the matrix is not symmetric positive definite"));
  }
}

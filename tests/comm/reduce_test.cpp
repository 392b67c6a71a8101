// reduce and ireduce against MPI_Reduce (built-in operations) and a serial fold (user functors)
// for every algorithm (host- and device-side paths), buffer path, root and random size.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

TEMPLATE_TEST_CASE("reduce equals MPI_Reduce for every algorithm, root and buffer path", "[comm][reduce]", int,
                   double, long long) {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(51);
    for (comm_algorithm a : algorithms_of(collective::reduce)) {
      for (int trial = 0; trial < 3; ++trial) {
        const std::size_t n = random_count(gen, sizeof(TestType));
        const int to = static_cast<int>(gen() % static_cast<unsigned>(comm.size()));
        const bool in_place = gen() % 2 == 0;
        const bool use_max = trial == 1;
        const auto mine = values_of<TestType>(800 + static_cast<std::uint64_t>(trial), comm.rank(), n);
        std::vector<TestType> expected(n), got(comm.rank() == to ? n : 0);
        MPI_Request r;
        MPI_Ireduce(mine.data(), expected.data(), static_cast<int>(n), detail::mpi_type<TestType>(),
                    use_max ? MPI_MAX : MPI_SUM, to, MPI_COMM_WORLD, &r);
        polite_wait(r);
        if (comm.rank() != to) expected.clear();
        INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << to << (in_place ? ", in place" : ""));
        const auto run = [&] {
          if (in_place) {
            std::vector<TestType> buffer = mine;
            if (use_max)
              comm.reduce(send_recv_buf(buffer), op(ops::max{}), root(to), force_algorithm(a));
            else
              comm.reduce(send_recv_buf(buffer), op(ops::sum{}), root(to), force_algorithm(a));
            if (comm.rank() == to) got = buffer;
          } else if (use_max) {
            comm.reduce(send_buf(mine), recv_buf(got), op(ops::max{}), root(to), force_algorithm(a));
          } else {
            comm.reduce(send_buf(mine), recv_buf(got), op(ops::sum{}), root(to), force_algorithm(a));
          }
        };
        if (!runnable(comm, collective::reduce, a, n * sizeof(TestType))) {
          if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        check_equal(as_span(got), as_span(expected), "reduce");
      }
    }
  }
}

TEST_CASE("reduce with user functors keeps rank order at any root", "[comm][reduce]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(52);
    for (comm_algorithm a : algorithms_of(collective::reduce)) {
      const std::size_t n = random_count(gen, sizeof(matrix2));
      const int to = static_cast<int>(gen() % static_cast<unsigned>(comm.size()));
      std::vector<matrix2> expected = values_of<matrix2>(900, 0, n);
      for (int r = 1; r < comm.size(); ++r) {
        const auto theirs = values_of<matrix2>(900, r, n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = matrix_product{}(expected[i], theirs[i]);
      }
      const auto mine = values_of<matrix2>(900, comm.rank(), n);
      std::vector<matrix2> got(n);
      INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << to);
      const auto run = [&] {
        comm.reduce(send_buf(mine), recv_buf(got), op(matrix_product{}), root(to), force_algorithm(a));
      };
      if (!runnable(comm, collective::reduce, a, n * sizeof(matrix2))) {
        if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
        continue;
      }
      run();
      if (comm.rank() == to) check_equal(as_span(got), as_span(expected), "reduce of 2x2 matrix products");
    }
  }
}

using execution_spaces = std::tuple<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;

TEMPLATE_LIST_TEST_CASE("reduce on Views (host- and device-side paths) and its result forms", "[comm][reduce]",
                        execution_spaces) {
  using space = typename TestType::memory_space;
  communicator& comm = default_comm();
  const int p = comm.size();
  for (comm_algorithm a : {comm_algorithm::linear, comm_algorithm::linear_device, comm_algorithm::automatic}) {
    Kokkos::View<double*, space> x("x", 10000), y("y", comm.rank() == 0 ? 10000 : 0);
    Kokkos::deep_copy(x, 1.0 + comm.rank());
    comm.reduce(send_buf(x), recv_buf(y), op(ops::sum{}), force_algorithm(a));
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < h.extent(0); ++i) wrong += h(i) != p * (p + 1) / 2.0;
    CHECK(wrong == 0);
  }
  const int largest = comm.reduce(send_buf(comm.rank()), op(ops::max{}), root(p - 1));
  CHECK(largest == (comm.rank() == p - 1 ? p - 1 : 0));
  std::vector<int> v{1, 2};
  auto request = comm.ireduce(send_recv_buf(v), op(ops::sum{}));
  request.wait();
  if (comm.rank() == 0) CHECK(v == std::vector<int>{p, 2 * p});
}

TEST_CASE("reduce rejects bad arguments", "[comm][reduce][errors]") {
  communicator& comm = default_comm();
  std::vector<double> x(6), small(5);
  CHECK_THROWS_WITH(comm.reduce(send_buf(x), recv_buf(small), op(ops::sum{}), root(comm.size() + 2)),
                    ContainsSubstring("reduce: root " + std::to_string(comm.size() + 2) + " is outside"));
  communicator& checked = verifying_comm();
  check_rejected_everywhere(
      checked, 0, [&] { checked.reduce(send_buf(x), recv_buf(small), op(ops::sum{})); },
      "reduce: recv_buf holds 5 element(s) but 6 are needed");
}

// reduce and ireduce against a serial fold of every rank's inputs (never MPI's own result: MPI
// can be wrong)
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

TEMPLATE_TEST_CASE("reduce equals a serial fold for every algorithm, root and buffer path", "[comm][reduce]", int,
                   double, long long, std::uint8_t, std::uint32_t, std::uint64_t) {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(51);
    for (comm_algorithm a : algorithms_of(collective::reduce)) {
      for (int trial = 0; trial < 3; ++trial) {
        const std::size_t n = random_count(gen, sizeof(TestType));
        const int to = static_cast<int>(gen() % static_cast<unsigned>(comm.size()));
        const bool in_place = gen() % 2 == 0;
        const bool use_max = trial == 1;
        const bool use_min = trial == 2;
        const std::uint64_t stream = 800 + static_cast<std::uint64_t>(trial);
        const auto mine = values_of<TestType>(stream, comm.rank(), n);
        std::vector<TestType> got(comm.rank() == to ? n : 0);
        std::vector<TestType> expected = use_max   ? serial_fold<TestType>(stream, comm.size(), n, ops::max{})
                                         : use_min ? serial_fold<TestType>(stream, comm.size(), n, ops::min{})
                                                   : serial_fold<TestType>(stream, comm.size(), n, ops::sum{});
        if (comm.rank() != to) expected.clear();
        INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << to << (in_place ? ", in place" : ""));
        const auto run = [&] {
          if (in_place) {
            std::vector<TestType> buffer = mine;
            if (use_max)
              comm.reduce(send_recv_buf(buffer), op(ops::max{}), root(to), force_algorithm(a));
            else if (use_min)
              comm.reduce(send_recv_buf(buffer), op(ops::min{}), root(to), force_algorithm(a));
            else
              comm.reduce(send_recv_buf(buffer), op(ops::sum{}), root(to), force_algorithm(a));
            if (comm.rank() == to) got = buffer;
          } else if (use_max) {
            comm.reduce(send_buf(mine), recv_buf(got), op(ops::max{}), root(to), force_algorithm(a));
          } else if (use_min) {
            comm.reduce(send_buf(mine), recv_buf(got), op(ops::min{}), root(to), force_algorithm(a));
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
      const auto expected = serial_fold<matrix2>(900, comm.size(), n, matrix_product{});
      const auto mine = values_of<matrix2>(900, comm.rank(), n);
      std::vector<matrix2> got(n);
      INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << to);
      const auto run = [&] {
        comm.reduce(send_buf(mine), recv_buf(got), op(matrix_product{}), root(to), force_algorithm(a));
      };
      if (!runnable(comm, collective::reduce, a, n * sizeof(matrix2), false)) {
        if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
        continue;
      }
      run();
      if (comm.rank() == to) check_equal(as_span(got), as_span(expected), "reduce of 2x2 matrix products");
    }
  }
}

// A commutative reduce roots its tree at the root, which rotates the order of the operands: a
// product of matrices by ops::prod must not be taken as commutative there (it was, at root != 0).
TEST_CASE("reduce of ops::prod on 2x2 matrices keeps rank order at every root", "[comm][reduce]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(53);
    for (comm_algorithm a : algorithms_of(collective::reduce)) {
      for (int to = 0; to < comm.size(); ++to) {
        const std::size_t n = random_count(gen, sizeof(matrix2));
        const std::uint64_t stream = gen();
        const auto expected = serial_fold<matrix2>(stream, comm.size(), n, matrix_product{});
        const auto mine = values_of<matrix2>(stream, comm.rank(), n);
        std::vector<matrix2> got(n);
        INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << to);
        const auto run = [&] {
          comm.reduce(send_buf(mine), recv_buf(got), op(ops::prod{}), root(to), force_algorithm(a));
        };
        if (!runnable(comm, collective::reduce, a, n * sizeof(matrix2), false)) {
          if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        if (comm.rank() == to) check_equal(as_span(got), as_span(expected), "reduce of ops::prod on 2x2 matrices");
      }
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

// MPICH 4.0.2 compares unsigned integers as signed in MPI_MIN/MPI_MAX: on MPI's path (forced, or
// chosen from 64 KiB up), reduce and ireduce must still give the unsigned order at every root.
TEMPLATE_TEST_CASE("reduce and ireduce of unsigned integers on MPI's path keep the unsigned order",
                   "[comm][reduce]", std::uint16_t, std::uint64_t) {
  communicator& comm = default_comm();
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{65537}}) {
    for (int form = 0; form < 4; ++form) {
      const bool use_max = form % 2 == 1, in_place = form >= 2;
      const int to =
          static_cast<int>((n + static_cast<std::size_t>(form)) % static_cast<std::size_t>(comm.size()));
      const std::uint64_t stream = 860 + n + static_cast<std::uint64_t>(form);
      const auto mine = values_of<TestType>(stream, comm.rank(), n);
      const auto expected = use_max ? serial_fold<TestType>(stream, comm.size(), n, ops::max{})
                                    : serial_fold<TestType>(stream, comm.size(), n, ops::min{});
      for (comm_algorithm a : {comm_algorithm::mpi, comm_algorithm::automatic}) {
        INFO("n = " << n << (use_max ? ", max" : ", min") << (in_place ? ", in place" : "") << ", root " << to
                    << ", " << to_string(a));
        std::vector<TestType> got = mine, igot = mine;
        if (in_place) {
          if (use_max) {
            comm.reduce(send_recv_buf(got), op(ops::max{}), root(to), force_algorithm(a));
            comm.ireduce(send_recv_buf(igot), op(ops::max{}), root(to), force_algorithm(a)).wait();
          } else {
            comm.reduce(send_recv_buf(got), op(ops::min{}), root(to), force_algorithm(a));
            comm.ireduce(send_recv_buf(igot), op(ops::min{}), root(to), force_algorithm(a)).wait();
          }
        } else if (use_max) {
          comm.reduce(send_buf(mine), recv_buf(got), op(ops::max{}), root(to), force_algorithm(a));
          comm.ireduce(send_buf(mine), recv_buf(igot), op(ops::max{}), root(to), force_algorithm(a)).wait();
        } else {
          comm.reduce(send_buf(mine), recv_buf(got), op(ops::min{}), root(to), force_algorithm(a));
          comm.ireduce(send_buf(mine), recv_buf(igot), op(ops::min{}), root(to), force_algorithm(a)).wait();
        }
        if (comm.rank() != to) continue;
        check_equal(as_span(got), as_span(expected), "reduce");
        check_equal(as_span(igot), as_span(expected), "ireduce");
      }
    }
  }
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

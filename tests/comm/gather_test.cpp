// gather, gatherv and igather against MPI_Gather(v) for every algorithm, buffer path, root and
// random size (0 included), in place and not; result forms; bad input.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

TEMPLATE_TEST_CASE("gather equals MPI_Gather for every algorithm, root and buffer path", "[comm][gather]", int,
                   double, pair_value) {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(21);
    const auto p = static_cast<std::size_t>(comm.size());
    for (comm_algorithm a : algorithms_of(collective::gather)) {
      for (int trial = 0; trial < 3; ++trial) {
        const std::size_t n = random_count(gen, sizeof(TestType)) % 12000;
        const int to = static_cast<int>(gen() % p);
        const bool in_place = gen() % 2 == 0 && comm.rank() == to;
        const auto mine = values_of<TestType>(200 + static_cast<std::uint64_t>(trial), comm.rank(), n);
        std::vector<TestType> expected(comm.rank() == to ? p * n : 0), got(expected.size());
        MPI_Request r;
        MPI_Igather(mine.data(), static_cast<int>(n), detail::mpi_type<TestType>(), expected.data(),
                    static_cast<int>(n), detail::mpi_type<TestType>(), to, MPI_COMM_WORLD, &r);
        wait_reference(r);
        INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << to << (in_place ? ", in place" : ""));
        const auto run = [&] {
          if (in_place) {
            std::copy(mine.begin(), mine.end(), got.begin() + static_cast<std::ptrdiff_t>(to * n));
            comm.gather(send_recv_buf(got), send_count(n), root(to), force_algorithm(a));
          } else {
            comm.gather(send_buf(mine), recv_buf(got), root(to), force_algorithm(a));
          }
        };
        if (!runnable(comm, collective::gather, a, n * sizeof(TestType))) {
          if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        check_equal(as_span(got), as_span(expected), "gather");
      }
    }
  }
}

TEST_CASE("gatherv equals MPI_Gatherv with gaps, zero counts and any root", "[comm][gather]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (comm_algorithm a : algorithms_of(collective::gatherv)) {
      for (int trial = 0; trial < 3; ++trial) {
        const auto stream = 300 + static_cast<std::uint64_t>(trial);
        const v_layout l = random_layout(stream, comm.size(), sizeof(double));
        const int to = trial % comm.size();
        const auto me = static_cast<std::size_t>(comm.rank());
        const auto mine = values_of<double>(stream, comm.rank(), static_cast<std::size_t>(l.counts[me]));
        std::vector<double> expected(comm.rank() == to ? l.extent : 0, -1.0), got = expected;
        MPI_Request r;
        MPI_Igatherv(mine.data(), l.counts[me], MPI_DOUBLE, expected.data(), l.counts.data(), l.displs.data(),
                     MPI_DOUBLE, to, MPI_COMM_WORLD, &r);
        wait_reference(r);
        INFO("algorithm " << to_string(a) << ", root " << to);
        const auto run = [&] {
          comm.gatherv(send_buf(mine), recv_buf(got), recv_counts(l.counts), recv_displs(l.displs), root(to),
                       force_algorithm(a));
        };
        if (!runnable(comm, collective::gatherv, a, 0)) {
          CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        check_equal(as_span(got), as_span(expected), "gatherv");
      }
    }
  }
  // Counts left out: exchanged first; the result is packed.
  communicator& comm = default_comm();
  const std::vector<int> mine(static_cast<std::size_t>(comm.rank()), comm.rank());
  const std::vector<int> all = comm.gatherv(send_buf(mine), root(0));
  std::vector<int> expected;
  for (int r = 0; comm.rank() == 0 && r < comm.size(); ++r)
    expected.insert(expected.end(), static_cast<std::size_t>(r), r);
  CHECK(all == expected);
}

TEST_CASE("gather returns results and igather completes", "[comm][gather]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    const int last = comm.size() - 1;
    const std::vector<double> ranks = comm.gather(send_buf(static_cast<double>(comm.rank())), root(last));
    std::vector<double> expected;
    for (int r = 0; comm.rank() == last && r < comm.size(); ++r) expected.push_back(r);
    CHECK(ranks == expected);
    Kokkos::View<int*> block("block", 3000), all("all", comm.rank() == 0 ? 3000 * comm.size() : 0);
    Kokkos::deep_copy(block, comm.rank());
    auto request = comm.igather(send_buf(block), recv_buf(all));
    request.wait();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < h.extent(0); ++i) wrong += h(i) != static_cast<int>(i / 3000);
    CHECK(wrong == 0);
  }
}

TEST_CASE("igatherv equals MPI_Gatherv on every buffer path", "[comm][gather]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    const v_layout l = random_layout(350, comm.size(), sizeof(int));
    const auto me = static_cast<std::size_t>(comm.rank());
    const int to = comm.size() - 1;
    const auto mine = values_of<int>(350, comm.rank(), static_cast<std::size_t>(l.counts[me]));
    std::vector<int> expected(comm.rank() == to ? l.extent : 0, -1), got = expected;
    MPI_Request r;
    MPI_Igatherv(mine.data(), l.counts[me], MPI_INT, expected.data(), l.counts.data(), l.displs.data(), MPI_INT,
                 to, MPI_COMM_WORLD, &r);
    wait_reference(r);
    auto request =
        comm.igatherv(send_buf(mine), recv_buf(got), recv_counts(l.counts), recv_displs(l.displs), root(to));
    request.wait();
    check_equal(as_span(got), as_span(expected), "igatherv");
  }
}

TEST_CASE("gather rejects bad arguments", "[comm][gather][errors]") {
  communicator& comm = default_comm();
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<int> x(4), all(4 * p), small(4 * p - 1);
  CHECK_THROWS_WITH(comm.gather(send_buf(x), send_count(5), recv_buf(all)),
                    ContainsSubstring("gather: send_buf holds 4 element(s) but 5 are needed (send_count)"));
  CHECK_THROWS_WITH(comm.gather(send_buf(x), recv_buf(all), root(-2)), ContainsSubstring("root -2 is outside"));
  // A negative count is called one, not a count of 18446744073709551615.
  CHECK_THROWS_WITH(comm.gather(send_buf(x), send_count(-1), recv_buf(all)),
                    ContainsSubstring("send_count(-1): a negative count; allowed: 0 or more elements"));
  CHECK_THROWS_WITH(comm.allgather(send_buf(x), send_count(-3), recv_buf(all)),
                    ContainsSubstring("send_count(-3): a negative count"));
  CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());  // still in step
  // Errors of one rank reach every rank when the communicator verifies arguments.
  communicator& checked = verifying_comm();
  check_rejected_everywhere(
      checked, 0, [&] { checked.gather(send_buf(x), recv_buf(checked.rank() == 0 ? small : all)); },
      "gather: recv_buf holds " + std::to_string(4 * p - 1) + " element(s) but " + std::to_string(4 * p) +
          " are needed (p times the count)");
  if (checked.size() > 1) {
    check_rejected_everywhere(
        checked, 1,
        [&] {
          if (checked.rank() == 1)
            checked.gather(send_recv_buf(all), root(0));
          else
            checked.gather(send_buf(x), recv_buf(all), root(0));
        },
        "gather: send_recv_buf (in place) is for the root only");
    std::vector<int> uneven(static_cast<std::size_t>(3 + checked.rank()));
    CHECK_THROWS_WITH(checked.gather(send_buf(uneven), recv_buf(all)),
                      ContainsSubstring("the ranks passed different counts (from 3 to"));
  }
}

TEST_CASE("gather with recv_counts equals MPI_Gatherv: blocking, in place, returned and igather",
          "[comm][gather][v]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (int trial = 0; trial < 3; ++trial) {
      const auto stream = 370 + static_cast<std::uint64_t>(trial);
      const v_layout l = random_layout(stream, comm.size(), sizeof(long));
      const int to = (trial + 1) % comm.size();
      const auto me = static_cast<std::size_t>(comm.rank());
      const auto mine = values_of<long>(stream, comm.rank(), static_cast<std::size_t>(l.counts[me]));
      std::vector<long> expected(comm.rank() == to ? l.extent : 0, -1);
      MPI_Request r;
      MPI_Igatherv(mine.data(), l.counts[me], MPI_LONG, expected.data(), l.counts.data(), l.displs.data(),
                   MPI_LONG, to, MPI_COMM_WORLD, &r);
      wait_reference(r);
      INFO("root " << to);
      std::vector<long> got(expected.size(), -1);
      comm.gather(send_buf(mine), recv_buf(got), recv_counts(l.counts), recv_displs(l.displs), root(to));
      check_equal(as_span(got), as_span(expected), "gather(recv_counts)");

      std::vector<long> in_place(expected.size(), -1);
      if (comm.rank() == to) {
        std::copy(mine.begin(), mine.end(), in_place.begin() + l.displs[me]);
        comm.gather(send_recv_buf(in_place), recv_counts(l.counts), recv_displs(l.displs), root(to));
      } else {
        comm.gather(send_buf(mine), recv_counts(l.counts), recv_displs(l.displs), root(to));
      }
      check_equal(as_span(in_place), as_span(expected), "gather(send_recv_buf, recv_counts)");

      const std::vector<long> returned =
          comm.gather(send_buf(mine), recv_counts(l.counts), recv_displs(l.displs), root(to));
      check_equal(as_span(returned), as_span(returned_blocks(expected, l)),
                  "gather(send_buf, recv_counts) returned");

      std::vector<long> started(expected.size(), -1);
      auto request =
          comm.igather(send_buf(mine), recv_buf(started), recv_counts(l.counts), recv_displs(l.displs), root(to));
      request.wait();
      check_equal(as_span(started), as_span(expected), "igather(recv_counts)");
    }
  }
}

// std::vector<bool> cannot hold a result (tests/compile_fail/comm_bool_result.cpp); bools gather
// into any contiguous buffer, and a View result works.
TEST_CASE("bools gather into contiguous buffers", "[comm][gather]") {
  communicator& comm = default_comm();
  const auto p = static_cast<std::size_t>(comm.size());
  auto gen = rng(380);
  std::vector<char> drawn(p);
  for (auto& d : drawn) d = static_cast<char>(gen() % 2);
  const bool flag = drawn[static_cast<std::size_t>(comm.rank())] != 0;
  std::unique_ptr<bool[]> all(new bool[p]);
  comm.allgather(send_buf(flag), recv_buf(std::span<bool>(all.get(), p)));
  Kokkos::View<bool*, Kokkos::HostSpace> mine("mine", 1);
  mine(0) = flag;
  const auto as_view = comm.allgather(send_buf(mine));
  REQUIRE(as_view.extent(0) == p);
  for (std::size_t r = 0; r < p; ++r) {
    CHECK(all[r] == (drawn[r] != 0));
    CHECK(as_view(r) == (drawn[r] != 0));
  }
}

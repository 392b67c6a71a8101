// allgather, allgatherv and iallgather against MPI_Allgather(v) for every algorithm, buffer
// path and random size (0 included), in place and not; result forms; bad input.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

TEMPLATE_TEST_CASE("allgather equals MPI_Allgather for every algorithm and buffer path", "[comm][allgather]", int,
                   double, pair_value) {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(41);
    const auto p = static_cast<std::size_t>(comm.size());
    for (comm_algorithm a : algorithms_of(collective::allgather)) {
      for (int trial = 0; trial < 3; ++trial) {
        const std::size_t n = random_count(gen, sizeof(TestType)) % 12000;
        const bool in_place = gen() % 2 == 0;
        const auto mine = values_of<TestType>(600 + static_cast<std::uint64_t>(trial), comm.rank(), n);
        std::vector<TestType> expected(p * n), got(p * n);
        MPI_Request r;
        MPI_Iallgather(mine.data(), static_cast<int>(n), detail::mpi_type<TestType>(), expected.data(),
                       static_cast<int>(n), detail::mpi_type<TestType>(), MPI_COMM_WORLD, &r);
        wait_reference(r);
        INFO("algorithm " << to_string(a) << ", n = " << n << (in_place ? ", in place" : ""));
        const auto run = [&] {
          if (in_place) {
            std::copy(mine.begin(), mine.end(),
                      got.begin() + static_cast<std::ptrdiff_t>(comm.rank()) * static_cast<std::ptrdiff_t>(n));
            comm.allgather(send_recv_buf(got), send_count(n), force_algorithm(a));
          } else {
            comm.allgather(send_buf(mine), recv_buf(got), force_algorithm(a));
          }
        };
        if (!runnable(comm, collective::allgather, a, n * sizeof(TestType))) {
          if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        check_equal(as_span(got), as_span(expected), "allgather");
      }
    }
  }
}

TEST_CASE("allgatherv equals MPI_Allgatherv with gaps and zero counts", "[comm][allgather]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (comm_algorithm a : algorithms_of(collective::allgatherv)) {
      for (int trial = 0; trial < 3; ++trial) {
        const auto stream = 700 + static_cast<std::uint64_t>(trial);
        const v_layout l = random_layout(stream, comm.size(), sizeof(double));
        const auto me = static_cast<std::size_t>(comm.rank());
        const auto mine = values_of<double>(stream, comm.rank(), static_cast<std::size_t>(l.counts[me]));
        std::vector<double> expected(l.extent, -1.0), got = expected;
        if (comm.size() > 1) {
          MPI_Request r;
          MPI_Iallgatherv(mine.data(), l.counts[me], MPI_DOUBLE, expected.data(), l.counts.data(), l.displs.data(),
                          MPI_DOUBLE, MPI_COMM_WORLD, &r);
          wait_reference(r);
        } else {  // MPICH 4.0.2's MPI_Allgatherv ignores the displacement on one rank: a serial reference
          std::copy(mine.begin(), mine.end(), expected.begin() + l.displs[0]);
        }
        std::size_t largest = 0;
        for (int c : l.counts) largest = std::max(largest, static_cast<std::size_t>(c));
        INFO("algorithm " << to_string(a));
        const auto run = [&] {
          if (trial == 2) {  // in place
            std::copy(mine.begin(), mine.end(), got.begin() + l.displs[me]);
            comm.allgatherv(send_recv_buf(got), recv_counts(l.counts), recv_displs(l.displs), force_algorithm(a));
          } else {
            comm.allgatherv(send_buf(mine), recv_buf(got), recv_counts(l.counts), recv_displs(l.displs),
                            force_algorithm(a));
          }
        };
        if (!runnable(comm, collective::allgatherv, a, largest * sizeof(double))) {
          CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        check_equal(as_span(got), as_span(expected), "allgatherv");
      }
    }
  }
  // Counts left out: exchanged first; the result is packed in rank order.
  communicator& comm = default_comm();
  const std::vector<long> mine(static_cast<std::size_t>(comm.rank() + 1), comm.rank());
  const std::vector<long> all = comm.allgatherv(send_buf(mine));
  std::vector<long> expected;
  for (int r = 0; r < comm.size(); ++r) expected.insert(expected.end(), static_cast<std::size_t>(r + 1), r);
  CHECK(all == expected);
}

TEST_CASE("allgather returns results and iallgather completes", "[comm][allgather]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    const auto p = static_cast<std::size_t>(comm.size());
    const std::vector<int> ranks = comm.allgather(send_buf(comm.rank()));
    std::vector<int> expected(p);
    for (std::size_t r = 0; r < p; ++r) expected[r] = static_cast<int>(r);
    CHECK(ranks == expected);
    Kokkos::View<double*> block("block", 2000), all("all", 2000 * p);
    Kokkos::deep_copy(block, comm.rank());
    auto view_result = comm.allgather(send_buf(block));
    CHECK(view_result.extent(0) == 2000 * p);
    auto request = comm.iallgather(send_buf(block), recv_buf(all));
    request.wait();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < h.extent(0); ++i) wrong += h(i) != static_cast<double>(i / 2000);
    CHECK(wrong == 0);
  }
}

TEST_CASE("iallgatherv equals MPI_Allgatherv on every buffer path", "[comm][allgather]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    const v_layout l = random_layout(750, comm.size(), sizeof(int));
    const auto me = static_cast<std::size_t>(comm.rank());
    const auto mine = values_of<int>(750, comm.rank(), static_cast<std::size_t>(l.counts[me]));
    std::vector<int> expected(l.extent, -1), got = expected;
    for (int r = 0; r < comm.size(); ++r) {
      const auto theirs = values_of<int>(750, r, static_cast<std::size_t>(l.counts[static_cast<std::size_t>(r)]));
      std::copy(theirs.begin(), theirs.end(), expected.begin() + l.displs[static_cast<std::size_t>(r)]);
    }
    auto request = comm.iallgatherv(send_buf(mine), recv_buf(got), recv_counts(l.counts), recv_displs(l.displs));
    while (!request.test()) std::this_thread::yield();
    check_equal(as_span(got), as_span(expected), "iallgatherv");
  }
}

TEST_CASE("allgather rejects bad arguments", "[comm][allgather][errors]") {
  communicator& comm = default_comm();
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<int> x(4), small(4 * p - 1), uneven(4 * p + 1);
  CHECK_THROWS_WITH(comm.allgather(send_buf(x), recv_buf(small)),
                    ContainsSubstring("allgather: recv_buf holds " + std::to_string(4 * p - 1)));
  if (p > 1) CHECK_THROWS_WITH(comm.allgather(send_recv_buf(uneven)), ContainsSubstring("not a multiple of the"));
  if (p == 3) {
    std::vector<int> enough(4 * p);
    CHECK_THROWS_WITH(
        comm.allgather(send_buf(x), recv_buf(enough), force_algorithm(comm_algorithm::recursive_doubling)),
        ContainsSubstring("3 ranks are not a power of two (use bruck or ring)"));
  }
  std::vector<int> counts(p, 4);
  counts.back() = 5;  // this rank's own count disagrees on the last rank
  std::vector<int> all(4 * p + 1);
  communicator& checked = verifying_comm();
  check_rejected_everywhere(
      checked, static_cast<int>(p) - 1,
      [&] { checked.allgatherv(send_buf(x), recv_buf(all), recv_counts(counts)); },
      "allgatherv: recv_counts[" + std::to_string(p - 1) + "] is 5 but this rank sends 4 element(s)");
  if (p > 1 && comm.has_shared_memory()) {
    // On the shared-memory path every rank reads every header: all find the mismatch.
    std::vector<int> wrong_counts(p, 4);
    wrong_counts[0] = comm.rank() == 0 ? 4 : 3;  // the others expect 3 from rank 0, which sends 4
    if (comm.rank() == 0)
      CHECK_NOTHROW(comm.allgatherv(send_buf(x), recv_buf(all), recv_counts(wrong_counts)));
    else
      CHECK_THROWS_WITH(comm.allgatherv(send_buf(x), recv_buf(all), recv_counts(wrong_counts)),
                        ContainsSubstring("rank 0 published a allgatherv of 16 bytes where this rank"));
  }
}

TEST_CASE("allgather with recv_counts equals MPI_Allgatherv: blocking, in place, returned and iallgather",
          "[comm][allgather][v]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (int trial = 0; trial < 3; ++trial) {
      const auto stream = 570 + static_cast<std::uint64_t>(trial);
      const v_layout l = random_layout(stream, comm.size(), sizeof(long));
      const auto me = static_cast<std::size_t>(comm.rank());
      const auto mine = values_of<long>(stream, comm.rank(), static_cast<std::size_t>(l.counts[me]));
      std::vector<long> expected(l.extent, -1);
      if (comm.size() > 1) {
        MPI_Request r;
        MPI_Iallgatherv(mine.data(), l.counts[me], MPI_LONG, expected.data(), l.counts.data(), l.displs.data(),
                        MPI_LONG, MPI_COMM_WORLD, &r);
        wait_reference(r);
      } else {  // MPICH 4.0.2's MPI_Allgatherv ignores the displacement on one rank: a serial reference
        std::copy(mine.begin(), mine.end(), expected.begin() + l.displs[0]);
      }
      std::vector<long> got(l.extent, -1);
      comm.allgather(send_buf(mine), recv_buf(got), recv_counts(l.counts), recv_displs(l.displs));
      check_equal(as_span(got), as_span(expected), "allgather(recv_counts)");

      std::vector<long> in_place(l.extent, -1);
      std::copy(mine.begin(), mine.end(), in_place.begin() + l.displs[me]);
      comm.allgather(send_recv_buf(in_place), recv_counts(l.counts), recv_displs(l.displs));
      check_equal(as_span(in_place), as_span(expected), "allgather(send_recv_buf, recv_counts)");

      const std::vector<long> returned =
          comm.allgather(send_buf(mine), recv_counts(l.counts), recv_displs(l.displs));
      check_equal(as_span(returned), as_span(returned_blocks(expected, l)),
                  "allgather(send_buf, recv_counts) returned");

      std::vector<long> started(l.extent, -1);
      auto request =
          comm.iallgather(send_buf(mine), recv_buf(started), recv_counts(l.counts), recv_displs(l.displs));
      request.wait();
      check_equal(as_span(started), as_span(expected), "iallgather(recv_counts)");
    }
  }
}

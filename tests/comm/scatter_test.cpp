// scatter, scatterv and iscatter against MPI_Scatter(v) for every algorithm, buffer path, root
// and random size (0 included), in place and not; bad input.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

TEMPLATE_TEST_CASE("scatter equals MPI_Scatter for every algorithm, root and buffer path", "[comm][scatter]", int,
                   double, pair_value) {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(31);
    const auto p = static_cast<std::size_t>(comm.size());
    for (comm_algorithm a : algorithms_of(collective::scatter)) {
      for (int trial = 0; trial < 3; ++trial) {
        const std::size_t n = random_count(gen, sizeof(TestType)) % 12000;
        const int from = static_cast<int>(gen() % p);
        const bool in_place = gen() % 2 == 0 && comm.rank() == from;
        auto all = values_of<TestType>(400 + static_cast<std::uint64_t>(trial), comm.rank(), p * n);
        std::vector<TestType> expected(n), got(n);
        MPI_Request r;
        MPI_Iscatter(all.data(), static_cast<int>(n), detail::mpi_type<TestType>(), expected.data(),
                     static_cast<int>(n), detail::mpi_type<TestType>(), from, MPI_COMM_WORLD, &r);
        wait_reference(r);
        INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << from << (in_place ? ", in place" : ""));
        const auto run = [&] {
          if (in_place) {
            comm.scatter(send_recv_buf(all), recv_count(n), root(from), force_algorithm(a));
            got.assign(all.begin() + static_cast<std::ptrdiff_t>(from * n),
                       all.begin() + static_cast<std::ptrdiff_t>((from + 1) * n));
          } else {
            comm.scatter(send_buf(all), recv_buf(got), root(from), force_algorithm(a));
          }
        };
        if (!runnable(comm, collective::scatter, a, p * n * sizeof(TestType))) {
          if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        check_equal(as_span(got), as_span(expected), "scatter");
      }
    }
  }
}

TEST_CASE("scatterv equals MPI_Scatterv with gaps, zero counts and any root", "[comm][scatter]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (comm_algorithm a : algorithms_of(collective::scatterv)) {
      for (int trial = 0; trial < 3; ++trial) {
        const auto stream = 500 + static_cast<std::uint64_t>(trial);
        const v_layout l = random_layout(stream, comm.size(), sizeof(double));
        const int from = (trial + 1) % comm.size();
        const auto me = static_cast<std::size_t>(comm.rank());
        const auto all = values_of<double>(stream, comm.rank(), l.extent);
        std::vector<double> expected(static_cast<std::size_t>(l.counts[me])), got(expected.size() + 3);
        MPI_Request r;
        MPI_Iscatterv(all.data(), l.counts.data(), l.displs.data(), MPI_DOUBLE, expected.data(), l.counts[me],
                      MPI_DOUBLE, from, MPI_COMM_WORLD, &r);
        wait_reference(r);
        INFO("algorithm " << to_string(a) << ", root " << from);
        const auto run = [&] {
          comm.scatterv(send_buf(all), send_counts(l.counts), send_displs(l.displs), recv_buf(got),
                        recv_count(expected.size()), root(from), force_algorithm(a));
        };
        if (!runnable(comm, collective::scatterv, a, 0)) {
          CHECK_THROWS_AS(run(), invalid_argument);
          continue;
        }
        run();
        got.resize(expected.size());
        check_equal(as_span(got), as_span(expected), "scatterv");
      }
    }
  }
}

TEST_CASE("iscatter completes with test()", "[comm][scatter]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    const auto p = static_cast<std::size_t>(comm.size());
    std::vector<int> all(p * 5);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i / 5);
    std::vector<int> mine(5, -1);
    auto request = comm.iscatter(send_buf(all), recv_buf(mine), root(static_cast<int>(p) - 1));
    while (!request.test()) std::this_thread::yield();
    CHECK(mine == std::vector<int>(5, comm.rank()));
  }
}

TEST_CASE("iscatterv equals MPI_Scatterv on every buffer path", "[comm][scatter]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    const v_layout l = random_layout(550, comm.size(), sizeof(int));
    const auto me = static_cast<std::size_t>(comm.rank());
    const auto all = values_of<int>(550, comm.rank(), l.extent);
    std::vector<int> expected(static_cast<std::size_t>(l.counts[me])), got(expected.size());
    MPI_Request r;
    MPI_Iscatterv(all.data(), l.counts.data(), l.displs.data(), MPI_INT, expected.data(), l.counts[me], MPI_INT, 0,
                  MPI_COMM_WORLD, &r);
    wait_reference(r);
    auto request = comm.iscatterv(send_buf(all), send_counts(l.counts), send_displs(l.displs), recv_buf(got));
    request.wait();
    check_equal(as_span(got), as_span(expected), "iscatterv");
  }
}

TEST_CASE("scatter rejects bad arguments", "[comm][scatter][errors]") {
  communicator& comm = default_comm();
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<int> all(3 * p), small(3 * p - 1), mine(3);
  CHECK_THROWS_WITH(comm.scatter(send_buf(all), recv_buf(mine), recv_count(4)),
                    ContainsSubstring("scatter: recv_buf holds 3 element(s) but 4 are needed (recv_count)"));
  CHECK_THROWS_WITH(comm.scatter(send_buf(all), recv_buf(mine), recv_count(-1)),
                    ContainsSubstring("recv_count(-1): a negative count; allowed: 0 or more elements"));
  CHECK_THROWS_WITH(comm.scatterv(send_buf(all), send_counts(std::vector<int>(p, 3)), recv_buf(mine),
                                  recv_count(std::int64_t{-7})),
                    ContainsSubstring("recv_count(-7): a negative count"));
  communicator& checked = verifying_comm();
  check_rejected_everywhere(
      checked, 0, [&] { checked.scatter(send_buf(checked.rank() == 0 ? small : all), recv_buf(mine)); },
      "scatter: send_buf holds " + std::to_string(3 * p - 1) + " element(s) but " + std::to_string(3 * p) +
          " are needed (p times the count)");
  std::vector<int> counts(p, 3);
  counts[0] = 2;  // the root's own count disagrees with what it receives
  check_rejected_everywhere(
      checked, 0, [&] { checked.scatterv(send_buf(all), send_counts(counts), recv_buf(mine)); },
      "scatterv: send_counts[root] is 2 but the root receives 3 element(s)");
  if (comm.size() > 1 && comm.has_shared_memory()) {
    // Each rank reads its own region's count on the shared-memory path: rank 1 expects 2, gets 3.
    std::vector<int> out(3);
    if (comm.rank() == 1)
      CHECK_THROWS_WITH(
          comm.scatterv(send_buf(all), send_counts(std::vector<int>(p, 3)), recv_buf(out), recv_count(2)),
          ContainsSubstring("scatterv: the root sends 3 element(s) to rank 1 where it expects 2"));
    else
      CHECK_NOTHROW(comm.scatterv(send_buf(all), send_counts(std::vector<int>(p, 3)), recv_buf(out)));
    // The root read nothing: it hears of rank 1's error at its next call, before data moves.
    if (comm.rank() == 0)
      CHECK_THROWS_WITH(comm.barrier(),
                        ContainsSubstring("rank 1 raised hetero::error in this communicator's previous scatterv"));
    CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());  // still usable
  }
}

TEST_CASE(
    "a scatterv whose root and rank 1 disagree on a count that fits one side's region only leaves nothing behind",
    "[comm][scatter][errors]") {
  communicator_options o;
  o.shm_slot_bytes = 4096;  // regions of at most 2048 bytes: `big` elements travel as messages
  communicator comm(o);
  if (comm.size() < 2 || !comm.has_shared_memory()) SKIP("needs 2 or more ranks on one node");
  const auto p = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  auto gen = rng(4133);
  const std::size_t big = 600 + gen() % 400;  // ints: more than a region holds
  // Rank 1 expects 2 where the root sends it `big` (a message no receive was posted for), or
  // the other way round (a receive no message comes for).
  const bool rank_expects_less = GENERATE(true, false);
  INFO((rank_expects_less ? "rank 1 expects 2, the root sends more" : "rank 1 expects more, the root sends 2"));
  std::vector<int> counts(p, static_cast<int>(big));
  if (!rank_expects_less) counts[1] = 2;
  const std::size_t expected = rank_expects_less ? 2 : big;
  const std::uint64_t first = gen(), second = gen();
  std::vector<int> out(big);
  {
    const auto all = values_of<int>(first, 0, p * big);
    const auto scatterv = [&](auto... extra) {
      comm.scatterv(send_buf(all), send_counts(counts), recv_buf(out), force_algorithm(comm_algorithm::shm),
                    extra...);
    };
    // Rank 1 reads this call's count (before: an earlier call's header, or it waited for a
    // message that never came until its wait gave up).
    if (me == 1)
      CHECK_THROWS_WITH(scatterv(recv_count(expected)),
                        ContainsSubstring("scatterv: the root sends " + std::to_string(counts[1]) +
                                          " element(s) to rank 1 where it expects " + std::to_string(expected)));
    else
      CHECK_NOTHROW(scatterv());
  }
  if (me == 0)
    CHECK_THROWS_WITH(comm.barrier(),
                      ContainsSubstring("rank 1 raised hetero::error in this communicator's previous scatterv"));
  // Every rank `big` elements, new values: each gets its own block of them (before, rank 1 took
  // the message the root had sent it in the first call, and its old values).
  counts.assign(p, static_cast<int>(big));
  const auto all = values_of<int>(second, 0, p * big);
  comm.scatterv(send_buf(all), send_counts(counts), recv_buf(out), force_algorithm(comm_algorithm::shm));
  CHECK(std::equal(out.begin(), out.end(), all.begin() + static_cast<std::ptrdiff_t>(me * big)));
}

TEST_CASE("scatter with send_counts equals MPI_Scatterv: blocking, in place and iscatter", "[comm][scatter][v]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (int trial = 0; trial < 3; ++trial) {
      const auto stream = 470 + static_cast<std::uint64_t>(trial);
      const v_layout l = random_layout(stream, comm.size(), sizeof(long));
      const int from = (trial + 1) % comm.size();
      const auto me = static_cast<std::size_t>(comm.rank());
      const auto n = static_cast<std::size_t>(l.counts[me]);
      const auto all = values_of<long>(stream, from, comm.rank() == from ? l.extent : 0);
      std::vector<long> expected(n, -1);
      MPI_Request r;
      MPI_Iscatterv(all.data(), l.counts.data(), l.displs.data(), MPI_LONG, expected.data(), l.counts[me],
                    MPI_LONG, from, MPI_COMM_WORLD, &r);
      wait_reference(r);
      INFO("root " << from);
      std::vector<long> got(n, -1);
      comm.scatter(send_buf(all), send_counts(l.counts), send_displs(l.displs), recv_buf(got), root(from));
      check_equal(as_span(got), as_span(expected), "scatter(send_counts)");

      std::vector<long> started(n, -1);
      auto request = comm.iscatter(send_buf(all), send_counts(l.counts), send_displs(l.displs), recv_buf(started),
                                   root(from));
      request.wait();
      check_equal(as_span(started), as_span(expected), "iscatter(send_counts)");

      // In place at the root: its own block stays where it is, the others receive theirs.
      std::vector<long> in_place = comm.rank() == from ? all : std::vector<long>(n, -1);
      if (comm.rank() == from) {
        comm.scatter(send_recv_buf(in_place), send_counts(l.counts), send_displs(l.displs), root(from));
        check_equal(as_span(in_place), as_span(all), "scatter(send_recv_buf, send_counts) at the root");
      } else {
        comm.scatter(recv_buf(in_place), send_counts(l.counts), root(from));
        check_equal(as_span(in_place), as_span(expected), "scatter(recv_buf, send_counts) off the root");
      }
    }
  }
}

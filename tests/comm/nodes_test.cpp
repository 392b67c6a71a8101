// The node-aware agreement on a call's arguments (comm/detail/node_agreement.hpp), which carries
// barrier and the small host broadcasts, reduces and allreduces, and the node-aware data step
// above that (comm_algorithm::hierarchical, comm/detail/node_collectives.hpp): run on 4 and 5
// ranks, on one node and on emulated nodes (2 + 2, and 2 + 2 + 1: a node of one rank too). Which path runs;
// results against a serial reference on fresh random data, around the size that travels inline; every rank raising
// for one rank's rejection and for mismatched counts, roots or collectives, with the communicator usable after;
// and a rank that never comes named on every rank, whether it leads its node or not.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

TEST_CASE("the agreement meets in the nodes' windows where ranks span nodes and some share one", "[comm][nodes]") {
  communicator& comm = default_comm();
  const int nodes = nodes_by_mpi();
  INFO(comm.size() << " ranks on " << nodes << " node(s)");
  CHECK(comm.nodes() == nodes);
  CHECK(comm.node_aware() == (nodes > 1 && nodes < comm.size()));
  CHECK(comm.has_shared_memory() == (nodes == 1));
  CHECK_FALSE(comm_cases()[1].comm.node_aware());  // communicator_options::shared_memory off
}

TEST_CASE("through the node windows up to 8 KiB travel with the records", "[comm][nodes]") {
  communicator& comm = default_comm();
  if (!comm.node_aware()) SKIP("needs ranks on several nodes, some sharing one (emulated nodes: docs/nodes.md)");
  const int p = comm.size();
  auto gen = rng(33);
  part_recorder parts;
  observer* previous = set_observer(&parts);
  // 8 KiB per rank: every rank's vector in one table (40 KiB on the test command's 5 ranks),
  // within a 64 KiB slot; 8 KiB and one more element: above the inline size.
  for (const std::size_t n : {std::size_t{1024}, std::size_t{1025}}) {
    const std::uint64_t stream = gen();
    const auto mine = values_of<long>(stream, comm.rank(), n);
    std::vector<long> got(n);
    comm.allreduce(send_buf(mine), recv_buf(got), op(ops::sum{}));
    check_equal(as_span(got), as_span(serial_fold<long>(stream, p, n, std::plus<>{})), "allreduce sum");
    const int to = static_cast<int>(gen() % static_cast<unsigned>(p));
    comm.reduce(send_buf(mine), recv_buf(got), op(ops::sum{}), root(to));
    if (comm.rank() == to)
      check_equal(as_span(got), as_span(serial_fold<long>(stream, p, n, std::plus<>{})), "reduce sum");
    std::vector<long> data = comm.rank() == to ? mine : std::vector<long>(n);
    comm.broadcast(send_recv_buf(data), root(to));
    check_equal(as_span(data), as_span(values_of<long>(stream, to, n)), "broadcast");
  }
  set_observer(previous);
  // Every rank's 8 KiB fit the default 64 KiB slot up to 7 ranks (records and all); the
  // broadcast carries only the root's.
  const std::size_t every_rank = p <= 7 ? 1 : 0;
  CHECK(parts.count("allreduce: inline with the agreement") == every_rank);
  CHECK(parts.count("reduce: inline with the agreement") == every_rank);
  CHECK(parts.count("broadcast: inline with the agreement") == 1);
}

TEST_CASE("through the node windows small gathers and scatters travel with the records", "[comm][nodes]") {
  communicator& comm = default_comm();
  if (!comm.node_aware()) SKIP("needs ranks on several nodes, some sharing one (emulated nodes: docs/nodes.md)");
  const auto p = static_cast<std::size_t>(comm.size());
  auto gen = rng(37);
  part_recorder parts;
  observer* previous = set_observer(&parts);
  // A scatter's p blocks are the root's payload: 8 KiB in all travel inline, one element more
  // per rank does not; a gather's blocks are each rank's own (up to 8 KiB each, every rank's in
  // one 64 KiB slot). Every root in turn, in place at odd roots.
  const std::size_t inline_block = 8192 / sizeof(long) / p;
  std::size_t calls = 0;
  for (const std::size_t n : {std::size_t{1}, inline_block, inline_block + 1}) {
    for (int to = 0; to < comm.size(); ++to) {
      const std::uint64_t stream = gen();
      INFO("n = " << n << ", root " << to);
      const auto all = values_of<long>(stream, to, p * n);
      const auto me = static_cast<std::size_t>(comm.rank());
      const std::span<const long> mine = std::span(all).subspan(me * n, n);
      std::vector<long> got(comm.rank() == to ? p * n : n);
      const bool in_place = comm.rank() == to && to % 2 == 1;
      if (in_place) {
        std::copy(mine.begin(), mine.end(), got.begin() + static_cast<std::ptrdiff_t>(me * n));
        comm.gather(send_recv_buf(got), root(to));
      } else {
        comm.gather(send_buf(mine), recv_buf(got), root(to));
      }
      if (comm.rank() == to) check_equal(as_span(got), as_span(all), "gather");
      std::vector<long> block(n);
      if (in_place) {
        std::vector<long> source = all;
        comm.scatter(send_recv_buf(source), root(to));
        check_equal(as_span(source), as_span(all), "scatter in place (the root's buffer unchanged)");
      } else {
        comm.scatter(send_buf(comm.rank() == to ? all : std::vector<long>{}), recv_buf(block), root(to));
        check_equal(as_span(block), mine, "scatter");
      }
      calls += n <= inline_block ? 1 : 0;
    }
  }
  set_observer(previous);
  CHECK(parts.count("gather: inline with the agreement") == (p <= 7 ? p * 3 : 0));
  CHECK(parts.count("scatter: inline with the agreement") == calls);
}

TEMPLATE_TEST_CASE("allreduce, reduce and broadcast equal a serial reference on any node layout", "[comm][nodes]",
                   long, double, std::uint64_t) {
  communicator& comm = default_comm();
  const int p = comm.size();
  auto gen = rng(31);
  for (int trial = 0; trial < 40; ++trial) {
    // Within the 1 KiB that travels with the records between single nodes, within the 8 KiB
    // that travels through the node windows, and above.
    const std::size_t up_to[] = {1024, 1024, 8192 + 64, 16384};
    const std::size_t n = gen() % (up_to[trial % 4] / sizeof(TestType) + 1);
    const std::uint64_t stream = gen();
    INFO("trial " << trial << ", n = " << n);
    const auto mine = values_of<TestType>(stream, comm.rank(), n);
    std::vector<TestType> got(n);
    comm.allreduce(send_buf(mine), recv_buf(got), op(ops::max{}));
    const auto most = serial_fold<TestType>(stream, p, n, [](TestType a, TestType b) { return a < b ? b : a; });
    check_equal(as_span(got), as_span(most), "allreduce max");
    const int to = static_cast<int>(gen() % static_cast<unsigned>(p));
    std::vector<TestType> least(comm.rank() == to ? n : 0);
    comm.reduce(send_buf(mine), recv_buf(least), op(ops::min{}), root(to));
    if (comm.rank() == to)
      check_equal(
          as_span(least),
          as_span(serial_fold<TestType>(stream, p, n, [](TestType a, TestType b) { return b < a ? b : a; })),
          "reduce min");
    if constexpr (!std::is_floating_point_v<TestType>) {  // integer sums: exact in any order
      comm.allreduce(send_buf(mine), recv_buf(got), op(ops::sum{}));
      check_equal(as_span(got), as_span(serial_fold<TestType>(stream, p, n, std::plus<>{})), "allreduce sum");
    }
    const int from = static_cast<int>(gen() % static_cast<unsigned>(p));
    std::vector<TestType> data = comm.rank() == from ? mine : std::vector<TestType>(n);
    comm.broadcast(send_recv_buf(data), root(from));
    check_equal(as_span(data), as_span(values_of<TestType>(stream, from, n)), "broadcast");
    // Gather and scatter of n / p elements per rank: the root's p blocks within what travels
    // with the records, and above.
    const std::size_t block = n / static_cast<std::size_t>(p);
    const auto blocks = values_of<TestType>(stream + 1, from, static_cast<std::size_t>(p) * block);
    std::vector<TestType> gathered(comm.rank() == to ? static_cast<std::size_t>(p) * block : 0);
    comm.gather(send_buf(std::span(blocks).subspan(static_cast<std::size_t>(comm.rank()) * block, block)),
                recv_buf(gathered), root(to));
    if (comm.rank() == to) check_equal(as_span(gathered), as_span(blocks), "gather");
    std::vector<TestType> scattered(block);
    comm.scatter(send_buf(blocks), recv_buf(scattered), root(from));
    check_equal(as_span(scattered),
                std::span<const TestType>(blocks).subspan(static_cast<std::size_t>(comm.rank()) * block, block),
                "scatter");
    comm.barrier();
  }
}

TEST_CASE("through the node windows small scatterv and gatherv travel with the records", "[comm][nodes]") {
  communicator& comm = default_comm();
  if (!comm.node_aware()) SKIP("needs ranks on several nodes, some sharing one (emulated nodes: docs/nodes.md)");
  const int p = comm.size();
  const auto me = static_cast<std::size_t>(comm.rank());
  auto gen = rng(38);
  part_recorder parts;
  observer* previous = set_observer(&parts);
  for (int to = 0; to < p; ++to) {
    std::vector<int> counts(static_cast<std::size_t>(p));
    std::vector<std::size_t> at(counts.size() + 1, 0);  // packed: rank r's block at at[r]
    for (std::size_t r = 0; r < counts.size(); ++r) {
      counts[r] = static_cast<int>(gen() % 9);  // zero counts too
      at[r + 1] = at[r] + static_cast<std::size_t>(counts[r]);
    }
    const std::uint64_t stream = gen();
    INFO("root " << to);
    const auto all = values_of<double>(stream, to, at.back());
    const std::span<const double> mine = std::span(all).subspan(at[me], static_cast<std::size_t>(counts[me]));
    std::vector<double> block(mine.size());
    comm.scatterv(send_buf(comm.rank() == to ? all : std::vector<double>{}), send_counts(counts), recv_buf(block),
                  root(to));
    check_equal(as_span(block), mine, "scatterv");
    std::vector<double> got(comm.rank() == to ? all.size() : 0);
    comm.gatherv(send_buf(mine), recv_buf(got), recv_counts(counts), root(to));
    if (comm.rank() == to) check_equal(as_span(got), as_span(all), "gatherv with recv_counts");
    std::fill(got.begin(), got.end(), -1.0);
    comm.gatherv(send_buf(mine), recv_buf(got), root(to));  // the counts gathered first
    if (comm.rank() == to) check_equal(as_span(got), as_span(all), "gatherv, counts gathered");
  }
  set_observer(previous);
  CHECK(parts.count("scatterv: inline with the agreement") == static_cast<std::size_t>(p));
  CHECK(parts.count("gatherv: inline with the agreement") == 2 * static_cast<std::size_t>(p));

  // Inline, a count the root does not expect raises where it is read, as on the window: the
  // receiving rank of a scatterv, the root of a gatherv. The others are done.
  std::vector<int> threes(static_cast<std::size_t>(p), 3);
  std::vector<int> all(3 * static_cast<std::size_t>(p), 7), out(3);
  if (comm.rank() == 1)
    CHECK_THROWS_WITH(comm.scatterv(send_buf(all), send_counts(threes), recv_buf(out), recv_count(2), root(0)),
                      ContainsSubstring("scatterv: the root sends 3 element(s) to rank 1 where it expects 2"));
  else
    CHECK_NOTHROW(comm.scatterv(send_buf(all), send_counts(threes), recv_buf(out), root(0)));
  const std::vector<int> sent(comm.rank() == 1 ? 4 : 3, 5);
  if (comm.rank() == 0)
    CHECK_THROWS_WITH(comm.gatherv(send_buf(sent), recv_buf(all), recv_counts(threes), root(0)),
                      ContainsSubstring("gatherv: rank 1 sends 4 element(s) where the root expects 3"));
  else
    CHECK_NOTHROW(comm.gatherv(send_buf(sent), recv_buf(all), recv_counts(threes), root(0)));
  CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == p);  // still usable
}

TEST_CASE("above 8 KiB the data meets in the node windows and among the node leaders", "[comm][nodes]") {
  communicator& comm = default_comm();
  if (!comm.node_aware()) SKIP("needs ranks on several nodes, some sharing one (emulated nodes: docs/nodes.md)");
  const int p = comm.size();
  auto gen = rng(34);
  part_recorder parts;
  observer* previous = set_observer(&parts);
  int calls = 0;
  // 8 KiB and one element (automatic: the node windows' sizes), and 20,000 (160 KB, forced:
  // three pieces of the 64 KiB slot).
  for (const std::size_t n : {std::size_t{1025}, std::size_t{20000}}) {
    const auto algorithm = force_algorithm(n > 8192 ? comm_algorithm::hierarchical : comm_algorithm::automatic);
    for (int trial = 0; trial < 3; ++trial, calls += 1) {
      const std::uint64_t stream = gen();
      INFO("n = " << n << ", trial " << trial);
      const auto mine = values_of<long>(stream, comm.rank(), n);
      const auto sum = serial_fold<long>(stream, p, n, std::plus<>{});
      std::vector<long> got = mine;  // in place on odd trials
      if (trial % 2 == 1)
        comm.allreduce(send_recv_buf(got), op(ops::sum{}), algorithm);
      else
        comm.allreduce(send_buf(mine), recv_buf(got), op(ops::sum{}), algorithm);
      check_equal(as_span(got), as_span(sum), "allreduce sum");
      // Every root in turn over the trials: a leader and a rank that does not lead its node.
      const int to = static_cast<int>((gen() % 2 == 0 ? trial : p - 1 - trial) % p);
      std::vector<long> at_root = comm.rank() == to ? mine : std::vector<long>{};
      if (comm.rank() == to && trial % 2 == 1)
        comm.reduce(send_recv_buf(at_root), op(ops::sum{}), root(to), algorithm);
      else
        comm.reduce(send_buf(mine), recv_buf(at_root), op(ops::sum{}), root(to), algorithm);
      if (comm.rank() == to) check_equal(as_span(at_root), as_span(sum), "reduce sum");
      std::vector<long> data = comm.rank() == to ? mine : std::vector<long>(n);
      comm.broadcast(send_recv_buf(data), root(to), algorithm);
      check_equal(as_span(data), as_span(values_of<long>(stream, to, n)), "broadcast");
    }
  }
  set_observer(previous);
  CHECK(parts.count("allreduce: node windows and leaders") == static_cast<std::size_t>(calls));
  CHECK(parts.count("reduce: node windows and leaders") == static_cast<std::size_t>(calls));
  CHECK(parts.count("broadcast: node windows and leaders") == static_cast<std::size_t>(calls));
}

TEST_CASE("a gather meets in the node windows and among the node leaders, in rank order", "[comm][nodes]") {
  communicator& comm = default_comm();
  if (!comm.node_aware()) SKIP("needs ranks on several nodes, some sharing one (emulated nodes: docs/nodes.md)");
  const int p = comm.size();
  auto gen = rng(36);
  part_recorder parts;
  observer* previous = set_observer(&parts);
  int calls = 0;
  // 1,025 elements (automatic: above what travels with the records, within the window's sizes),
  // 9,000 (72 KB per rank, forced: two pieces).
  for (const std::size_t n : {std::size_t{1025}, std::size_t{9000}}) {
    const auto algorithm = force_algorithm(n > 1000 ? comm_algorithm::hierarchical : comm_algorithm::automatic);
    for (int to = 0; to < p; ++to, ++calls) {
      const std::uint64_t stream = gen();
      INFO("n = " << n << ", root " << to);
      const auto mine = values_of<long>(stream, comm.rank(), n);
      std::vector<long> expected;
      for (int r = 0; r < p; ++r) {
        const auto theirs = values_of<long>(stream, r, n);
        expected.insert(expected.end(), theirs.begin(), theirs.end());
      }
      std::vector<long> got(comm.rank() == to ? static_cast<std::size_t>(p) * n : 0);
      if (comm.rank() == to && to % 2 == 1) {  // in place at odd roots
        std::copy(mine.begin(), mine.end(),
                  got.begin() + static_cast<std::ptrdiff_t>(to) * static_cast<std::ptrdiff_t>(n));
        comm.gather(send_recv_buf(got), root(to), algorithm);
      } else {
        comm.gather(send_buf(mine), recv_buf(got), root(to), algorithm);
      }
      if (comm.rank() == to) check_equal(as_span(got), as_span(expected), "gather");
    }
  }
  set_observer(previous);
  CHECK(parts.count("gather: node windows and leaders") == static_cast<std::size_t>(calls));
}

TEST_CASE("the node-aware reduction keeps rank order for an operation that is not commutative", "[comm][nodes]") {
  communicator& comm = default_comm();
  if (!comm.node_aware()) SKIP("needs ranks on several nodes, some sharing one (emulated nodes: docs/nodes.md)");
  const int p = comm.size();
  auto gen = rng(35);
  for (const std::size_t n : {std::size_t{600}, std::size_t{5000}}) {  // 19 KB; 160 KB: three pieces
    const std::uint64_t stream = gen();
    const int to = static_cast<int>(gen() % static_cast<unsigned>(p));
    INFO("n = " << n << ", root " << to);
    const auto mine = values_of<matrix2>(stream, comm.rank(), n);
    const auto product = serial_fold<matrix2>(stream, p, n, matrix_product{});
    std::vector<matrix2> got(n);
    const auto run = [&] {
      comm.allreduce(send_buf(mine), recv_buf(got), op(matrix_product{}),
                     force_algorithm(comm_algorithm::hierarchical));
    };
    if (!nodes_in_rank_order()) {
      CHECK_THROWS_WITH(run(), ContainsSubstring("not commutative"));
      continue;
    }
    run();
    check_equal(as_span(got), as_span(product), "allreduce of 2x2 matrix products");
    std::vector<matrix2> at_root(comm.rank() == to ? n : 0);
    comm.reduce(send_buf(mine), recv_buf(at_root), op(matrix_product{}), root(to),
                force_algorithm(comm_algorithm::hierarchical));
    if (comm.rank() == to) check_equal(as_span(at_root), as_span(product), "reduce of 2x2 matrix products");
  }
}

TEST_CASE("the node-aware algorithm refuses to run where it cannot", "[comm][nodes][errors]") {
  communicator& comm = default_comm();
  std::vector<double> x(16, 1.0), y(16);
  const auto forced = force_algorithm(comm_algorithm::hierarchical);
  if (!comm.node_aware()) {
    CHECK_THROWS_WITH(comm.allreduce(send_buf(x), recv_buf(y), op(ops::sum{}), forced),
                      ContainsSubstring("needs ranks on several nodes, some sharing one"));
  }
  CHECK_THROWS_WITH(comm_cases()[1].comm.broadcast(send_recv_buf(x), root(0), forced),
                    ContainsSubstring("shared_memory off"));
  CHECK_THROWS_WITH(comm.iallreduce(send_buf(x), recv_buf(y), op(ops::sum{}), forced),
                    ContainsSubstring("runs on shm or mpi"));
  if (comm.node_aware()) {
    // A count past MPI's int is refused on every rank, not on the node leaders alone (whose
    // node-mates waited in the node's window until the timeout). The View is never touched.
    const Kokkos::View<std::int8_t*, Kokkos::HostSpace> big(Kokkos::view_alloc(Kokkos::WithoutInitializing, "big"),
                                                            (std::size_t{1} << 31) + 1);
    CHECK_THROWS_WITH(comm.allreduce(send_recv_buf(big), op(ops::sum{}), forced),
                      ContainsSubstring("allreduce count is 2147483649, more than MPI's int count allows"));
    CHECK_THROWS_WITH(comm.reduce(send_recv_buf(big), op(ops::sum{}), root(comm.size() - 1), forced),
                      ContainsSubstring("reduce count is 2147483649"));
    CHECK_THROWS_WITH(comm.broadcast(send_recv_buf(big), root(0), forced),
                      ContainsSubstring("broadcast count is 2147483649"));
  }
  comm.allreduce(send_buf(x), recv_buf(y), op(ops::sum{}));  // still in step
  CHECK(y[0] == static_cast<double>(comm.size()));
}

TEST_CASE("one rank's rejection and mismatched arguments raise on every rank on any node layout",
          "[comm][nodes][errors]") {
  communicator& comm = default_comm();
  const int p = comm.size();
  auto gen = rng(32);
  for (int bad = 0; bad < p; ++bad) {
    INFO("rank " << bad << " is the odd one");
    const std::size_t n = 1 + gen() % 40;
    const std::uint64_t stream = gen();
    const auto mine = values_of<long>(stream, comm.rank(), n);
    std::vector<long> out(n), small(n - 1);
    // A rank whose receive buffer is too small: its own error, rejected_by_peer elsewhere.
    check_rejected_everywhere(
        comm, bad,
        [&] { comm.allreduce(send_buf(mine), recv_buf(comm.rank() == bad ? small : out), op(ops::sum{})); },
        "allreduce: recv_buf");
    comm.allreduce(send_buf(mine), recv_buf(out), op(ops::sum{}));
    check_equal(as_span(out), as_span(serial_fold<long>(stream, p, n, std::plus<>{})),
                "allreduce after a rejection");
    // Another count on one rank (3 against 4).
    const std::vector<long> uneven(comm.rank() == bad ? 3 : 4, 1L);
    std::vector<long> sum(uneven.size());
    CHECK_THROWS_WITH(comm.allreduce(send_buf(uneven), recv_buf(sum), op(ops::sum{})),
                      ContainsSubstring("the ranks passed different counts"));
    CHECK(comm.allreduce(send_buf(1L), op(ops::sum{})) == p);  // still usable
    // On one node a broadcast root may finish before the others find its count or root wrong
    // (it raises at its next call: argument_consistency_test); by message every rank raises.
    if (comm.has_shared_memory()) continue;
    // A broadcast whose root has another count (10 against 12).
    std::vector<long> data(comm.rank() == bad ? 10 : 12, 7L);
    CHECK_THROWS_WITH(comm.broadcast(send_recv_buf(data), root(bad)),
                      ContainsSubstring("the ranks passed different counts"));
    // Another root on one rank.
    std::vector<long> same(5, 1L);
    CHECK_THROWS_WITH(comm.broadcast(send_recv_buf(same), root(comm.rank() == bad ? (bad + 1) % p : bad)),
                      ContainsSubstring("the ranks passed different roots"));
    // Another collective on one rank.
    const auto odd_one = [&] {
      if (comm.rank() == bad)
        comm.barrier();
      else
        (void)comm.allreduce(send_buf(1L), op(ops::sum{}));
    };
    CHECK_THROWS_WITH(odd_one(), ContainsSubstring("the ranks called different collectives"));
    CHECK(comm.allreduce(send_buf(1L), op(ops::sum{})) == p);  // still usable
  }
}

TEST_CASE("a rank that never comes is named on every rank on any node layout", "[comm][nodes][errors]") {
  const int p = default_comm().size();
  // Rank 1 (not a node's first rank), then rank 0 (the first rank of its node) never come.
  for (const int late : {1, 0}) {
    INFO("rank " << late << " skips the call");
    communicator_options o;
    o.wait_timeout = std::chrono::seconds(1);
    communicator comm(o);
    std::vector<double> data(4, 1.0);
    std::string outcome = "none";
    std::vector<int> missing;
    try {
      if (comm.rank() != late) {
        if (late == 0)
          comm.broadcast(send_recv_buf(data), root(0));
        else
          comm.allreduce(send_buf(data), recv_buf(data), op(ops::sum{}));
      }
    } catch (const deadlock_error& e) {
      outcome = e.what();
      missing = e.missing_ranks();
    }
    INFO(outcome);
    if (comm.rank() == late) {
      CHECK(outcome == "none");
    } else {
      CHECK(missing == std::vector<int>{late});
      CHECK_THAT(outcome, ContainsSubstring("not arrived: rank " + std::to_string(late)) &&
                              ContainsSubstring("(limit 1 s)") &&
                              ContainsSubstring("on a communicator of " + std::to_string(p) + " rank(s)"));
    }
    default_comm().barrier();  // the next case starts together
  }
}

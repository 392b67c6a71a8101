// Tiles across ranks (1, 2, 3 ranks, and on emulated nodes): random programs whose tasks write
// tiles on their owners and read them anywhere, on the host and on a stand-in device, against
// their sequential meaning (every owned element, and what every task read wherever it ran);
// each version of a tile moves once to each rank that reads it (and is read through once there,
// by its first host reader), and the device moves are the fewest the program needs; the errors
// of tiles.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "data_program.hpp"
#include "nodes.hpp"
#include "random.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using tile_graph = hetero::task_graph<Kokkos::Serial>;

// Runs `prog` with its pieces as tiles owned cyclically; checks this rank's tiles and the
// hashes of the tasks it ran, and returns its statistics.
hetero::task_statistics run_tiles(tile_graph& graph, const data_test::program& prog) {
  const int me = graph.rank();
  std::vector<data_test::host_view> mine(static_cast<std::size_t>(prog.pieces()));
  for (int p = 0; p < prog.pieces(); ++p) {
    if (prog.owner(p) != me) continue;
    auto& v = mine[static_cast<std::size_t>(p)];
    v = data_test::host_view("tile", 64);
    for (int e = 0; e < prog.size(p); ++e) v(static_cast<std::size_t>(e)) = prog.initial_word(p, e);
  }
  auto tiles = graph.tiles(
      "T", {static_cast<std::int64_t>(prog.pieces())}, {64},
      [&](std::int64_t p) { return prog.owner(static_cast<int>(p)); },
      [&](std::int64_t p) { return mine[static_cast<std::size_t>(p)]; });
  std::vector<data_test::word> hashes(static_cast<std::size_t>(prog.tasks()), 0);
  graph.reset_statistics();
  for (int i = 0; i < prog.tasks(); ++i)
    data_test::declare_task(
        graph, prog, i, [&](int p) { return tiles(p); }, hashes);
  graph.wait();
  for (int i = 0; i < prog.tasks(); ++i) {
    if (!prog.runs_on(i, me)) continue;
    INFO("task " << i << " on rank " << me);
    CHECK(hashes[static_cast<std::size_t>(i)] == prog.expected_hash(i));
  }
  for (int p = 0; p < prog.pieces(); ++p) {
    if (prog.owner(p) != me) continue;
    for (int e = 0; e < prog.size(p); ++e) {
      INFO("tile " << p << " element " << e << " on rank " << me);
      REQUIRE(mine[static_cast<std::size_t>(p)](static_cast<std::size_t>(e)) ==
              prog.expected(p)[static_cast<std::size_t>(e)]);
    }
  }
  return graph.statistics();
}

// A program whose pieces are all 64 words (tiles share one shape).
data_test::program tile_program(std::mt19937_64& rng, int tiles, int tasks, std::vector<data_test::side> sides,
                                int ranks) {
  return data_test::program(rng, tiles, tasks, std::move(sides), ranks, 1, 64);
}

}  // namespace

TEST_CASE("random programs on tiles across ranks give their sequential results with the fewest moves",
          "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  const hetero::testing::node_layout nodes = hetero::testing::node_layout_of();
  auto rng = hetero::testing::rng(51);
  for (int workers : {1, 2}) {
    for (bool shared : {true, false}) {
      tile_graph graph({.workers = workers, .node_shared_copies = shared});
      for (int round = 0; round < 4; ++round) {
        INFO("workers " << workers << ", round " << round << ", node_shared_copies " << shared);
        const auto prog = tile_program(rng, 7, 50, {data_test::side::host, data_test::side::device}, ranks);
        const auto stats = run_tiles(graph, prog);
        std::vector<std::uint64_t> from_owner;
        std::uint64_t first_host_reads = 0;
        const auto minimum = prog.minimum_moves(graph.rank(), &from_owner, &first_host_reads);
        CHECK(stats.moves.to_device.moves == minimum[0]);
        CHECK(stats.moves.to_host.moves == minimum[1]);
        CHECK(stats.moves.from_ranks.moves == minimum[2]);
        CHECK(stats.moves.to_ranks.moves == minimum[3]);
        CHECK(stats.moves.from_ranks.bytes == minimum[2] * 64 * sizeof(data_test::word));
        // Through shared memory exactly the tiles whose owner shares this rank's node (on
        // emulated nodes, never between two of them).
        std::uint64_t on_node = 0;
        for (int r = 0; r < ranks; ++r)
          if (shared && r != graph.rank() && nodes.same_node(r, graph.rank()))
            on_node += from_owner[static_cast<std::size_t>(r)];
        CHECK(stats.moves.from_node_memory == on_node);
        // Each received version is read through once, by the first host task reading it here.
        CHECK(stats.moves.read_through == first_host_reads);
      }
    }
  }
}

TEST_CASE("tasks with both bodies on tiles across ranks", "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  auto rng = hetero::testing::rng(52);
  tile_graph graph({.workers = 2, .device_memory = 4 * 64 * sizeof(data_test::word)});
  for (int round = 0; round < 4; ++round)
    (void)run_tiles(
        graph, tile_program(rng, 9, 60, {data_test::side::host, data_test::side::device, data_test::side::either},
                            ranks));
}

TEST_CASE("a task writing a tile on a rank that does not own it is refused there", "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  tile_graph graph({.workers = 2});
  const int me = graph.rank();
  std::vector<data_test::host_view> mine(2);
  mine[static_cast<std::size_t>(me) % 2] = data_test::host_view("tile", 4);
  auto tiles = graph.tiles(
      "W", {2}, {4}, [](std::int64_t p) { return static_cast<int>(p); },
      [&](std::int64_t p) { return mine[static_cast<std::size_t>(p)]; });
  // A write alone (an update would also make rank 0 send the tile to rank 1, a move that the
  // refused task leaves without a reader: rank 0's wait would end in a no-progress report).
  const auto spawn = [&] { graph.spawn("stray write", hetero::on(1), hetero::writes(tiles(0)), [](auto) {}); };
  if (me == 1) {
    CHECK_THROWS_MATCHES(
        spawn(), hetero::invalid_argument,
        Catch::Matchers::MessageMatches(ContainsSubstring("writes tile W[0] on rank 1, but rank 0 owns it")));
  } else {
    CHECK_NOTHROW(spawn());
  }
  // Without on(...), a task writing a tile runs on its owner.
  int ran = 0;
  graph.spawn("owner writes", hetero::updates(tiles(1)), [&](auto v) {
    v(0) = 42;
    ++ran;
  });
  graph.wait();
  CHECK(ran == (me == 1 ? 1 : 0));
  if (me == 1) CHECK(mine[1](0) == 42);
  // wait(data) reads a tile back on its owner only.
  if (me != 1) {
    CHECK_THROWS_WITH(graph.wait(tiles(1)), ContainsSubstring("wait(data) of tile W[1] on rank " +
                                                              std::to_string(me) + ", which rank 1 owns"));
  } else {
    CHECK_NOTHROW(graph.wait(tiles(1)));
  }
}

TEST_CASE("tile arrays made differently on different ranks are refused on every rank", "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  tile_graph graph({.workers = 1});
  data_test::host_view local("tile", 4);
  const std::int64_t count = graph.rank() == 0 ? 3 : 4;
  CHECK_THROWS_WITH((void)graph.tiles(
                        "M", {count}, {4}, [](std::int64_t) { return 0; }, [&](std::int64_t) { return local; }),
                    ContainsSubstring("tiles('M', ...) was declared differently on different ranks"));
  graph.wait();
}

TEST_CASE("graphs whose ranks differ in node_shared_copies refuse their tile arrays on every rank",
          "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  // Both ends of a move must take the same path: a reader through MPI and an owner waiting for
  // its "ready" would never meet.
  tile_graph graph({.workers = 1, .node_shared_copies = hetero::testing::world_rank() == 0});
  data_test::host_view local("tile", 4);
  CHECK_THROWS_WITH(
      (void)graph.tiles(
          "S", {2}, {4}, [](std::int64_t p) { return static_cast<int>(p); }, [&](std::int64_t) { return local; }),
      ContainsSubstring("tiles('S', ...) was declared differently on different ranks") &&
          ContainsSubstring("node_shared_copies"));
  graph.wait();
}

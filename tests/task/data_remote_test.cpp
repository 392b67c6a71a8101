// Tiles across ranks (1, 2, 3 ranks, and on emulated nodes): random programs whose tasks write
// tiles on their owners and read them anywhere, on the host and on a stand-in device, against
// their sequential meaning (every owned element, and what every task read wherever it ran);
// each version of a tile moves once to each rank that reads it (and is read through once there,
// by its first host reader; tiles in a coarray that ranks of one node map are read in the
// owner's memory, in place, the owner writing them again only once those readers finished),
// and the device moves are the fewest the program needs; the errors of tiles.
#include <hetero/distarray/coarray.hpp>
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "data_program.hpp"
#include "nodes.hpp"
#include "random.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using tile_graph = hetero::task_graph<Kokkos::Serial>;

// How a test's tiles are held.
enum class held {
  views,   // a View of its own per tile
  coarray  // row p of its owner's image of a coarray, which the ranks of a node map (peer_view_of)
};

// Row `row` of an image of a coarray of words, `words` long, as a tile's View (an empty View where
// the image is not mapped here).
template <class Image>
data_test::host_view row_of(const Image& image, std::int64_t row, std::size_t words) {
  return image.data() ? data_test::host_view(&image(row, 0), words) : data_test::host_view();
}

// Runs `prog` with its pieces as tiles owned cyclically; checks this rank's tiles and the
// hashes of the tasks it ran, and returns its statistics.
hetero::task_statistics run_tiles(tile_graph& graph, const data_test::program& prog, held how = held::views) {
  const int me = graph.rank();
  const auto pieces = static_cast<std::int64_t>(prog.pieces());
  hetero::coarray<data_test::word, 2, Kokkos::HostSpace> rows;
  if (how == held::coarray)
    rows = hetero::coarray<data_test::word, 2, Kokkos::HostSpace>({pieces, 64}, graph.mpi_comm());
  std::vector<data_test::host_view> mine(static_cast<std::size_t>(prog.pieces()));
  for (int p = 0; p < prog.pieces(); ++p) {
    if (prog.owner(p) != me) continue;
    auto& v = mine[static_cast<std::size_t>(p)];
    v = how == held::coarray ? row_of(rows.local(), p, 64) : data_test::host_view("tile", 64);
    for (int e = 0; e < prog.size(p); ++e) v(static_cast<std::size_t>(e)) = prog.initial_word(p, e);
  }
  const auto owner_of = [&](std::int64_t p) { return prog.owner(static_cast<int>(p)); };
  const auto view_of = [&](std::int64_t p) { return mine[static_cast<std::size_t>(p)]; };
  auto tiles =
      how == held::coarray
          ? graph.tiles("T", {pieces}, {64}, owner_of, view_of,
                        [&](std::int64_t p) { return row_of(rows.local(prog.owner(static_cast<int>(p))), p, 64); })
          : graph.tiles("T", {pieces}, {64}, owner_of, view_of);
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
      for (held how : {held::views, held::coarray}) {
        tile_graph graph({.workers = workers, .node_shared_copies = shared});
        for (int round = 0; round < 4; ++round) {
          INFO("workers " << workers << ", round " << round << ", node_shared_copies " << shared
                          << ", in a coarray " << (how == held::coarray));
          const auto prog = tile_program(rng, 7, 50, {data_test::side::host, data_test::side::device}, ranks);
          const auto stats = run_tiles(graph, prog, how);
          std::vector<std::uint64_t> from_owner, first_host_reads;
          const auto minimum = prog.minimum_moves(graph.rank(), &from_owner, &first_host_reads);
          CHECK(stats.moves.to_device.moves == minimum[0]);
          CHECK(stats.moves.to_host.moves == minimum[1]);
          CHECK(stats.moves.from_ranks.moves == minimum[2]);
          CHECK(stats.moves.to_ranks.moves == minimum[3]);
          CHECK(stats.moves.from_ranks.bytes == minimum[2] * 64 * sizeof(data_test::word));
          // Through shared memory exactly the tiles whose owner shares this rank's node (on
          // emulated nodes, never between two of them).
          std::uint64_t on_node = 0, read_through = 0;
          for (int r = 0; r < ranks; ++r) {
            const auto k = static_cast<std::size_t>(r);
            const bool near = shared && r != graph.rank() && nodes.same_node(r, graph.rank());
            if (near) on_node += from_owner[k];
            if (!near || how == held::views) read_through += first_host_reads[k];
          }
          CHECK(stats.moves.from_node_memory == on_node);
          // In a coarray, each version received from a rank of this node is read in the owner's
          // memory (a device task copies it first); every other received version is read through
          // once, by the first host task reading it here.
          CHECK(stats.moves.pulled == (how == held::coarray ? on_node : 0));
          CHECK(stats.moves.read_through == read_through);
        }
      }
    }
  }
}

TEST_CASE("random programs on tiles across ranks run in insertion windows of 1-3 nodes", "[task][data][mpi]") {
  // A tile's move is two nodes, declared together: a window of one node must still hold it.
  auto rng = hetero::testing::rng(69);
  for (std::size_t window : {1, 2, 3}) {
    for (held how : {held::views, held::coarray}) {
      tile_graph graph({.workers = 1, .window = window, .no_progress_timeout = std::chrono::seconds(20)});
      for (int round = 0; round < 2; ++round) {
        INFO("window " << window << ", round " << round << ", in a coarray " << (how == held::coarray));
        const auto prog = tile_program(rng, 5, 30, {data_test::side::host}, hetero::testing::world_size());
        const auto stats = run_tiles(graph, prog, how);
        CHECK(stats.moves.from_ranks.moves == prog.minimum_moves(graph.rank())[2]);
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

TEST_CASE("a data task that every rank refuses moves no tile", "[task][data][mpi]") {
  // The tile moves were declared before the refusals that every rank makes (a null event, a
  // device the graph does not have): the refused task's reader still received the tile.
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  const int last = ranks - 1, me = hetero::testing::world_rank();
  tile_graph graph({.workers = 2, .no_progress_timeout = std::chrono::seconds(10)});
  data_test::host_view mine;
  if (me == 0) mine = data_test::host_view("tile", 4);
  auto tiles = graph.tiles(
      "R", {1}, {4}, [](std::int64_t) { return 0; }, [&](std::int64_t) { return mine; });
  graph.spawn("write", hetero::writes(tiles(0)), [](auto v) {
    for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = 9;
  });
  graph.wait();
  graph.reset_statistics();
  CHECK_THROWS_WITH(
      graph.spawn("refused", hetero::on(last), hetero::in(hetero::event{}), hetero::reads(tiles(0)), [](auto) {}),
      ContainsSubstring("null hetero::event"));
  CHECK_THROWS_WITH(graph.spawn("refused", hetero::on(last), hetero::device(7), hetero::reads(tiles(0)),
                                [](const auto&, auto) {}),
                    ContainsSubstring("device(7) pins a task") || ContainsSubstring("without devices"));
  CHECK_NOTHROW(graph.wait());
  const auto stats = graph.statistics();
  CHECK(stats.moves.to_ranks.moves == 0);
  CHECK(stats.moves.from_ranks.moves == 0);
  // The graph goes on: a task that is not refused gets the tile.
  data_test::word seen = 0;
  graph.spawn("read", hetero::on(last), hetero::reads(tiles(0)), [&](auto v) { seen = v(3); });
  graph.wait();
  if (me == last) CHECK(seen == 9);
}

TEST_CASE("a tile pulled for a task that its rank then refused still ends its owner's move", "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  const int last = ranks - 1, me = hetero::testing::world_rank();
  tile_graph graph({.workers = 2, .no_progress_timeout = std::chrono::seconds(10)});
  // Tile 0 of rank 0, in a coarray that the ranks of a node map.
  hetero::coarray<data_test::word, 2, Kokkos::HostSpace> rows({1, 4}, graph.mpi_comm());
  auto tiles = graph.tiles(
      "P", {1}, {4}, [](std::int64_t) { return 0; }, [&](std::int64_t) { return row_of(rows.local(), 0, 4); },
      [&](std::int64_t) { return row_of(rows.local(0), 0, 4); });
  auto e = graph.remote_events("E", 1);
  graph.spawn("write", hetero::writes(tiles(0)), [](auto v) {
    for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = 7;
  });
  graph.spawn("event", hetero::on(0), hetero::out(e(0)), [] {});
  // The last rank declares the tile's move before it finds the event unreadable there: the
  // move has no task to read it, and the owner waits for the last rank's copy all the same.
  const auto refused = [&] {
    const auto spawn = [&] {
      graph.spawn("refused", hetero::on(last), hetero::in(e(0)), hetero::reads(tiles(0)), [](auto) {});
    };
    if (me == last) {
      CHECK_THROWS_WITH(spawn(), ContainsSubstring("does not notify rank " + std::to_string(last)));
    } else {
      CHECK_NOTHROW(spawn());
    }
  };
  refused();
  // No other task reads that version on the last rank: its wait() answers the pull, and every
  // rank's wait() ends (else the owner's would end in a no-progress error).
  CHECK_NOTHROW(graph.wait());
  if (me == 0) CHECK(rows.local()(0, 3) == 7);
  // Again, and then the owner writes the tile and the last rank reads it in the same run: the
  // unread version is released when the next write is declared (the owner's writer waits for it).
  graph.spawn("event", hetero::on(0), hetero::out(e(0)), [] {});
  refused();
  graph.spawn("rewrite", hetero::updates(tiles(0)), [](auto v) {
    for (std::size_t i = 0; i < v.extent(0); ++i) v(i) += 1;
  });
  std::uint64_t read = 0;
  graph.spawn("read", hetero::on(last), hetero::reads(tiles(0)), [&](auto v) { read = v(3); });
  CHECK_NOTHROW(graph.wait());
  if (me == last) CHECK(read == 8);
  // The next run moves the tile again, and a task reads it.
  read = 0;
  graph.spawn("read", hetero::on(last), hetero::reads(tiles(0)), [&](auto v) { read = v(3); });
  CHECK_NOTHROW(graph.wait());
  if (me == last) CHECK(read == 8);
}

TEST_CASE("host tasks read the tiles of ranks of their node in place, until the owner writes them again",
          "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  const hetero::testing::node_layout nodes = hetero::testing::node_layout_of();
  const int me = hetero::testing::world_rank();
  tile_graph graph({.workers = 2, .no_progress_timeout = std::chrono::seconds(20)});
  // Tiles 0 and 1 of rank 0: rows of its image of a coarray that the ranks of a node map.
  hetero::coarray<data_test::word, 2, Kokkos::HostSpace> rows({2, 64}, graph.mpi_comm());
  auto tiles = graph.tiles(
      "R", {2}, {64}, [](std::int64_t) { return 0; }, [&](std::int64_t p) { return row_of(rows.local(), p, 64); },
      [&](std::int64_t p) { return row_of(rows.local(0), p, 64); });
  auto rng = hetero::testing::rng(67);
  std::vector<data_test::word> first(64), second(64);
  for (auto* v : {&first, &second})
    for (auto& w : *v) w = rng();
  const auto assign = [](const std::vector<data_test::word>& values) {
    return [&values](auto v) {
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = values[i];
    };
  };
  graph.reset_statistics();  // before any task runs
  graph.spawn("write", hetero::writes(tiles(0)), assign(first));
  // Two readers of that version on each other rank, each reading it twice, 20 ms apart: the
  // owner's next write must wait for both.
  struct seen {
    bool in_place = false, unchanged = false;
    std::vector<data_test::word> values;
  };
  std::vector<seen> readers(2);
  for (seen& r : readers)
    graph.spawn("read", hetero::on(hetero::rank_set::all().without(0, ranks)), hetero::reads(tiles(0)),
                [&r, &rows](auto v) {
                  r.in_place = rows.local(0).data() != nullptr && v.data() == &rows.local(0)(0, 0);
                  r.values.assign(v.data(), v.data() + v.extent(0));
                  std::this_thread::sleep_for(std::chrono::milliseconds(20));
                  r.unchanged = std::equal(r.values.begin(), r.values.end(), v.data());
                });
  graph.spawn("rewrite", hetero::writes(tiles(0)), assign(second));
  // The other ranks never read the new version of tile 0, but one that depends on it: their
  // release of the first version cannot wait for the end of the run.
  graph.spawn("derive", hetero::reads(tiles(0)), hetero::writes(tiles(1)), [](auto from, auto to) {
    for (std::size_t i = 0; i < to.extent(0); ++i) to(i) = from(i) + 1;
  });
  std::vector<data_test::word> derived;
  graph.spawn("read derived", hetero::on(hetero::rank_set::all().without(0, ranks)), hetero::reads(tiles(1)),
              [&derived](auto v) { derived.assign(v.data(), v.data() + v.extent(0)); });
  REQUIRE_NOTHROW(graph.wait());
  const auto stats = graph.statistics();
  if (me == 0) {
    for (std::size_t i = 0; i < 64; ++i) {
      REQUIRE(rows.local()(0, static_cast<std::int64_t>(i)) == second[i]);
      REQUIRE(rows.local()(1, static_cast<std::int64_t>(i)) == second[i] + 1);
    }
    CHECK(stats.moves.pulled == 0);
    return;
  }
  const bool near = nodes.same_node(0, me);
  for (const seen& r : readers) {
    CHECK(r.in_place == near);
    CHECK(r.unchanged);
    CHECK(r.values == first);
  }
  REQUIRE(derived.size() == 64);
  for (std::size_t i = 0; i < 64; ++i) REQUIRE(derived[i] == second[i] + 1);
  CHECK(stats.moves.pulled == (near ? 2U : 0U));
}

TEST_CASE("tiles read in place until the end of the run do not fill their owner's insertion window",
          "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  const int me = hetero::testing::world_rank();
  // 64 tiles per rank, each written once and read by every other rank, which releases them only
  // in its wait(): the owners' moves wait that long, and 16 nodes of window must still do.
  constexpr std::int64_t per_rank = 64;
  tile_graph graph({.workers = 1, .window = 16, .no_progress_timeout = std::chrono::seconds(20)});
  hetero::coarray<data_test::word, 2, Kokkos::HostSpace> rows({per_rank, 8}, graph.mpi_comm());
  const auto owner_of = [ranks](std::int64_t p) { return static_cast<int>(p % ranks); };
  const std::int64_t count = per_rank * ranks;
  auto tiles = graph.tiles(
      "W", {count}, {8}, owner_of, [&](std::int64_t p) { return row_of(rows.local(), p / ranks, 8); },
      [&](std::int64_t p) { return row_of(rows.local(owner_of(p)), p / ranks, 8); });
  std::vector<data_test::word> sums(static_cast<std::size_t>(count), 0);
  for (std::int64_t p = 0; p < count; ++p)
    graph.spawn("write", hetero::writes(tiles(p)), [p](auto v) {
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = static_cast<data_test::word>(p * 8) + i;
    });
  for (std::int64_t p = 0; p < count; ++p)
    graph.spawn("read", hetero::on(hetero::rank_set::all().without(owner_of(p), ranks)), hetero::reads(tiles(p)),
                [&sums, p](auto v) {
                  for (std::size_t i = 0; i < v.extent(0); ++i) sums[static_cast<std::size_t>(p)] += v(i);
                });
  REQUIRE_NOTHROW(graph.wait());
  for (std::int64_t p = 0; p < count; ++p) {
    if (owner_of(p) == me) continue;
    INFO("tile " << p);
    CHECK(sums[static_cast<std::size_t>(p)] == static_cast<data_test::word>(8 * p * 8 + 28));
  }
}

TEST_CASE("a tile read in place in one run moves again in the next", "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  const int me = hetero::testing::world_rank();
  tile_graph graph({.workers = 2, .no_progress_timeout = std::chrono::seconds(20)});
  hetero::coarray<data_test::word, 2, Kokkos::HostSpace> rows({1, 64}, graph.mpi_comm());
  auto tiles = graph.tiles(
      "N", {1}, {64}, [](std::int64_t) { return 0; }, [&](std::int64_t) { return row_of(rows.local(), 0, 64); },
      [&](std::int64_t) { return row_of(rows.local(0), 0, 64); });
  auto rng = hetero::testing::rng(68);
  const auto others = hetero::rank_set::all().without(0, ranks);
  // Each run: the owner writes the tile, every other rank reads it (the last run's version is
  // released at the end of its wait(), each run's message carrying its own epoch).
  for (int run = 0; run < 4; ++run) {
    std::vector<data_test::word> values(64), seen;
    for (auto& w : values) w = rng();
    graph.spawn("write", hetero::writes(tiles(0)), [&values](auto v) {
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = values[i];
    });
    graph.spawn("read", hetero::on(others), hetero::reads(tiles(0)),
                [&seen](auto v) { seen.assign(v.data(), v.data() + v.extent(0)); });
    REQUIRE_NOTHROW(graph.wait());
    INFO("run " << run);
    if (me != 0) CHECK(seen == values);
  }
}

TEST_CASE("peer_view_of must map the tiles of every owner on this rank's node", "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  const hetero::testing::node_layout nodes = hetero::testing::node_layout_of();
  const int me = hetero::testing::world_rank(), other = me == 0 ? 1 : 0;
  tile_graph graph({.workers = 1});
  data_test::host_view local("tile", 4);
  auto tiles = graph.tiles(
      "Q", {2}, {4}, [](std::int64_t p) { return static_cast<int>(p); }, [&](std::int64_t) { return local; },
      [](std::int64_t) { return data_test::host_view(); });
  // The owner offers its versions to the ranks of its node unasked: each must map the tile.
  if (nodes.same_node(other, me)) {
    CHECK_THROWS_MATCHES((void)tiles(other), hetero::invalid_argument,
                         Catch::Matchers::MessageMatches(
                             ContainsSubstring("peer_view_of gives an empty View for tile Q[" +
                                               std::to_string(other) + "] of rank " + std::to_string(other))));
  } else {
    CHECK_NOTHROW((void)tiles(other));  // another node: the tile moves through MPI
  }
  graph.wait();
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

TEST_CASE("tile arrays given peer_view_of on some ranks only are refused on every rank", "[task][data][mpi]") {
  const int ranks = hetero::testing::world_size();
  if (ranks < 2) SKIP("needs 2 or more ranks");
  // The owner offers what a reader of its node pulls: both must know the tiles are pulled.
  tile_graph graph({.workers = 1});
  data_test::host_view local("tile", 4);
  const auto owner_of = [](std::int64_t p) { return static_cast<int>(p); };
  const auto view_of = [&](std::int64_t) { return local; };
  const auto make = [&] {
    if (hetero::testing::world_rank() == 0) return graph.tiles("V", {2}, {4}, owner_of, view_of, view_of);
    return graph.tiles("V", {2}, {4}, owner_of, view_of);
  };
  CHECK_THROWS_WITH((void)make(),
                    ContainsSubstring("tiles('V', ...) was declared differently on different ranks") &&
                        ContainsSubstring("peer_view_of given or not"));
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

// Tasks with subgraphs across ranks: an outer task's notifications (out(...).to(...)) are sent
// once its inner tasks finished, declared and replayed; compose refuses recordings that talk to
// other ranks. Values move through node-shared memory (shared_slots.hpp), so a notification
// sent before the inner task that puts the value shows up as a stale value.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "shared_slots.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::testing::sum_over_ranks;
using hetero::testing::world_rank;
using hetero::testing::world_size;

namespace {

using graph_type = hetero::task_graph<Kokkos::Serial>;
using subgraph_type = graph_type::subgraph_type;

// Every rank r runs a task with a subgraph writing ea(r) and notifying every other rank; its
// last inner task (after a slow one) puts `value(r)` into every rank's slot r. Every rank then
// reads ea(r) for every r and checks its slot.
template <class Value>
void declare_blocks(graph_type& graph, const hetero::event_array<1>& ea, hetero::testing::shared_slots& slots,
                    Value value, std::atomic<int>& bad, std::atomic<int>& read) {
  const int p = world_size();
  for (int r = 0; r < p; ++r) {
    graph.spawn(
        "block", hetero::on(r), hetero::out(ea(r)).to(hetero::rank_set::all()),
        [&slots, value, r, p](subgraph_type& sg) {
          auto slow = sg.event("slow");
          sg.spawn("slow", hetero::out(slow), [] { std::this_thread::sleep_for(std::chrono::milliseconds(10)); });
          sg.spawn("put", hetero::in(slow), hetero::device(), [&slots, value, r, p](const Kokkos::Serial&) {
            for (int q = 0; q < p; ++q) slots.slot(r, q).store(value(r), std::memory_order_release);
          });
        });
  }
  for (int r = 0; r < p; ++r)
    graph.spawn("reader", hetero::in(ea(r)), [&slots, &bad, &read, value, r] {
      if (slots.slot(r, world_rank()).load(std::memory_order_acquire) != value(r)) bad.fetch_add(1);
      read.fetch_add(1);
    });
}

}  // namespace

TEST_CASE("an outer task notifies other ranks only once its inner tasks finished", "[task][mpi][subgraph]") {
  const int workers = GENERATE(1, 2);
  hetero::testing::shared_slots slots(world_size());  // slot r: what rank r's block puts
  INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window"));
  // A slot past the ones made (this test once wrote slot r of 3 on 4 ranks) throws, not writes.
  CHECK_THROWS_AS(slots.slot(world_size(), 0), std::out_of_range);
  CHECK_THROWS_AS(slots.slot(0, world_size()), std::out_of_range);
  CHECK_THROWS_AS(slots.slot(-1, 0), std::out_of_range);
  graph_type graph({.workers = workers});
  auto ea = graph.remote_events("EA", world_size());
  std::atomic<int> bad{0}, read{0};
  int round = 0;
  const auto value = [&round](int r) { return static_cast<std::int64_t>(100 * round + r + 1); };
  for (round = 1; round <= 3; ++round) {
    declare_blocks(graph, ea, slots, value, bad, read);
    graph.wait();
  }
  // The same recorded: the bodies declare their subgraphs again in every replay.
  const auto recording = graph.record([&] { declare_blocks(graph, ea, slots, value, bad, read); });
  for (; round <= 6; ++round) graph.run(recording);
  CHECK(read.load() == 6 * world_size());
  CHECK(bad.load() == 0);
  CHECK(sum_over_ranks(bad.load()) == 0);
}

TEST_CASE("compose refuses a recording that notifies or waits for other ranks", "[task][mpi][compose]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  graph_type graph({.workers = 1});
  auto ea = graph.remote_event("EA");
  int ran = 0;
  const auto talking = graph.record([&] {
    graph.spawn(hetero::on(0), hetero::out(ea).to(hetero::rank_set::all()), [&] { ++ran; });
    graph.spawn(hetero::in(ea), [&] { ++ran; });
  });
  CHECK_THROWS_AS(graph.spawn(hetero::compose(talking)), hetero::invalid_argument);
  CHECK_THROWS_WITH(graph.spawn(hetero::compose(talking)),
                    ContainsSubstring("which sends or waits for notifications of other ranks (out(...).to(...) in "
                                      "its tasks); a composed recording must be local to each rank"));
  graph.run(talking);  // the graph goes on, and the recording replays as it is
  CHECK(ran == (world_rank() == 0 ? 2 : 1));
}

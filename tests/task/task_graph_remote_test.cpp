// hetero::task_graph across ranks: out events naming remote ranks, notifications waited for by
// the readers there, tasks on several ranks, wait(event) on a remote event, and failures seen on
// every rank. Values move through node-shared memory (shared_slots.hpp), so a notification that
// overtook its writer shows up as a stale value.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "random.hpp"
#include "rounds_program.hpp"
#include "shared_slots.hpp"
#include "uncopyable.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::MessageMatches;
using hetero::testing::sum_over_ranks;
using hetero::testing::world_rank;
using hetero::testing::world_size;

// Only the rank running the task copied its body: it alone threw, the others had declared the
// write and waited for its notification, and every rank ended in deadlock_error.
TEST_CASE("a body whose copy throws is refused on every rank alike and the graph goes on", "[task][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  auto rng = hetero::testing::rng(404);  // the same draws on every rank
  const int writer = static_cast<int>(rng() % static_cast<std::uint64_t>(world_size()));
  hetero::testing::shared_slots slots(1);
  hetero::task_graph graph({.workers = 2, .no_progress_timeout = std::chrono::seconds(10)});
  auto ea = graph.remote_event("EA");
  CHECK_THROWS_WITH(graph.spawn("uncopyable", hetero::on(writer), hetero::out(ea).to(hetero::rank_set::all()),
                                [c = hetero::testing::uncopyable(1)] { (void)c; }),
                    "copying the body failed");  // on every rank, not only the writer's
  const auto value = static_cast<std::int64_t>(1 + rng() % 1000000);
  std::int64_t seen = -1;
  graph.spawn("write", hetero::on(writer), hetero::out(ea).to(hetero::rank_set::all()), [&] {
    for (int r = 0; r < world_size(); ++r) slots.slot(0, r).store(value, std::memory_order_release);
  });
  graph.spawn("read", hetero::in(ea), [&] { seen = slots.slot(0, world_rank()).load(std::memory_order_acquire); });
  REQUIRE_NOTHROW(graph.wait());
  CHECK(seen == value);
}

TEST_CASE("the seed's Figure 6: taskD on the last rank waits for taskA's put and notification", "[task][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const int last = world_size() - 1;
  hetero::testing::shared_slots slots(1);
  INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window"));
  hetero::task_graph graph({.workers = 2});
  auto ea = graph.remote_event("EA");
  auto eb = graph.event("EB");
  auto ec = graph.event("EC");
  int seen = -1, b_ran = 0, c_ran = 0;
  graph.spawn("taskA", hetero::on(0), hetero::out(ea).to(last), [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a late put must still be seen
    slots.slot(0, last).store(42, std::memory_order_release);
  });
  graph.spawn("taskB", hetero::on(0), hetero::out(eb), [&] { ++b_ran; });
  graph.spawn("taskC", hetero::on(last), hetero::out(ec), [&] { ++c_ran; });
  graph.spawn("taskD", hetero::on(last), hetero::in(ea, ec),
              [&] { seen = static_cast<int>(slots.slot(0, last).load(std::memory_order_acquire)); });
  graph.wait();
  if (world_rank() == last) {
    CHECK(seen == 42);
    CHECK(c_ran == 1);
  } else {
    CHECK(seen == -1);
    CHECK(c_ran == 0);
  }
  CHECK(b_ran == (world_rank() == 0 ? 1 : 0));
}

TEST_CASE("random cross-rank programs: every reader sees its writer's put, every task runs once", "[task][mpi]") {
  const int workers = GENERATE(1, 2);
  const std::size_t window = GENERATE(std::size_t{1}, std::size_t{2}, std::size_t{4096});
  hetero::testing::shared_slots slots(8);
  INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window") << ", window " << window);
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(11 + workers));
  hetero::testing::rounds_program program(rng, world_size(), 12, 8);
  hetero::task_graph graph(
      {.workers = workers, .window = window, .no_progress_timeout = std::chrono::seconds(20)});
  auto e = graph.remote_events("E", program.events());
  auto ack = graph.remote_events("ACK", program.events(), world_size());
  std::atomic<int> bad{0}, ran{0};
  program.declare(graph, e, ack, slots, bad, ran);
  graph.wait();
  CHECK(bad.load() == 0);
  CHECK(ran.load() == program.tasks_of(world_rank()));
  CHECK(sum_over_ranks(bad.load()) == 0);
}

TEST_CASE("a task on every rank notifying every rank: each reader waits for all the writers", "[task][mpi]") {
  const int p = world_size();
  // The writer's notifications to its own rank are received by nodes declared with the task's
  // own node, two here: windows of 1 and 2 nodes must still hold them, and one of 3 holds the
  // three at once.
  const std::size_t window = GENERATE(std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{4096});
  hetero::testing::shared_slots slots(p);
  INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window") << ", window " << window);
  hetero::task_graph graph({.workers = 2, .window = window, .no_progress_timeout = std::chrono::seconds(20)});
  auto e = graph.remote_event("all");
  auto f = graph.remote_event("all again");
  std::atomic<int> bad{0};
  for (int round = 1; round <= 5; ++round) {
    graph.spawn("every rank writes", hetero::out(e).to(hetero::rank_set::all()),
                hetero::out(f).to(hetero::rank_set::all()), [&, round] {
                  for (int r = 0; r < p; ++r) slots.slot(graph.rank(), r).store(round, std::memory_order_release);
                });
    graph.spawn("every rank reads", hetero::in(e), hetero::in(f), [&, round] {
      for (int s = 0; s < p; ++s)
        if (slots.slot(s, graph.rank()).load(std::memory_order_acquire) != round) bad.fetch_add(1);
    });
    graph.wait();  // the next round overwrites the slots: everybody must have read them
  }
  CHECK(sum_over_ranks(bad.load()) == 0);
}

TEST_CASE("wait(event) on a rank returns once the remote writer's notification arrived", "[task][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  hetero::testing::shared_slots slots(1);
  INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window"));
  hetero::task_graph graph({.workers = 2});
  auto flag = graph.remote_event("flag");
  graph.spawn("writer", hetero::on(0), hetero::out(flag).to(hetero::rank_set::range(1, world_size())), [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (int r = 1; r < world_size(); ++r) slots.slot(0, r).store(7, std::memory_order_release);
  });
  graph.wait(flag);
  if (world_rank() > 0) CHECK(slots.slot(0, world_rank()).load(std::memory_order_acquire) == 7);
  graph.wait();
}

TEST_CASE("an idle worker takes a notification while the declaring thread works outside the graph",
          "[task][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  hetero::task_graph graph({.workers = 2});
  auto go = graph.remote_event("go");
  // The second worker falls asleep with nothing to poll for (its spin is 50 us).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::atomic<bool> read{false};
  const auto readers = hetero::rank_set::range(1, world_size());
  graph.spawn("writer", hetero::on(0), hetero::out(go).to(readers), [] {});
  graph.spawn("reader", hetero::on(readers), hetero::in(go), [&] { read = true; });
  // The reader's rank stays out of the graph (no wait(), no spawn) until its reader ran: only
  // a worker polling MPI can take the notification (a generous bound; it takes microseconds).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  if (world_rank() > 0)
    while (!read.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool read_outside_wait = read.load();
  graph.wait();
  if (world_rank() > 0) CHECK(read_outside_wait);
}

TEST_CASE("a task failing on one rank: that rank rethrows, the others raise and skip what depended on it",
          "[task][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  hetero::task_graph graph({.workers = 2});
  auto e = graph.remote_event("E");
  int dependent_ran = 0;
  graph.spawn("fails", hetero::on(0), hetero::out(e).to(hetero::rank_set::all()),
              [] { throw std::runtime_error("rank 0 failed"); });
  graph.spawn("dependent", hetero::in(e), [&] { ++dependent_ran; });
  if (world_rank() == 0) {
    CHECK_THROWS_WITH(graph.wait(), "rank 0 failed");
  } else {
    CHECK_THROWS_WITH(graph.wait(), ContainsSubstring("a task failed on another rank"));
  }
  CHECK(dependent_ran == 0);

  int ran = 0;  // the graph stays usable on every rank
  graph.spawn("after", hetero::in(e), [&] { ++ran; });
  graph.wait();
  CHECK(ran == 1);
}

TEST_CASE("a remote event written without .to(...) cannot be read on a rank the writer does not notify",
          "[task][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const int last = world_size() - 1;
  hetero::task_graph graph({.workers = 2});
  auto e = graph.remote_events("E", 3);
  std::atomic<int> written{0}, read_early{0}, read_late{0};
  graph.spawn("writer", hetero::on(0), hetero::out(e(0)), [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    written.store(1);
  });
  if (world_rank() == last) {
    CHECK_THROWS_MATCHES(
        graph.spawn("reader", hetero::on(last), hetero::in(e(0)), [&] { read_early.store(1); }),
        hetero::invalid_argument,
        MessageMatches(ContainsSubstring("task 'reader' (spawn number 2) reads remote event E[0] on rank " +
                                         std::to_string(last)) &&
                       ContainsSubstring("(spawn number 1) runs on other ranks and does not notify") &&
                       ContainsSubstring("out(E[0]).to(...)")));
  } else {
    graph.spawn("reader", hetero::on(last), hetero::in(e(0)), [&] { read_early.store(1); });
  }
  // A write the rank sees (.to names it, or it runs there) makes the event readable again.
  graph.spawn("writer with to", hetero::on(0), hetero::out(e(0)).to(last), [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    written.store(2);
  });
  graph.spawn("late reader", hetero::on(last), hetero::in(e(0)), [&] { read_late.store(written.load() + 10); });
  // A read on the writer's own rank needs no notification; other events are not affected.
  graph.spawn("local writer", hetero::out(e(1)), [] {});
  graph.spawn("local reader", hetero::in(e(1), e(2)), [] {});
  graph.wait();
  CHECK(read_early.load() == 0);  // refused on the last rank; declared but not run elsewhere
  if (world_rank() == last) CHECK(read_late.load() == 10);  // ran after the notification (written on rank 0 only)
  if (world_rank() == 0) CHECK(written.load() == 2);
}

TEST_CASE("inout of a remote event is refused where its last writer does not notify, as in is", "[task][mpi]") {
  // inout is a write that reads: it was taken as a write alone, and ran beside the writer.
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const int last = world_size() - 1;
  hetero::task_graph graph({.workers = 2});
  auto e = graph.remote_events("E", 1);
  std::atomic<int> ran{0};
  graph.spawn("writer", hetero::on(0), hetero::out(e(0)), [&] { ++ran; });
  const auto update = [&] { graph.spawn("update", hetero::on(last), hetero::inout(e(0)), [&] { ran += 10; }); };
  if (world_rank() == last) {
    CHECK_THROWS_MATCHES(update(), hetero::invalid_argument,
                         MessageMatches(ContainsSubstring("task 'update' (spawn number 2) reads remote event E[0] "
                                                          "on rank " +
                                                          std::to_string(last)) &&
                                        ContainsSubstring("does not notify")));
  } else {
    CHECK_NOTHROW(update());
  }
  graph.wait();
  CHECK(ran.load() == (world_rank() == 0 ? 1 : 0));
}

TEST_CASE("remote events must be declared alike on every rank", "[task][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  hetero::task_graph graph({.workers = 1});
  CHECK_THROWS_WITH(graph.remote_events("EA", world_rank() == 0 ? 4 : 5),
                    ContainsSubstring("remote_events('EA', ...) was declared differently on different ranks"));
  auto same = graph.remote_events("EB", 2, 2);  // later declarations still work
  CHECK(same.remote_capable());
  CHECK(same(1, 1).name() == "EB[1][1]");
}

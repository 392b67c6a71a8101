// A task graph that can never finish raises hetero::deadlock_error on every rank after the
// no-progress timeout, listing the pending tasks and the events they wait for.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "world.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::testing::world_rank;
using hetero::testing::world_size;

namespace {

// An operation that never completes.
struct never {
  bool test() const noexcept { return false; }
};

constexpr auto short_timeout = std::chrono::milliseconds(300);

}  // namespace

TEST_CASE("an adopted operation that never completes: wait() raises deadlock_error naming what waits",
          "[task][deadlock]") {
  hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF, .no_progress_timeout = short_timeout});
  auto done = graph.event("transfer done");
  auto result = graph.event("result");
  int ran = 0;
  graph.spawn("independent", [&] { ++ran; });
  graph.adopt(hetero::out(done), never{}, "halo transfer");
  graph.spawn("consume", hetero::in(done), hetero::out(result), [&] { ++ran; });
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    graph.wait();
  } catch (const hetero::deadlock_error& e) {
    message = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(waited >= 0.25);
  CHECK(ran == 1);
  CHECK_THAT(message, ContainsSubstring("task graph deadlock: no task ran, finished or arrived for 0.3"));
  CHECK_THAT(message, ContainsSubstring("rank 0 (made no progress for 0.3"));
  CHECK_THAT(message, ContainsSubstring("2 node(s) pending, none running or ready"));
  CHECK_THAT(message, ContainsSubstring("adopted operation 'halo transfer' out(transfer done): not complete"));
  CHECK_THAT(message, ContainsSubstring("task #3 'consume' in(transfer done) out(result) waits for 1 unfinished "
                                        "dependency"));
  CHECK_THROWS_WITH(graph.spawn([] {}), ContainsSubstring("raised hetero::deadlock_error"));
  CHECK_THROWS_AS(graph.wait(), hetero::runtime_error);
}

// The report said "while wait() was waiting" for a spawn held by the window.
TEST_CASE("a spawn held by a full window names where it waited", "[task][deadlock]") {
  const std::size_t window = 1 + static_cast<std::size_t>(std::random_device{}() % 4);
  hetero::task_graph graph(
      {.workers = 2, .comm = MPI_COMM_SELF, .window = window, .no_progress_timeout = short_timeout});
  auto done = graph.events("done", window);
  for (std::size_t i = 0; i < window; ++i) graph.adopt(hetero::out(done(i)), never{}, "halo transfer");  // fill it
  std::string message;
  try {
    graph.spawn("next", [] {});
  } catch (const hetero::deadlock_error& e) {
    message = e.what();
  }
  INFO("window " << window);
  CHECK_THAT(message, ContainsSubstring("while a spawn, adopt or wait(event) held by a full insertion window "
                                        "(task_options::window) was waiting"));
  CHECK_THAT(message, ContainsSubstring(std::to_string(window) + " node(s) pending, none running or ready"));
  CHECK_THAT(message, ContainsSubstring("adopted operation 'halo transfer'"));
}

TEST_CASE("an adopted operation whose test throws ends the graph at once with its error", "[task][deadlock]") {
  // It stayed polled and pending: wait() raised deadlock_error after the timeout, and the
  // operations polled after it in the same round were never reached.
  struct throws {
    bool test() const { throw std::runtime_error("the transfer broke"); }
  };
  struct after_three {
    int* polls;
    bool test() const { return ++*polls >= 3; }
  };
  hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF, .no_progress_timeout = std::chrono::seconds(20)});
  auto broken = graph.event("broken");
  auto fine = graph.event("fine");
  int ran = 0, polls = 0;
  graph.adopt(hetero::out(broken), throws{}, "broken transfer");
  graph.adopt(hetero::out(fine), after_three{&polls}, "fine transfer");
  graph.spawn("consume", hetero::in(broken), [&] { ++ran; });
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(graph.wait(), ContainsSubstring("the transfer broke"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));  // not the timeout
  CHECK(ran == 0);                                                             // its dependent skipped
  CHECK(polls >= 3);                           // the other operation was polled to its end
  CHECK_NOTHROW(graph.spawn([&] { ++ran; }));  // the graph goes on
  CHECK_NOTHROW(graph.wait());
  CHECK(ran == 1);
}

TEST_CASE("ranks that declared different graphs: every rank raises with every rank's pending work",
          "[task][deadlock][mpi]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const int last = world_size() - 1;
  hetero::task_graph graph({.workers = 2, .no_progress_timeout = short_timeout});
  auto ea = graph.remote_event("EA");
  int consumed = 0;
  // Rank 0 forgets to declare the writer the last rank expects a notification from.
  if (world_rank() != 0) graph.spawn("produce", hetero::on(0), hetero::out(ea).to(last), [] {});
  graph.spawn("consume", hetero::on(last), hetero::in(ea), [&] { ++consumed; });
  std::string message;
  try {
    graph.wait();
  } catch (const hetero::deadlock_error& e) {
    message = e.what();
  }
  CHECK(consumed == 0);
  CHECK_THAT(message, ContainsSubstring("task graph deadlock"));
  CHECK_THAT(message, ContainsSubstring("no pending task (its part of the graph finished; it waits in wait() for "
                                        "the other ranks)"));
  CHECK_THAT(message, ContainsSubstring("notification of EA (write #0 by task 'produce' on rank(s) {0}): 0 of 1 "
                                        "message(s) received"));
  CHECK_THAT(message, ContainsSubstring("'consume' in(EA) waits for 1 unfinished dependency"));
  for (int r = 0; r < world_size(); ++r) CHECK_THAT(message, ContainsSubstring("rank " + std::to_string(r)));
  CHECK_THAT(message, !ContainsSubstring("no report"));
}

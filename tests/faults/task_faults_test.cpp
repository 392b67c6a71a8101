// Fault injection into task graphs across ranks (remote events, `.to(...)`): a rank whose task
// throws, a rank that returns early (leaves the graph before declaring or waiting, or skips a
// task others wait for, or skips a collective remote_events), a rank that sleeps past the
// timeout (1 s, set by this folder's main; the graphs' task_options::no_progress_timeout
// inherits it), mismatched counts (remote_events shapes) and roots (the rank a writer runs on),
// a notification whose MPI_Isend fails (main.cpp's interposer).
// Every rank must end with the documented error; a graph that gave up refuses further use, and
// a fresh graph afterwards works (no message of the broken one reaches it).
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "faults_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

constexpr int workers = 2;

// The checks every task graph deadlock_error passes: the knob is named, every rank is listed.
void check_deadlock(const faults::outcome& o) {
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring("task graph deadlock: "));
  CHECK_THAT(o.text, ContainsSubstring("HETERO_WAIT_TIMEOUT") &&
                         ContainsSubstring("here set by runtime_options::wait_timeout") &&
                         ContainsSubstring("task_options::no_progress_timeout"));
  for (int r = 0; r < faults::world_size(); ++r)
    CHECK_THAT(o.text, ContainsSubstring("\nrank " + std::to_string(r)));
}

// A rank that waited for the faulty one gave up after the timeout: this one (naming itself), or
// another whose report came first (its part of the text says how long it waited).
void check_stuck_here(const faults::outcome& o) {
  INFO(o.text);
  CHECK_THAT(o.text, (ContainsSubstring("no task ran, finished or arrived for " + faults::limit_seconds_text()) &&
                      ContainsSubstring("s on rank " + std::to_string(faults::world_rank()))) ||
                         ContainsSubstring("another rank found that its tasks made no progress"));
  CHECK_THAT(o.text, ContainsSubstring("(made no progress for " + faults::limit_seconds_text()));
}

// After a fault, a new graph on the same ranks runs a cross-rank program: a writer on a random
// rank notifying every rank, a reader everywhere.
void check_fresh_graph() {
  const int p = faults::world_size(), me = faults::world_rank();
  const int writer = static_cast<int>(faults::shared_random(0, p - 1));
  hetero::task_graph graph({.workers = workers});
  auto e = graph.remote_events("after", 2);
  std::atomic<int> wrote{0}, read{0};
  graph.spawn("write", hetero::on(writer), hetero::out(e(1)).to(hetero::rank_set::all()), [&] { ++wrote; });
  graph.spawn("read", hetero::in(e(1)), [&] { read += 1 + wrote.load(); });
  REQUIRE_NOTHROW(graph.wait());
  CHECK(wrote.load() == (me == writer ? 1 : 0));
  CHECK(read.load() == (me == writer ? 2 : 1));  // on the writer's rank the reader ran after it
}

// A graph that raised deadlock_error refuses further use.
void check_refuses(hetero::task_graph<>& graph) {
  CHECK_THROWS_AS(graph.spawn([] {}), hetero::runtime_error);
  CHECK_THROWS_WITH(graph.wait(), ContainsSubstring("raised hetero::deadlock_error"));
}

}  // namespace

TEST_CASE("a task that throws on one rank: it rethrows there, the others raise hetero::error", "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const std::string what = "injected failure " + std::to_string(faults::shared_random(1, 1000000));

  SECTION("the throwing task notifies every rank") {
    std::optional<hetero::task_graph<>> graph(std::in_place, hetero::task_options{.workers = workers});
    auto e = graph->remote_event("E");
    std::atomic<int> read{0};
    const auto o = faults::attempt([&] {
      graph->spawn("fails", hetero::on(late), hetero::out(e).to(hetero::rank_set::all()),
                   [&] { throw std::runtime_error(what); });
      graph->spawn("reads", hetero::in(e), [&] { ++read; });
      graph->wait();
    });
    faults::report("throws", "task wait (notifying)", o);
    INFO(o.text);
    if (me == late) {
      CHECK(o.kind == "other");  // the task's own std::runtime_error
      CHECK(o.text == what);
    } else {
      CHECK(o.kind == "error");
      CHECK_THAT(o.text, ContainsSubstring("a task failed on another rank of the task graph"));
    }
    CHECK(read.load() == 0);  // skipped on every rank
    graph.reset();
    check_fresh_graph();
  }
  SECTION("the throwing task notifies nobody: the other ranks learn it in wait()'s barrier") {
    hetero::task_graph graph({.workers = workers});
    std::atomic<int> ran{0};
    const auto o = faults::attempt([&] {
      graph.spawn("fails", hetero::on(late), [&] { throw std::runtime_error(what); });
      graph.spawn("independent", [&] { ++ran; });
      graph.wait();
    });
    faults::report("throws", "task wait (barrier)", o);
    INFO(o.text);
    if (me == late) {
      CHECK(o.kind == "other");
      CHECK(o.text == what);
    } else {
      CHECK(o.kind == "error");
      CHECK_THAT(o.text, ContainsSubstring("a task failed on another rank"));
    }
    CHECK(ran.load() <= 1);
    check_fresh_graph();
  }
}

TEST_CASE("a notification whose send fails to start: deadlock_error on every rank, naming MPI's error",
          "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  std::optional<hetero::task_graph<>> graph(std::in_place, hetero::task_options{.workers = workers});
  auto e = graph->remote_event("E");
  std::atomic<int> wrote{0}, read{0};
  const auto o = faults::attempt([&] {
    if (me == late) faults::fail_next_isend();  // the writer's first notification
    graph->spawn("writes", hetero::on(late), hetero::out(e).to(hetero::rank_set::all()), [&] { ++wrote; });
    graph->spawn("reads", hetero::in(e), [&] { ++read; });
    graph->wait();
  });
  faults::report("send fails", "task wait (notifying)", o);
  // The readers elsewhere wait for a notification that never left: the timeout ends the graph
  // on every rank, and every rank names what failed on the writer's (its report, sent through
  // the channel whose send failed, arrived).
  check_deadlock(o);
  CHECK(wrote.load() == (me == late ? 1 : 0));
  CHECK_THAT(o.text, ContainsSubstring("failed here first: MPI_Isend failed") && !ContainsSubstring("no report"));
  CHECK(read.load() <= 1);
  check_refuses(*graph);
  graph.reset();
  check_fresh_graph();
}

TEST_CASE("a tile whose send fails to start: its owner raises MPI's error and its readers end at once",
          "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank();
  if (p < 2) return;
  // Through MPI (no shared copies), as between nodes: the readers' receives are posted when
  // the send fails, and an empty message from the owner ends them, before any timeout.
  constexpr std::int64_t n = 1024;
  using tile = Kokkos::View<double*, Kokkos::HostSpace>;
  tile mine("tile", n);
  std::optional<hetero::task_graph<>> graph(std::in_place,
                                            hetero::task_options{.workers = workers, .node_shared_copies = false});
  auto t = graph->tiles(
      "T", {1}, {n}, [](std::int64_t) { return 0; }, [&](std::int64_t) { return mine; });
  std::atomic<int> read{0};
  const auto o = faults::attempt([&] {
    // The tile's first send (the owner's notifications are a few dozen bytes).
    if (me == 0) faults::fail_next_isend(static_cast<int>(n * sizeof(double)));
    graph->spawn("write", hetero::writes(t(0)), [](auto v) {
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = 1;
    });
    for (int r = 1; r < p; ++r) graph->spawn("read", hetero::on(r), hetero::reads(t(0)), [&](auto) { ++read; });
    graph->wait();
  });
  faults::report("tile send fails", "task wait (tile)", o);
  INFO(o.text);
  if (me == 0) {
    CHECK(o.kind == "error");  // hetero::mpi_error
    CHECK_THAT(o.text, ContainsSubstring("MPI_Isend failed"));
  } else {
    CHECK(o.kind == "error");
    CHECK_THAT(o.text, ContainsSubstring("failed on another rank"));
  }
  CHECK(o.seconds < faults::timeout_seconds());  // no rank waited for its timeout
  // Only the first send fails: on 3 ranks the other reader may get its version and read it.
  CHECK(read.load() <= (p > 2 ? 1 : 0));
  graph.reset();
  check_fresh_graph();
}

// The reader told nobody that its receive of a tile failed: the owner's message (the tile, or
// its empty one where its send failed too) waited in MPI, and the next run's receive of the
// tile took it: a move cancelled with no task failing, then each version read one late.
TEST_CASE("a tile receive that fails to start: the same graph moves the tile right in the runs after",
          "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank();
  if (p < 2) return;
  const bool send_fails_too = GENERATE(false, true);
  constexpr std::int64_t n = 1024;  // 8 KiB: more than the graph's own messages
  using tile = Kokkos::View<double*, Kokkos::HostSpace>;
  tile mine("tile", n);
  hetero::task_graph graph({.workers = workers, .node_shared_copies = false});  // through MPI
  auto t = graph.tiles(
      "T", {1}, {n}, [](std::int64_t) { return 0; }, [&](std::int64_t) { return mine; });
  const auto o = faults::attempt([&] {
    if (me == 0 && send_fails_too) faults::fail_next_isend(static_cast<int>(n * sizeof(double)));
    if (me == 1) faults::fail_next_irecv(static_cast<int>(n * sizeof(double)));
    graph.spawn("write", hetero::writes(t(0)), [](auto v) {
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = -1;
    });
    graph.spawn("read", hetero::on(1), hetero::reads(t(0)), [](auto) {});
    graph.wait();
  });
  faults::report(send_fails_too ? "tile send and receive fail" : "tile receive fails", "task wait (tile)", o);
  INFO(o.text);
  CHECK(o.kind == "error");
  if (me == 1) CHECK_THAT(o.text, ContainsSubstring("MPI_Irecv failed"));
  if (me == 0 && send_fails_too) CHECK_THAT(o.text, ContainsSubstring("MPI_Isend failed"));
  CHECK(o.seconds < faults::timeout_seconds());
  for (int round = 0; round < 3; ++round) {  // each version reaches the reader whole
    INFO("round " << round);
    const auto base = static_cast<double>(faults::shared_random(1, 1000000));
    std::atomic<int> read{0}, wrong{0};
    graph.spawn("write", hetero::writes(t(0)), [base](auto v) {
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = base + static_cast<double>(i);
    });
    graph.spawn("read", hetero::on(1), hetero::reads(t(0)), [&, base](auto v) {
      ++read;
      for (std::size_t i = 0; i < v.extent(0); ++i) wrong += v(i) != base + static_cast<double>(i) ? 1 : 0;
    });
    REQUIRE_NOTHROW(graph.wait());
    CHECK(read.load() == (me == 1 ? 1 : 0));
    CHECK(wrong.load() == 0);
  }
}

TEST_CASE("a rank that never constructs the graph: the others give up in its set-up", "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const faults::case_comm ranks;
  const auto o = faults::attempt([&] {
    if (me == late) return;
    hetero::task_graph graph({.workers = workers, .comm = ranks.comm});
    graph.wait();
  });
  faults::report("skip", "task graph construction", o);
  if (me == late) {
    CHECK(o.kind == "none");
  } else {
    INFO(o.text);
    REQUIRE(o.kind == "deadlock_error");
    CHECK_THAT(o.text, ContainsSubstring("hetero::task_graph construction (communicator set-up)") &&
                           ContainsSubstring(faults::limit_text()) && ContainsSubstring("HETERO_WAIT_TIMEOUT"));
  }
  check_fresh_graph();  // the world's graphs are not disturbed
}

TEST_CASE("a rank that returns early: the ranks that wait for it raise deadlock_error", "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;

  SECTION("the rank leaves the graph before declaring or waiting") {
    std::optional<hetero::task_graph<>> graph(std::in_place, hetero::task_options{.workers = workers});
    auto e = graph->remote_event("E");
    std::atomic<int> read{0};
    const auto o = faults::attempt([&] {
      if (me == late) {
        graph.reset();  // returns: the graph is destroyed without a task
        return;
      }
      graph->spawn("writes", hetero::on(late), hetero::out(e).to(hetero::rank_set::all()), [] {});
      graph->spawn("reads", hetero::in(e), [&] { ++read; });
      graph->wait();
    });
    faults::report("leaves", "task wait", o);
    if (me == late) {
      CHECK(o.kind == "none");
    } else {
      check_deadlock(o);
      check_stuck_here(o);
      CHECK_THAT(o.text, ContainsSubstring("rank " + std::to_string(late) +
                                           ": no report (it is not waiting on the graph in wait()"));
      CHECK_THAT(o.text, ContainsSubstring("notification of E (write #0 by task 'writes' on rank(s) {" +
                                           std::to_string(late) + "}): 0 of 1 message(s) received"));
      CHECK_THAT(o.text, ContainsSubstring("'reads' in(E) waits for 1 unfinished dependency"));
      CHECK(read.load() == 0);
      check_refuses(*graph);
    }
    graph.reset();
    check_fresh_graph();
  }
  SECTION("the rank skips the task whose notification the others wait for") {
    hetero::task_graph graph({.workers = workers});
    auto e = graph.remote_event("E");
    std::atomic<int> read{0};
    const auto o = faults::attempt([&] {
      if (me != late) graph.spawn("writes", hetero::on(late), hetero::out(e).to(hetero::rank_set::all()), [] {});
      graph.spawn("reads", hetero::on(hetero::rank_set::range(0, late)), hetero::in(e), [&] { ++read; });
      graph.wait();
    });
    faults::report("skips a task", "task wait", o);
    check_deadlock(o);
    CHECK_THAT(o.text, ContainsSubstring("rank " + std::to_string(late)) &&
                           ContainsSubstring("no pending task (its part of the graph finished; it waits in wait() "
                                             "for the other ranks)"));
    CHECK_THAT(o.text, !ContainsSubstring("no report"));
    CHECK(read.load() == 0);
    check_refuses(graph);
    check_fresh_graph();
  }
  SECTION("the rank skips a collective remote_events") {
    hetero::task_graph graph({.workers = workers});
    std::atomic<int> ran{0};
    const auto o = faults::attempt([&] {
      if (me != late) (void)graph.remote_events("F", 4);
      graph.spawn("local", [&] { ++ran; });
      graph.wait();
    });
    faults::report("skips remote_events", "task remote_events", o);
    INFO(o.text);
    REQUIRE(o.kind == "deadlock_error");
    if (me == late) {  // it waited in wait()'s barrier for ranks that never came
      check_deadlock(o);
      check_stuck_here(o);
      CHECK(ran.load() == 1);
    } else {
      CHECK_THAT(o.text, ContainsSubstring("hetero::task_graph::remote_events('F'): waited") &&
                             ContainsSubstring(faults::limit_text()) && ContainsSubstring("HETERO_WAIT_TIMEOUT") &&
                             ContainsSubstring("on a communicator of " + std::to_string(p) + " rank(s) as rank " +
                                               std::to_string(me)));
      CHECK(ran.load() == 0);
      CHECK_THROWS_AS(graph.remote_events("G", 1), hetero::runtime_error);
    }
    check_refuses(graph);
    check_fresh_graph();
  }
}

TEST_CASE("a rank that sleeps past the timeout: the others raise deadlock_error, so does the sleeper",
          "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;

  SECTION("before declaring") {
    hetero::task_graph graph({.workers = workers});
    auto e = graph.remote_event("E");
    std::atomic<int> wrote{0}, read{0};
    const auto o = faults::attempt([&] {
      if (me == late) faults::oversleep();
      graph.spawn("writes", hetero::on(late), hetero::out(e).to(hetero::rank_set::all()), [&] { ++wrote; });
      graph.spawn("reads", hetero::in(e), [&] { ++read; });
      graph.wait();
    });
    faults::report("sleeps 1.5 s", "task wait (before declaring)", o);
    check_deadlock(o);
    if (me == late) {  // its tasks ran; the others' reports ended its wait
      CHECK_THAT(o.text, ContainsSubstring("another rank found that its tasks made no progress"));
      CHECK(wrote.load() == 1);
    } else {
      check_stuck_here(o);
      CHECK(read.load() == 0);
    }
    check_refuses(graph);
    check_fresh_graph();
  }
  SECTION("in a task body") {
    hetero::task_graph graph({.workers = workers});
    auto e = graph.remote_event("E");
    std::atomic<int> read{0};
    const auto o = faults::attempt([&] {
      graph.spawn("sleeps", hetero::on(late), hetero::out(e).to(hetero::rank_set::all()),
                  [] { faults::oversleep(); });
      graph.spawn("reads", hetero::in(e), [&] { ++read; });
      graph.wait();
    });
    faults::report("sleeps 1.5 s", "task wait (in a body)", o);
    check_deadlock(o);
    if (me != late) {
      check_stuck_here(o);
      CHECK(read.load() == 0);
    } else {  // a running task is progress: the sleeper ends on the others' reports
      CHECK_THAT(o.text, ContainsSubstring("another rank found that its tasks made no progress"));
    }
    check_refuses(graph);
    check_fresh_graph();
  }
}

TEST_CASE("mismatched counts and roots of a task graph", "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(1, 16));

  SECTION("counts: remote_events of another shape on one rank") {
    hetero::task_graph graph({.workers = workers});
    const auto o = faults::attempt([&] { (void)graph.remote_events("E", me == late ? n + 1 : n); });
    faults::report("counts", "task remote_events", o);
    INFO(o.text);
    CHECK(o.kind == "invalid_argument");
    CHECK_THAT(o.text, ContainsSubstring("remote_events('E', ...) was declared differently on different ranks"));
    check_fresh_graph();
  }
  SECTION("roots: the ranks disagree on which rank runs the writer") {
    hetero::task_graph graph({.workers = workers});
    auto e = graph.remote_events("E", n);
    const auto i = static_cast<std::int64_t>(faults::shared_random(0, static_cast<long long>(n) - 1));
    std::atomic<int> wrote{0}, read{0};
    const auto o = faults::attempt([&] {
      const int writer = me == late ? 0 : late;  // the late rank thinks rank 0 writes
      graph.spawn("writes", hetero::on(writer), hetero::out(e(i)).to(hetero::rank_set::all()), [&] { ++wrote; });
      graph.spawn("reads", hetero::in(e(i)), [&] { ++read; });
      graph.wait();
    });
    faults::report("roots", "task wait", o);
    check_deadlock(o);
    CHECK(read.load() == 0);
    CHECK(wrote.load() == 0);  // rank 0 and the late rank each wait for the other's write
    CHECK_THAT(o.text,
               ContainsSubstring("notification of E[" + std::to_string(i) + "] (write #0 by task 'writes'"));
    check_refuses(graph);
    check_fresh_graph();
  }
}

TEST_CASE("a graph's own no-progress timeout is named, and a task whose subgraph has not finished is reported",
          "[faults][task]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  using graph_type = hetero::task_graph<>;
  // Rank 0 waits for an operation that never completes; on the late rank another worker runs a
  // task whose inner task sleeps past the limit when rank 0's report comes (the declaring
  // thread comes to wait() only once that worker took the task, so it does not run it itself).
  struct never {
    bool test() const noexcept { return false; }
  };
  std::optional<graph_type> graph(
      std::in_place,
      hetero::task_options{.workers = workers, .no_progress_timeout = std::chrono::duration<double>(1.0)});
  auto done = graph->event("done");
  std::atomic<int> inner{0};
  const auto o = faults::attempt([&] {
    // (On the late rank too: a rank polls MPI, and so sees the others' reports, while it waits
    // for something from outside; a rank only running tasks sees them when its tasks are done.)
    if (me == 0 || me == late) graph->adopt(hetero::out(done), never{}, "never completes");
    if (me == late) {
      graph->spawn("outer", [&](graph_type::subgraph_type& sg) {
        sg.spawn("inner", [&] {
          faults::oversleep();
          ++inner;
        });
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    graph->wait();
  });
  faults::report("sleeps 1.5 s (inner task)", "task wait (own timeout)", o);
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring("the limit is this object's own (task_options::no_progress_timeout): raise "
                                       "it there") &&
                         ContainsSubstring("without it the graph would inherit hetero's wait timeout: "
                                           "HETERO_WAIT_TIMEOUT"));
  CHECK_THAT(o.text, ContainsSubstring("adopted operation 'never completes' out(done): not complete"));
  CHECK_THAT(o.text,
             ContainsSubstring("task #2 'outer' has no unfinished dependency: it is queued, or its body "
                               "ran and the inner tasks of its subgraph or composed recording have not all "
                               "finished"));
  check_refuses(*graph);
  graph.reset();
  CHECK(inner.load() == (me == late ? 1 : 0));  // the graph's destructor let the running inner task finish
}

// Recorded task graphs: declared once, replayed many times, on one rank and across ranks, with
// the same dependency checks as the graphs declared and run at once.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <stdexcept>

#include "random.hpp"
#include "random_program.hpp"
#include "rounds_program.hpp"
#include "shared_slots.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::testing::world_rank;

TEST_CASE("a recorded random graph replays in dependency order every time", "[task]") {
  const int workers = GENERATE(1, 2, 3);
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(20 + workers));
  hetero::testing::random_program program(rng, 800, 8);
  hetero::task_graph graph({.workers = workers, .comm = MPI_COMM_SELF});
  const auto e = graph.events("E", program.events());
  const hetero::task_recording recording =
      graph.record([&] { program.declare(graph, e, [](int t) { return t % 7 == 3; }); });
  CHECK(recording.tasks() == 800);
  CHECK(program.wrong_run_counts() == 800);  // recording runs nothing
  for (int replay = 0; replay < 15; ++replay) {
    INFO("workers " << workers << ", replay " << replay);
    program.reset();
    graph.run(recording);
    CHECK(program.wrong_run_counts() == 0);
    CHECK(program.violated_dependencies() == 0);
    CHECK(program.bad_reads() == 0);
    CHECK(program.final_values_match());
  }
  CHECK(recording.replays() == 15);
}

TEST_CASE("tasks declared between replays are ordered by wait(), and recordings do not disturb them", "[task]") {
  hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF});
  auto e = graph.event("E");
  int value = 0;
  graph.spawn(hetero::out(e), [&] { value = 1; });
  const auto twice = graph.record([&] { graph.spawn(hetero::inout(e), [&] { value *= 2; }); });
  graph.wait();  // the recording did not link to the task declared before it
  CHECK(value == 1);
  graph.run(twice);
  graph.spawn(hetero::inout(e), [&] { value += 1; });
  graph.wait();
  graph.run(twice);
  CHECK(value == 6);
}

TEST_CASE("a recorded cross-rank program replays with fresh notifications every time", "[task][mpi]") {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  hetero::testing::shared_slots slots(6);
  INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window"));
  auto rng = hetero::testing::rng(31);
  hetero::testing::rounds_program program(rng, p, 6, 6);
  hetero::task_graph graph({.workers = 2});
  auto e = graph.remote_events("E", program.events());
  auto ack = graph.remote_events("ACK", program.events(), p);
  std::atomic<int> bad{0}, ran{0};
  const auto recording = graph.record([&] { program.declare(graph, e, ack, slots, bad, ran); });
  for (int replay = 1; replay <= 4; ++replay) {
    graph.run(recording);
    CHECK(ran.load() == replay * program.tasks_of(world_rank()));
  }
  CHECK(bad.load() == 0);
}

TEST_CASE("an exception in a replay reaches wait() and the recording replays again", "[task]") {
  hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF});
  auto e = graph.event("E");
  bool fail = true;
  int after = 0;
  const auto recording = graph.record([&] {
    graph.spawn(hetero::out(e), [&] {
      if (fail) throw std::runtime_error("replay failed");
    });
    graph.spawn(hetero::in(e), [&] { ++after; });
  });
  CHECK_THROWS_WITH(graph.run(recording), "replay failed");
  CHECK(after == 0);
  fail = false;
  graph.run(recording);
  CHECK(after == 1);
}

TEST_CASE("replay and record refuse what they cannot do", "[task]") {
  hetero::task_graph graph({.workers = 1, .comm = MPI_COMM_SELF});
  hetero::task_graph other({.workers = 1, .comm = MPI_COMM_SELF});
  auto e = graph.event("E");
  // Not initialised: Kokkos' fill kernel on OpenMP is a false race for ThreadSanitizer (libgomp's
  // barriers are not instrumented), and this test runs under it.
  auto values = graph.data("values", Kokkos::View<double*, Kokkos::HostSpace>(
                                         Kokkos::view_alloc("values", Kokkos::WithoutInitializing), 4));
  const auto recording = graph.record([&] { graph.spawn(hetero::out(e), [] {}); });
  const auto foreign = other.record([&] { other.spawn([] {}); });
  CHECK_THROWS_WITH(graph.replay(hetero::task_recording{}), ContainsSubstring("empty task_recording"));
  CHECK_THROWS_WITH(graph.replay(foreign), ContainsSubstring("recording made by another task_graph"));
  graph.spawn([] {});
  CHECK_THROWS_WITH(graph.replay(recording), ContainsSubstring("needs an idle graph: call wait()"));
  graph.wait();
  graph.replay(recording);
  CHECK_THROWS_WITH(graph.replay(recording), ContainsSubstring("needs an idle graph"));
  CHECK_THROWS_WITH(graph.spawn([] {}), ContainsSubstring("spawn during a replay: call wait() first"));
  // Replayed tasks are not tracked per event: wait(e) returned at once, before the writer ran.
  CHECK_THROWS_WITH(graph.wait(e), ContainsSubstring("wait(event) during a replay: call wait() first"));
  CHECK_THROWS_WITH(graph.wait(values), ContainsSubstring("wait(data) during a replay: call wait() first"));
  graph.wait();
  CHECK_THROWS_WITH(graph.record([&] { graph.wait(); }), ContainsSubstring("wait inside record()"));
  CHECK_THROWS_WITH(graph.record([&] { (void)graph.record([] {}); }), ContainsSubstring("recordings do not nest"));
  CHECK_THROWS_WITH(graph.record([&] { graph.adopt(hetero::out(e), hetero::mpi_request(MPI_REQUEST_NULL)); }),
                    ContainsSubstring("adopt cannot be recorded"));
  graph.run(recording);  // still fine
}

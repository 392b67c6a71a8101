// Recordings composed as tasks (hetero::compose): declared as they are and inside an outer
// recording that replays them, next to tasks with subgraphs; runs of one recording never
// overlap; exceptions; what compose refuses.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <stdexcept>

#include "local_options.hpp"
#include "nested_program.hpp"
#include "random.hpp"
#include "random_program.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using graph_type = hetero::task_graph<Kokkos::Serial>;
using subgraph_type = graph_type::subgraph_type;

using task_test::local;

bool device_task(int t) { return t % 9 == 4; }

}  // namespace

TEST_CASE("a composed recording runs as one task, between its predecessors and successors", "[task][compose]") {
  const int workers = GENERATE(1, 2, 3);
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(300 + workers));
  hetero::testing::random_program program(rng, 300, 8);
  graph_type graph(local(workers));
  const auto e = graph.events("E", program.events());
  const auto inner = graph.record([&] { program.declare(graph, e, device_task); });
  auto x = graph.event("x"), y = graph.event("y");
  for (int round = 0; round < 3; ++round) {
    INFO("workers " << workers << ", round " << round);
    program.reset();
    int before = -1, after = -1;
    graph.spawn("before", hetero::out(x), [&] { before = program.wrong_run_counts(); });
    graph.spawn("step", hetero::in(x), hetero::out(y), hetero::compose(inner));
    graph.spawn("after", hetero::in(y), [&] { after = program.wrong_run_counts(); });
    graph.wait();
    CHECK(before == program.tasks());  // nothing of the recording had run
    CHECK(after == 0);                 // all of it had
    CHECK(program.violated_dependencies() == 0);
    CHECK(program.bad_reads() == 0);
    CHECK(program.final_values_match());
  }
  // Replayed by the graph itself in between, then composed again.
  program.reset();
  graph.run(inner);
  CHECK(program.wrong_run_counts() == 0);
  program.reset();
  graph.spawn(hetero::compose(inner));
  graph.wait();
  CHECK(program.wrong_run_counts() == 0);
}

TEST_CASE("an outer recording replays its composed recordings and subgraph tasks every time", "[task][compose]") {
  const int workers = GENERATE(1, 2, 3);
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(400 + workers));
  hetero::testing::random_program flat(rng, 200, 6);
  hetero::testing::nested_program nested(rng, {.tasks = 60, .events = 5, .depth = 2, .inner_tasks = 6});
  graph_type graph(local(workers));
  const auto e = graph.events("E", flat.events());
  const auto flat_recording = graph.record([&] { flat.declare(graph, e, device_task); });
  const auto nested_recording = graph.record([&] { nested.declare(graph); });
  auto x = graph.event("x"), y = graph.event("y");
  int flat_seen = -1, nested_seen = -1, inner_seen = -1;
  const auto outer = graph.record([&] {
    graph.spawn("flat", hetero::out(x), hetero::compose(flat_recording));
    graph.spawn("nested", hetero::in(x), hetero::out(y), hetero::compose(nested_recording));
    graph.spawn("macro", hetero::in(y), [&](subgraph_type& sg) {
      auto f = sg.event("f");
      sg.spawn(hetero::out(f), [&] { flat_seen = flat.wrong_run_counts(); });
      sg.spawn(hetero::in(f), [&] { nested_seen = nested.wrong_run_counts(); });
      sg.spawn(hetero::in(f), [&](subgraph_type& deeper) { deeper.spawn([&] { inner_seen = 1; }); });
    });
  });
  CHECK(outer.tasks() == 3);
  for (int replay = 0; replay < 5; ++replay) {
    INFO("workers " << workers << ", replay " << replay);
    flat.reset();
    nested.reset();
    flat_seen = nested_seen = inner_seen = -1;
    graph.run(outer);
    CHECK(flat_seen == 0);
    CHECK(nested_seen == 0);
    CHECK(inner_seen == 1);
    CHECK(flat.violated_dependencies() == 0);
    CHECK(flat.bad_reads() == 0);
    CHECK(nested.wrong_run_counts() == 0);
    CHECK(nested.violated_dependencies() == 0);
    CHECK(nested.bad_reads() == 0);
    CHECK(nested.final_values_match());
  }
  CHECK(outer.replays() == 5);
}

TEST_CASE("runs of one recording never overlap, however it is composed", "[task][compose]") {
  const int workers = GENERATE(1, 2, 3);
  graph_type graph(local(workers));
  auto link = graph.event("link");
  std::atomic<bool> in_run{false};
  std::atomic<int> overlaps{0};
  int steps = 0;  // plain: a missing order between runs is a race
  const auto step = graph.record([&] {
    graph.spawn("first", hetero::out(link), [&] {
      if (in_run.exchange(true)) overlaps.fetch_add(1);
      ++steps;
    });
    for (int k = 0; k < 6; ++k) graph.spawn("middle", hetero::inout(link), [&] { ++steps; });
    graph.spawn("last", hetero::inout(link), [&] {
      ++steps;
      in_run.store(false);
    });
  });
  // No clause orders these: the recording itself does.
  const auto twice = graph.record([&] {
    graph.spawn(hetero::compose(step));
    graph.spawn(hetero::compose(step));
  });
  const auto outer = graph.record([&] {
    for (int k = 0; k < 4; ++k) {
      graph.spawn(hetero::compose(twice));
      graph.spawn(hetero::compose(step));
    }
  });
  for (int k = 0; k < 10; ++k) graph.spawn(hetero::compose(step));
  graph.wait();
  CHECK(steps == 80);
  for (int replay = 0; replay < 3; ++replay) graph.run(outer);
  CHECK(steps == 80 + 3 * 12 * 8);
  CHECK(overlaps.load() == 0);
}

TEST_CASE("an exception in a composed recording reaches wait(), and the recording composes again",
          "[task][compose]") {
  graph_type graph(local(2));
  auto e = graph.event("E");
  bool fail = true;
  int ran = 0, after = 0;
  const auto inner = graph.record([&] {
    graph.spawn(hetero::out(e), [&] {
      if (fail) throw std::runtime_error("composed task failed");
    });
    graph.spawn(hetero::in(e), [&] { ++ran; });
  });
  auto x = graph.event("x");
  graph.spawn(hetero::out(x), hetero::compose(inner));
  graph.spawn(hetero::in(x), [&] { ++after; });
  CHECK_THROWS_WITH(graph.wait(), "composed task failed");
  CHECK(ran == 0);
  CHECK(after == 0);
  fail = false;
  graph.spawn(hetero::out(x), hetero::compose(inner));
  graph.spawn(hetero::in(x), [&] { after += ran; });
  graph.wait();
  CHECK(after == 1);
}

TEST_CASE("an empty recording composed finishes its task at once", "[task][compose]") {
  graph_type graph(local(2));
  const auto nothing = graph.record([] {});
  auto x = graph.event("x");
  int order = 0, after = -1;
  graph.spawn(hetero::out(x), [&] { order = 1; });
  graph.spawn(hetero::inout(x), hetero::compose(nothing));
  graph.spawn(hetero::in(x), [&] { after = order; });
  graph.wait();
  CHECK(after == 1);
}

TEST_CASE("compose refuses empty recordings and recordings of other graphs", "[task][compose]") {
  graph_type graph(local(1));
  graph_type other(local(1));
  const auto foreign = other.record([&] { other.spawn([] {}); });
  CHECK_THROWS_AS(hetero::compose(hetero::task_recording{}), hetero::invalid_argument);
  CHECK_THROWS_WITH(hetero::compose(hetero::task_recording{}),
                    ContainsSubstring("compose(recording) of an empty task_recording"));
  CHECK_THROWS_AS(graph.spawn(hetero::compose(foreign)), hetero::invalid_argument);
  CHECK_THROWS_WITH(graph.spawn(hetero::compose(foreign)),
                    ContainsSubstring("compose(recording) of a recording made by another task_graph"));
  int ran = 0;
  const auto mine = graph.record([&] { graph.spawn([&] { ++ran; }); });
  graph.spawn([&](subgraph_type&) { graph.spawn(hetero::compose(mine)); });
  CHECK_THROWS_WITH(graph.wait(), ContainsSubstring("compose(recording)) called from inside a task"));
  graph.spawn(hetero::compose(mine));  // the graph goes on
  graph.wait();
  CHECK(ran == 1);
}

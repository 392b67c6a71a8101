// The priority clause: ready tasks with a priority above 0 run before the others, the highest
// first and, within a priority, in declaration order; a finishing task's successor does not
// overtake a queued task that goes before it. With one worker (the thread in wait()) the order
// is deterministic and checked task by task; with more, random programs with random priorities
// still respect every dependency.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "local_options.hpp"
#include "random.hpp"
#include "random_program.hpp"

namespace {

using task_test::local;

struct declared {
  int index;
  int priority;
};

// What one worker should run: the tasks with a priority above 0 by priority (highest first),
// then declaration order; the others after them.
std::vector<int> expected_priority_order(std::vector<declared> tasks) {
  std::erase_if(tasks, [](const declared& t) { return t.priority <= 0; });
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const declared& a, const declared& b) { return a.priority > b.priority; });
  std::vector<int> order;
  for (const auto& t : tasks) order.push_back(t.index);
  return order;
}

}  // namespace

TEST_CASE("ready tasks run by priority, highest first, and in declaration order within one", "[task]") {
  auto rng = hetero::testing::rng(41);
  std::uniform_int_distribution<int> pick(-1, 3);
  std::vector<declared> tasks;
  for (int t = 0; t < 60; ++t) tasks.push_back({t, pick(rng)});  // few ordinary tasks: no throttle

  hetero::task_graph graph(local(1));
  std::vector<int> ran;
  const auto declare = [&] {
    for (const auto& t : tasks) graph.spawn(hetero::priority(t.priority), [&ran, t] { ran.push_back(t.index); });
  };
  const std::vector<int> expected = expected_priority_order(tasks);
  const std::size_t prioritized = expected.size();
  INFO(prioritized << " of " << tasks.size() << " tasks with a priority above 0");
  REQUIRE(prioritized > 0);
  REQUIRE(prioritized < tasks.size());

  const auto check = [&] {
    REQUIRE(ran.size() == tasks.size());
    CHECK(std::vector<int>(ran.begin(), ran.begin() + static_cast<std::ptrdiff_t>(prioritized)) == expected);
    std::vector<int> rest(ran.begin() + static_cast<std::ptrdiff_t>(prioritized), ran.end());
    std::sort(rest.begin(), rest.end());
    for (int index : rest) CHECK(tasks[static_cast<std::size_t>(index)].priority <= 0);
    CHECK(std::adjacent_find(rest.begin(), rest.end()) == rest.end());  // each ran once
  };

  SECTION("declared and run") {
    declare();
    CHECK(ran.empty());  // one worker: nothing runs before wait()
    graph.wait();
    check();
  }
  SECTION("recorded and replayed") {
    const hetero::task_recording recording = graph.record(declare);
    for (int replay = 0; replay < 3; ++replay) {
      ran.clear();
      graph.run(recording);
      check();
    }
  }
}

TEST_CASE("a released successor does not overtake a queued task that goes before it", "[task]") {
  // A writes e, B is independent, C reads e (A's successor); declared A, B, C with these
  // priorities and run by one worker: the order they ran in.
  const auto run_order = [](int a, int b, int c) {
    hetero::task_graph graph(local(1));
    const auto e = graph.event("e");
    std::vector<char> ran;
    const auto task = [&ran](char name) { return [&ran, name] { ran.push_back(name); }; };
    graph.spawn(hetero::priority(a), hetero::out(e), task('A'));
    graph.spawn(hetero::priority(b), task('B'));
    graph.spawn(hetero::priority(c), hetero::in(e), task('C'));
    graph.wait();
    return ran;
  };
  // The older task of the same priority runs before the successor.
  CHECK(run_order(1, 1, 1) == std::vector<char>{'A', 'B', 'C'});
  // A successor of a higher priority runs before the older task.
  CHECK(run_order(1, 1, 2) == std::vector<char>{'A', 'C', 'B'});
  // An ordinary successor waits for the queued priority tasks.
  CHECK(run_order(1, 1, 0) == std::vector<char>{'A', 'B', 'C'});
}

TEST_CASE("random programs with random priorities respect every dependency", "[task]") {
  const int workers = GENERATE(1, 2, 3);
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(42 + workers));
  hetero::testing::random_program program(rng, 1500, 10);
  std::vector<int> priority(static_cast<std::size_t>(program.tasks()));
  std::uniform_int_distribution<int> pick(0, 3);
  for (int& p : priority) p = pick(rng);
  hetero::task_graph graph(local(workers));
  const auto e = graph.events("E", program.events());
  program.declare(
      graph, e, [](int) { return false; }, [&](int t) { return priority[static_cast<std::size_t>(t)]; });
  graph.wait();
  INFO("workers " << workers << ", " << program.dependency_count() << " dependencies");
  CHECK(program.wrong_run_counts() == 0);
  CHECK(program.violated_dependencies() == 0);
  CHECK(program.bad_reads() == 0);
  CHECK(program.final_values_match());
}

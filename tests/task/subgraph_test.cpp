// Tasks whose bodies declare subgraphs: random nested programs (two and three levels, inner
// device tasks) against their sequential meaning on 1-3 workers, declared and replayed; every
// worker inside a task with a subgraph at once; exceptions and cancellation inside subgraphs;
// and what subgraphs refuse.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "local_options.hpp"
#include "nested_program.hpp"
#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using graph_type = hetero::task_graph<Kokkos::Serial>;
using subgraph_type = graph_type::subgraph_type;

using task_test::local;

// Waits (up to 20 s) until `count` reaches `target`; false on timeout.
bool await(const std::atomic<int>& count, int target) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (count.load() < target) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("random nested programs run in dependency order at every level", "[task][subgraph]") {
  const int workers = GENERATE(1, 2, 3);
  const int depth = GENERATE(1, 2);  // two and three levels of graphs
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(100 + 10 * depth + workers));
  hetero::testing::nested_program program(rng, {.tasks = 300, .events = 6, .depth = depth, .inner_tasks = 10});
  INFO("workers " << workers << ", depth " << depth << ", " << program.bodies() << " bodies, "
                  << program.subgraphs() << " subgraphs");
  REQUIRE(program.subgraphs() > 0);
  graph_type graph(local(workers));
  program.declare(graph);
  graph.wait();
  CHECK(program.wrong_run_counts() == 0);
  CHECK(program.violated_dependencies() == 0);
  CHECK(program.bad_reads() == 0);
  CHECK(program.final_values_match());
}

TEST_CASE("a recorded graph with subgraph tasks declares them afresh in every replay", "[task][subgraph]") {
  const int workers = GENERATE(1, 2, 3);
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(200 + workers));
  hetero::testing::nested_program program(rng, {.tasks = 200, .events = 6, .depth = 2, .inner_tasks = 8});
  graph_type graph(local(workers));
  const auto recording = graph.record([&] { program.declare(graph); });
  CHECK(program.wrong_run_counts() == program.bodies());  // recording runs nothing
  for (int replay = 0; replay < 6; ++replay) {
    INFO("workers " << workers << ", replay " << replay);
    program.reset();
    graph.run(recording);
    CHECK(program.wrong_run_counts() == 0);
    CHECK(program.violated_dependencies() == 0);
    CHECK(program.bad_reads() == 0);
    CHECK(program.final_values_match());
  }
}

TEST_CASE("every worker inside a task with a subgraph at once: the inner tasks still run", "[task][subgraph]") {
  const int workers = GENERATE(1, 2, 3);
  const int macros = 16 * workers;
  constexpr int inner = 64;
  graph_type graph(local(workers));
  const auto done = graph.events("done", macros);
  std::vector<int> chain_length(static_cast<std::size_t>(macros), 0);  // plain: written by inner tasks
  std::vector<int> seen(static_cast<std::size_t>(macros), -1);
  std::atomic<int> inside{0}, most_inside{0}, ticket{0}, inner_ran{0};
  for (int m = 0; m < macros; ++m) {
    graph.spawn("macro", hetero::out(done(m)), [&, m](subgraph_type& sg) {
      const int now = inside.fetch_add(1) + 1;
      int seen_most = most_inside.load();
      while (now > seen_most && !most_inside.compare_exchange_weak(seen_most, now)) {
      }
      // The first `workers` bodies meet: every worker is inside one before any inner task runs.
      if (ticket.fetch_add(1) < workers) (void)await(most_inside, workers);
      auto link = sg.event("link");
      auto independent = sg.events("free", 4);
      for (int k = 0; k < inner; ++k) {
        if (k % 4 == 3) {
          sg.spawn("free", hetero::out(independent(k % 16 / 4)), [&] { inner_ran.fetch_add(1); });
        } else {
          sg.spawn("chain", hetero::inout(link), [&, m] {
            ++chain_length[static_cast<std::size_t>(m)];
            inner_ran.fetch_add(1);
          });
        }
      }
      inside.fetch_sub(1);
    });
    graph.spawn("after", hetero::in(done(m)),
                [&, m] { seen[static_cast<std::size_t>(m)] = chain_length[static_cast<std::size_t>(m)]; });
  }
  graph.wait();
  CHECK(most_inside.load() == workers);
  CHECK(inner_ran.load() == macros * inner);
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 48; }));
}

TEST_CASE("an outer task's out events wait for every inner task, nested ones included", "[task][subgraph]") {
  const int workers = GENERATE(1, 2, 3);
  graph_type graph(local(workers));
  auto e = graph.event("E");
  std::atomic<int> inner_done{0};
  int seen = -1, empty_ran = 0, order = 0;
  graph.spawn("outer", hetero::out(e), [&](subgraph_type& sg) {
    auto f = sg.events("F", 3);
    for (int k = 0; k < 3; ++k)
      sg.spawn("middle", hetero::out(f(k)), [&](subgraph_type& inner) {
        auto g = inner.event("G");
        inner.spawn("slow", hetero::out(g), [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          inner_done.fetch_add(1);
        });
        inner.spawn("device", hetero::in(g), hetero::device(), [&](const Kokkos::Serial& space) {
          if (hetero::testing::device_sum(space) == 28) inner_done.fetch_add(1);
        });
      });
    sg.spawn("after middles", hetero::in(f(0), f(1), f(2)), [&] { inner_done.fetch_add(1); });
  });
  graph.spawn("reader", hetero::in(e), [&] { seen = inner_done.load(); });
  // Bodies that declare nothing finish their task at once, in order.
  for (int k = 0; k < 50; ++k)
    graph.spawn("empty", hetero::inout(e), [&, k](subgraph_type&) { empty_ran += order++ == k ? 1 : 0; });
  graph.wait();
  CHECK(seen == 7);
  CHECK(empty_ran == 50);
}

TEST_CASE("an exception in an inner task reaches wait(), skips what was not started, and the graph goes on",
          "[task][subgraph]") {
  const int workers = GENERATE(1, 2, 3);
  graph_type graph(local(workers));
  auto e = graph.event("E");
  std::atomic<int> inner_ran{0};
  bool after_ran = false;
  graph.spawn("outer", hetero::out(e), [&](subgraph_type& sg) {
    auto f = sg.event("F");
    sg.spawn("fails", hetero::out(f), [] { throw std::runtime_error("inner task failed"); });
    for (int k = 0; k < 40; ++k) sg.spawn("later", hetero::inout(f), [&] { inner_ran.fetch_add(1); });
  });
  graph.spawn("after", hetero::in(e), [&] { after_ran = true; });
  CHECK_THROWS_WITH(graph.wait(), "inner task failed");
  CHECK(inner_ran.load() == 0);  // cancelled: they only released their successors
  CHECK_FALSE(after_ran);

  // A body that throws after declaring: its inner tasks still finish the outer task.
  graph.spawn("outer", hetero::out(e), [&](subgraph_type& sg) {
    auto f = sg.event("F");
    sg.spawn("slow", hetero::out(f), [&] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
    throw std::logic_error("body failed");
  });
  CHECK_THROWS_WITH(graph.wait(), "body failed");

  int value = 0;
  graph.spawn("outer", hetero::out(e), [&](subgraph_type& sg) { sg.spawn([&] { value = 1; }); });
  graph.spawn(hetero::in(e), [&] { value *= 2; });
  graph.wait();
  CHECK(value == 2);
}

TEST_CASE("a graph destroyed with subgraph tasks pending finishes them and frees their subgraphs",
          "[task][subgraph]") {
  const auto token = std::make_shared<int>(0);  // every body holds a copy until it is destroyed
  std::atomic<int> ran{0};
  {
    graph_type graph(local(2));
    for (int m = 0; m < 8; ++m)
      graph.spawn("macro", [&, token](subgraph_type& sg) {
        for (int k = 0; k < 8; ++k)
          sg.spawn([&, token] {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            ran.fetch_add(1);
          });
      });
  }  // cancelled: the bodies not started are skipped, the started ones finish
  CHECK(ran.load() <= 64);
  CHECK(token.use_count() == 1);
}

TEST_CASE("subgraphs refuse events of other graphs, ranks, notifications and declaring from elsewhere",
          "[task][subgraph]") {
  graph_type graph(local(2));
  auto outer = graph.event("OUTER");
  const auto refused = [&](const auto& body, const char* fragment) {
    graph.spawn("refusing", body);
    CHECK_THROWS_AS(graph.wait(), hetero::invalid_argument);
    graph.spawn("refusing", body);
    CHECK_THROWS_WITH(graph.wait(), ContainsSubstring(fragment));
  };
  refused([&](subgraph_type& sg) { sg.spawn(hetero::in(outer), [] {}); },
          "in(OUTER) names an event of the enclosing task_graph; an inner task may name only events of its own "
          "subgraph");
  refused(
      [&](subgraph_type& sg) {
        auto mine = sg.event("MINE");
        sg.spawn([mine](subgraph_type& nested) { nested.spawn(hetero::out(mine), [] {}); });
      },
      "out(MINE) names an event of another subgraph");
  // on(...) on an inner task is a compile error (tests/compile_fail/subgraph_on.cpp).
  refused(
      [&](subgraph_type& sg) {
        auto f = sg.event("F");
        sg.spawn(hetero::out(f).to(0), [] {});
      },
      "inner tasks do not notify other ranks");
  refused([&](subgraph_type& sg) { sg.spawn(hetero::device(3), [](const Kokkos::Serial&) {}); },
          "pins an inner task to a device the graph does not have; allowed: -1 (any) or 0 to 0");
  refused([&](subgraph_type& sg) { (void)sg.events("F", 2, 0); }, "has extent 0 in dimension 1");
  // An inner task declaring into its subgraph (the body waits for it, so the subgraph lives).
  std::atomic<int> tried{0};
  std::string inner_error;
  graph.spawn("body", [&](subgraph_type& sg) {
    sg.spawn("declares", [&] {
      try {
        sg.spawn([] {});
      } catch (const hetero::invalid_argument& e) {
        inner_error = e.what();
      }
      tried.store(1);
    });
    (void)await(tried, 1);
  });
  graph.wait();
  CHECK_THAT(inner_error, ContainsSubstring("subgraph::spawn called outside the task body that received the "
                                            "subgraph"));
  refused([&](subgraph_type&) { graph.spawn([] {}); }, "called from inside a task");
  refused([&](subgraph_type& sg) { sg.spawn(hetero::in(hetero::event{}), [] {}); }, "names a null hetero::event");

  // The graph's own tasks cannot name a subgraph's event (checked while the subgraph lives).
  std::atomic<int> published{0}, checked{0};
  hetero::event leaked;
  graph.spawn("publishes", [&](subgraph_type& sg) {
    leaked = sg.event("INNER");
    published.store(1);
    (void)await(checked, 1);
  });
  REQUIRE(await(published, 1));
  CHECK_THROWS_AS(graph.spawn(hetero::in(leaked), [] {}), hetero::invalid_argument);
  CHECK_THROWS_WITH(
      graph.spawn(hetero::out(leaked), [] {}),
      ContainsSubstring("out(INNER) names an event of a subgraph; a subgraph's events order only the "
                        "inner tasks of that subgraph"));
  checked.store(1);
  graph.wait();

  // The graph still works.
  int ran = 0;
  graph.spawn([&](subgraph_type& sg) { sg.spawn([&] { ++ran; }); });
  graph.wait();
  CHECK(ran == 1);
}

// hetero::task_graph on one rank (MPI_COMM_SELF): dependencies against the sequential order,
// wait() and wait(event), exceptions, the insertion window, and the errors of bad input.
#include <hetero/core/observer.hpp>
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "local_options.hpp"
#include "random.hpp"
#include "random_program.hpp"
#include "uncopyable.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using task_test::local;

// Which threads sleep as idle workers right now (the scheduler reports each sleep to the
// observer as a task wait labelled "task worker idle").
class idle_watcher : public hetero::observer {
 public:
  void wait_begin(hetero::wait_kind kind, std::string_view label) noexcept override {
    if (kind != hetero::wait_kind::task || label != "task worker idle") return;
    std::lock_guard lock(m_mutex);
    m_sleeping.insert(std::this_thread::get_id());
  }
  void wait_end(hetero::wait_kind kind, std::string_view label) noexcept override {
    if (kind != hetero::wait_kind::task || label != "task worker idle") return;
    std::lock_guard lock(m_mutex);
    m_sleeping.erase(std::this_thread::get_id());
  }
  std::size_t sleeping() {
    std::lock_guard lock(m_mutex);
    return m_sleeping.size();
  }

 private:
  std::mutex m_mutex;
  std::set<std::thread::id> m_sleeping;
};

// Polls `condition` for up to 20 s (generous: the outcome must not depend on the machine's load).
template <class Condition>
bool eventually(Condition&& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// An operation to adopt whose move throws (its copy too).
struct refusing_source {
  refusing_source() = default;
  refusing_source(const refusing_source&) { throw std::runtime_error("copying the body failed"); }
  refusing_source& operator=(const refusing_source&) = delete;
  [[nodiscard]] bool test() const noexcept { return true; }
};

}  // namespace

TEST_CASE("random task graphs follow the sequential order of flow, anti and output dependencies", "[task]") {
  const int workers = GENERATE(1, 2, 3);
  const std::size_t window = GENERATE(std::size_t{1}, std::size_t{7}, std::size_t{4096});
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(workers * 10 + static_cast<int>(window % 10)));
  hetero::testing::random_program program(rng, 1500, 10);
  hetero::task_graph graph(local(workers, window));
  const auto e = graph.events("E", program.events());
  program.declare(graph, e, [](int) { return false; });
  graph.wait();
  INFO("workers " << workers << ", window " << window << ", " << program.dependency_count() << " dependencies");
  CHECK(program.wrong_run_counts() == 0);
  CHECK(program.violated_dependencies() == 0);
  CHECK(program.bad_reads() == 0);
  CHECK(program.final_values_match());
}

TEST_CASE("a graph is declared, waited for and declared again many times", "[task]") {
  hetero::task_graph graph(local(2));
  auto rng = hetero::testing::rng(3);
  for (int round = 0; round < 20; ++round) {
    hetero::testing::random_program program(rng, 200, 6);
    const auto e = graph.events("E", program.events());
    program.declare(graph, e, [](int) { return false; });
    graph.wait();
    CHECK(program.wrong_run_counts() == 0);
    CHECK(program.violated_dependencies() == 0);
    CHECK(program.bad_reads() == 0);
  }
}

TEST_CASE("the insertion window bounds the tasks declared and not finished", "[task]") {
  const std::size_t window = GENERATE(std::size_t{1}, std::size_t{8});
  hetero::task_graph graph(local(2, window));
  auto chain = graph.event("chain");
  std::atomic<int> finished{0};
  int declared = 0;
  int worst = 0;
  for (int i = 0; i < 500; ++i) {
    graph.spawn(hetero::inout(chain), [&] { finished.fetch_add(1); });
    ++declared;
    worst = std::max(worst, declared - finished.load());
  }
  graph.wait();
  CHECK(finished.load() == 500);
  CHECK(worst <= static_cast<int>(window));
}

TEST_CASE("wait(event) returns once the last writer declared so far finished", "[task]") {
  hetero::task_graph graph(local(1));
  auto written = graph.event("written");
  auto never_written = graph.event("never written");
  auto later = graph.event("later");
  std::atomic<bool> writer_done{false};
  graph.spawn("first writer", hetero::out(written), [] {});
  graph.spawn("last writer", hetero::inout(written), [&] { writer_done = true; });
  graph.spawn("reader", hetero::in(written), hetero::out(later), [] {});
  graph.wait(never_written);  // nothing to wait for
  graph.wait(written);
  CHECK(writer_done.load());
  graph.wait();
}

TEST_CASE("an exception thrown by a task reaches wait() and the graph stays usable", "[task]") {
  const int workers = GENERATE(1, 2);
  hetero::task_graph graph(local(workers));
  auto e = graph.event("E");
  std::atomic<int> after{0};
  graph.spawn("thrower", hetero::out(e), [] { throw std::runtime_error("boom from task 7"); });
  for (int i = 0; i < 10; ++i) graph.spawn("dependent", hetero::inout(e), [&] { after.fetch_add(1); });
  CHECK_THROWS_WITH(graph.wait(), "boom from task 7");
  CHECK(after.load() == 0);  // declared after the failure and depending on it: skipped

  graph.spawn("thrower", [] { throw hetero::invalid_argument("typed failure"); });
  CHECK_THROWS_AS(graph.wait(), hetero::invalid_argument);

  int ran = 0;
  graph.spawn("after the failures", hetero::inout(e), [&] { ++ran; });
  graph.wait();
  CHECK(ran == 1);
}

TEST_CASE("tasks cannot declare tasks, nor other threads declare into a graph", "[task]") {
  hetero::task_graph graph(local(2));
  graph.spawn("nested", [&] { graph.spawn([] {}); });
  CHECK_THROWS_WITH(graph.wait(), ContainsSubstring("called from inside a task"));

  std::string message;
  std::thread other([&] {
    try {
      graph.spawn([] {});
    } catch (const hetero::invalid_argument& e) {
      message = e.what();
    }
  });
  other.join();
  CHECK_THAT(message, ContainsSubstring("thread other than the one that created"));
}

TEST_CASE("bad clauses and options are refused with what was wrong", "[task]") {
  hetero::task_graph graph(local(1));
  hetero::task_graph other(local(1));
  auto mine = graph.events("mine", 4);
  auto theirs = other.event("theirs");

  CHECK_THROWS_WITH(mine(4),
                    ContainsSubstring("event index 4 in dimension 0 of event array 'mine' is out of range; "
                                      "allowed: 0 to 3"));
  CHECK_THROWS_WITH(mine(-1), ContainsSubstring("event index -1"));
  CHECK_THROWS_WITH(graph.events("flat", 3, 0), ContainsSubstring("'flat' has extent 0 in dimension 1"));
  // A product that wrapped (2^32 x 2^32 = 0 events) was indexed past its end.
  CHECK_THROWS_WITH(
      graph.events("huge", std::int64_t{1} << 32, std::int64_t{1} << 32),
      ContainsSubstring("'huge' would hold more than 2^40 events (extent 4294967296 in dimension 1"));
  CHECK_THROWS_WITH(graph.spawn(hetero::in(theirs), [] {}),
                    ContainsSubstring("event theirs of another task_graph"));
  CHECK_THROWS_WITH(graph.spawn(hetero::out(hetero::event{}), [] {}), ContainsSubstring("null hetero::event"));
  CHECK_THROWS_WITH(graph.spawn(hetero::on(5), [] {}),
                    ContainsSubstring("on(...) names rank 5 but the task graph's communicator has 1 rank(s); "
                                      "allowed: 0 to 0"));
  CHECK_THROWS_WITH(graph.spawn(hetero::out(mine(0)).to(0), [] {}),
                    ContainsSubstring("out(mine[0]).to({0}) names ranks to notify, but the event is not "
                                      "remote-capable"));
  CHECK_THROWS_WITH(
      graph.spawn(hetero::device(3), [](const auto&) {}),
      ContainsSubstring("device(3) pins a task to a device the graph does not have; allowed: -1 (any) "
                        "or 0 to 0"));
  // Two on(...) clauses, two labels, two device(...) or priority(...): compile errors
  // (tests/compile_fail/task_two_on.cpp, task_two_labels.cpp).

  CHECK_THROWS_WITH(hetero::task_graph(local(-1)), ContainsSubstring("task_options::workers is -1"));
  CHECK_THROWS_WITH(hetero::task_graph(local(1, 0)), ContainsSubstring("task_options::window is 0"));
  hetero::task_options negative = local(1);
  negative.no_progress_timeout = std::chrono::seconds(-2);
  CHECK_THROWS_WITH(hetero::task_graph(negative),
                    ContainsSubstring("task_options::no_progress_timeout is -2 s; allowed: a positive duration"));
  for (auto field :
       {&hetero::task_options::spin, &hetero::task_options::wait_spin, &hetero::task_options::mpi_poll}) {
    hetero::task_options negative = local(1);
    negative.*field = std::chrono::microseconds(-5);
    CHECK_THROWS_WITH(hetero::task_graph(negative), ContainsSubstring("is -5e-06 s; allowed: 0 or more"));
  }

  int ran = 0;  // nothing above left a task behind
  graph.spawn(hetero::out(mine(3)), [&] { ++ran; });
  graph.wait();
  CHECK(ran == 1);
}

TEST_CASE("tasks with an on clause run only on its ranks; labels and events are kept", "[task]") {
  hetero::task_graph graph(local(2));
  std::atomic<int> here{0}, elsewhere{0};  // the two tasks may run at once on the two workers
  graph.spawn("here", hetero::on(hetero::rank_set{0}), [&] { ++here; });
  graph.spawn("nowhere", hetero::on(hetero::rank_set{}), [&] { ++elsewhere; });
  graph.spawn("everywhere", hetero::on(hetero::rank_set::all()), [&] { ++here; });
  graph.wait();
  CHECK(here == 2);
  CHECK(elsewhere == 0);
  CHECK(graph.event("tile").name() == "tile");
  CHECK(graph.events("EA", 3, 4)(2, 1).name() == "EA[2][1]");
  CHECK(graph.size() == 1);
  CHECK(graph.rank() == 0);
  CHECK(graph.workers() == 2);
}

TEST_CASE("a graph destroyed with tasks pending cancels those not started and finishes the running ones",
          "[task]") {
  std::atomic<int> ran{0};
  std::atomic<bool> running{false};
  {
    hetero::task_graph graph(local(2));
    auto chain = graph.event("chain");
    graph.spawn("first", hetero::inout(chain), [&] {
      running = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ran.fetch_add(1);
    });
    for (int i = 0; i < 100; ++i) graph.spawn("later", hetero::inout(chain), [&] { ran.fetch_add(1); });
    while (!running.load()) std::this_thread::yield();  // the first task runs on the other worker
  }
  CHECK(ran.load() == 1);
}

TEST_CASE("idle workers sleep instead of spinning, and wake up for new work", "[task]") {
  idle_watcher watcher;
  hetero::set_observer(&watcher);
  {
    hetero::task_graph graph(local(3));  // the thread in wait() and two worker threads
    for (int i = 0; i < 100; ++i) graph.spawn([] {});
    graph.wait();
    CHECK(eventually([&] { return watcher.sleeping() == 2; }));  // both worker threads asleep

    // Three tasks that can only finish together: the sleepers must wake and take two of them.
    std::atomic<int> started{0};
    std::atomic<int> met{0};
    for (int i = 0; i < 3; ++i)
      graph.spawn([&] {
        started.fetch_add(1);
        if (eventually([&] { return started.load() == 3; })) met.fetch_add(1);
      });
    graph.wait();
    CHECK(met.load() == 3);
    CHECK(eventually([&] { return watcher.sleeping() == 2; }));
  }
  hetero::set_observer(nullptr);
}

// The body was copied into a node already taken: the node stayed in the insertion window for
// ever (a later spawn ended in deadlock_error), a recording kept it (its composed run never
// ended), and a piece of task data stayed in use.
TEST_CASE("a body whose copy throws leaves the graph as it was and usable", "[task]") {
  const int workers = GENERATE(1, 2);
  const std::size_t window = GENERATE(std::size_t{1}, std::size_t{2}, std::size_t{64});
  auto rng = hetero::testing::rng(static_cast<std::uint64_t>(700 + workers * 100 + static_cast<int>(window)));
  hetero::task_options options = local(workers, window);
  options.no_progress_timeout = std::chrono::seconds(5);  // a node left behind fills the window: fail, not hang
  hetero::task_graph<Kokkos::Serial> graph(options);
  hetero::testing::random_program program(rng, 400, 8);
  const auto e = graph.events("E", static_cast<std::size_t>(program.events()));
  std::uniform_int_distribution<int> pick(0, program.events() - 1);
  const auto refused = [](auto&& spawn) { CHECK_THROWS_WITH(spawn(), "copying the body failed"); };
  // More refusals than the window holds nodes, of each kind of body, on random events.
  for (int k = 0; k < static_cast<int>(window) + 2; ++k) {
    const hetero::event x = e(static_cast<std::size_t>(pick(rng))), y = e(static_cast<std::size_t>(pick(rng)));
    refused([&] {
      graph.spawn("cpu", hetero::in(x), hetero::out(y), [c = hetero::testing::uncopyable(k)] { (void)c; });
    });
    refused([&] {
      graph.spawn("inner", hetero::inout(x),
                  [c = hetero::testing::uncopyable(k)](hetero::subgraph<Kokkos::Serial>&) { (void)c; });
    });
    refused([&] {
      graph.spawn("device", hetero::device(), hetero::out(y),
                  [c = hetero::testing::uncopyable(k)](const Kokkos::Serial&) { (void)c; });
    });
    refused([&] { graph.adopt(hetero::out(y), refusing_source{}, "uncopyable operation"); });
  }
  program.declare(graph, e, [](int) { return false; });
  graph.wait();
  CHECK(program.wrong_run_counts() == 0);
  CHECK(program.violated_dependencies() == 0);
  CHECK(program.bad_reads() == 0);
  CHECK(program.final_values_match());

  // Task data: no use of the piece is left behind, so its handle may go before the next wait.
  const std::size_t n = 1 + rng() % 64;
  Kokkos::View<double*, Kokkos::HostSpace> xv(Kokkos::view_alloc("x", Kokkos::WithoutInitializing), n);
  std::vector<double> expected(n);
  std::uniform_real_distribution<double> value(-1, 1);
  for (std::size_t i = 0; i < n; ++i) expected[i] = 2 * (xv(i) = value(rng));
  {
    auto x = graph.data("x", xv);
    refused(
        [&] { graph.spawn("data", hetero::updates(x), [c = hetero::testing::uncopyable(0)](auto) { (void)c; }); });
    graph.spawn("double", hetero::updates(x), [](auto v) {
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) *= 2;
    });
    graph.wait();
  }
  CHECK_NOTHROW(graph.wait());  // before: task data 'x' was destroyed while 1 task(s) had not finished
  for (std::size_t i = 0; i < n; ++i) CHECK(xv(i) == expected[i]);

  // Recordings: the refused task is no node of the recording, and its composed run ends.
  std::atomic<int> runs{0};
  const auto step = graph.record([&] {
    graph.spawn("count", hetero::inout(e(0)), [&] { ++runs; });
    refused([&] {
      graph.spawn("uncopyable", hetero::inout(e(0)), [c = hetero::testing::uncopyable(0)] { (void)c; });
    });
  });
  CHECK(step.nodes() == 1);
  graph.spawn("composed", hetero::inout(e(1)), hetero::compose(step));
  graph.wait();  // before: deadlock_error (the composed run waited for the node left behind)
  CHECK(runs.load() == 1);
}

// A task pinned to a busy device is no work for a worker while another device idles: the workers
// spun until the busy device freed.
TEST_CASE("idle workers sleep while a task pinned to a busy device waits for it", "[task][device]") {
  idle_watcher watcher;
  hetero::set_observer(&watcher);
  {
    hetero::task_graph<Kokkos::Serial> graph(local(3), {Kokkos::Serial(), Kokkos::Serial()});
    auto rng = hetero::testing::rng(131);
    const int queued = 1 + static_cast<int>(rng() % 6);
    std::atomic<bool> started{false}, release{false};
    std::vector<int> order;  // device 0 runs one task at a time (its busy flag orders them)
    graph.spawn("long", hetero::device(0), [&](const Kokkos::Serial&) {
      started = true;
      (void)eventually([&] { return release.load(); });
      order.push_back(0);
    });
    for (int t = 1; t <= queued; ++t)
      graph.spawn("pinned", hetero::device(0), [&order, t](const Kokkos::Serial&) { order.push_back(t); });
    REQUIRE(eventually([&] { return started.load(); }));
    // One worker thread holds device 0; the other has nothing it may run (device 1 is idle, but
    // no task is for it): it sleeps. The declaring thread is not in wait().
    CHECK(eventually([&] { return watcher.sleeping() == 1; }));
    release = true;
    graph.wait();
    std::vector<int> expected(static_cast<std::size_t>(queued) + 1);
    std::iota(expected.begin(), expected.end(), 0);  // device 0's queue, in declaration order
    CHECK(order == expected);
  }
  hetero::set_observer(nullptr);
}

// event_array is a random access range in row-major order: range-for, <ranges> and in(EA) /
// out(EA) name every event. Before, none of these compiled.
TEST_CASE("an event array is a range: range-for, in(array) and out(array)", "[task]") {
  static_assert(std::ranges::random_access_range<hetero::event_array<2>>);
  static_assert(std::ranges::sized_range<hetero::event_array<2>>);
  hetero::task_graph graph(local(2));
  auto gen = hetero::testing::rng(71);
  const std::size_t rows = 1 + gen() % 4, cols = 1 + gen() % 5;
  const auto ea = graph.events("EA", rows, cols);
  std::vector<hetero::event> visited;
  for (hetero::event e : ea) visited.push_back(e);
  REQUIRE(visited.size() == rows * cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) CHECK(visited[i * cols + j] == ea(i, j));  // row-major
  CHECK(std::ranges::distance(ea) == static_cast<std::ptrdiff_t>(rows * cols));
  if (rows > 1) CHECK(ea.begin()[static_cast<std::ptrdiff_t>(cols)] == ea(1, 0));
  // One writer of the whole array, one task per element reading it, one reader of them all.
  std::atomic<int> writers{0}, readers{0};
  std::atomic<bool> order_kept{true};
  graph.spawn("write all", hetero::out(ea), [&] { writers.store(1); });
  for (hetero::event e : ea)
    graph.spawn("update one", hetero::inout(e), [&] {
      if (writers.load() != 1) order_kept = false;
      readers.fetch_add(1);
    });
  int seen_at_end = -1;
  graph.spawn("read all", hetero::in(ea), [&] { seen_at_end = readers.load(); });
  graph.wait();
  CHECK(order_kept);
  CHECK(seen_at_end == static_cast<int>(rows * cols));
}

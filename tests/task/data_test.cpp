// Task data on one rank: random programs of reads, writes and updates on host tasks, device
// tasks (a host execution space stands in for the GPU, with device copies in separate memory
// and moves that wait in a queue until the device launches or is fenced) and tasks with both
// bodies, against their sequential meaning, every element; the number of moves against the
// minimum the program needs; a small device memory cap (eviction, write-back); errors.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "capture_stderr.hpp"
#include "data_program.hpp"
#include "local_options.hpp"
#include "random.hpp"
#include "region_recorder.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using graph_type = hetero::task_graph<Kokkos::Serial>;
using data_test::host_view;

// Runs `prog` on `graph` (every piece registered from fresh Views), checks every element and
// every task's hash, and returns the statistics.
hetero::task_statistics run_program(graph_type& graph, const data_test::program& prog) {
  std::vector<host_view> views;
  std::vector<hetero::task_data<host_view>> data;
  for (int p = 0; p < prog.pieces(); ++p) {
    views.emplace_back("piece", static_cast<std::size_t>(prog.size(p)));
    for (int e = 0; e < prog.size(p); ++e) views.back()(static_cast<std::size_t>(e)) = prog.initial_word(p, e);
    data.push_back(graph.data("piece" + std::to_string(p), views.back()));
  }
  std::vector<data_test::word> hashes(static_cast<std::size_t>(prog.tasks()), 0);
  graph.reset_statistics();
  for (int i = 0; i < prog.tasks(); ++i)
    data_test::declare_task(
        graph, prog, i, [&](int p) { return data[static_cast<std::size_t>(p)]; }, hashes);
  graph.wait();
  for (int i = 0; i < prog.tasks(); ++i) {
    INFO("task " << i);
    CHECK(hashes[static_cast<std::size_t>(i)] == prog.expected_hash(i));
  }
  for (int p = 0; p < prog.pieces(); ++p)
    for (int e = 0; e < prog.size(p); ++e) {
      INFO("piece " << p << " element " << e);
      REQUIRE(views[static_cast<std::size_t>(p)](static_cast<std::size_t>(e)) ==
              prog.expected(p)[static_cast<std::size_t>(e)]);
    }
  return graph.statistics();
}

}  // namespace

TEST_CASE("random programs of task data give their sequential results and move the fewest copies",
          "[task][data]") {
  auto rng = hetero::testing::rng(41);
  for (int workers : {1, 2, 3}) {
    graph_type graph(task_test::local(workers));
    for (int round = 0; round < 6; ++round) {
      INFO("workers " << workers << ", round " << round);
      const data_test::program prog(rng, 8, 60, {data_test::side::host, data_test::side::device});
      const auto stats = run_program(graph, prog);
      const auto minimum = prog.minimum_moves(0);
      CHECK(stats.moves.to_device.moves == minimum[0]);
      CHECK(stats.moves.to_host.moves == minimum[1]);
      CHECK(stats.moves.evictions == 0);
    }
  }
}

TEST_CASE("tasks with a host and a device body run on either side with the same results", "[task][data]") {
  auto rng = hetero::testing::rng(42);
  graph_type graph(task_test::local(2));
  std::uint64_t host = 0, device = 0;
  for (int round = 0; round < 6; ++round) {
    const data_test::program prog(rng, 6, 80,
                                  {data_test::side::host, data_test::side::device, data_test::side::either});
    const auto stats = run_program(graph, prog);
    if (const auto* l = stats.find("either")) {
      host += l->host_runs;
      device += l->device_runs;
    }
  }
  CHECK(host + device > 0);
}

TEST_CASE("two instances of one device memory share its copies; pinned tasks prefetch on their own instance",
          "[task][data]") {
  auto rng = hetero::testing::rng(43);
  graph_type graph(task_test::local(3), {Kokkos::Serial(), Kokkos::Serial()});
  for (int round = 0; round < 6; ++round) {
    const data_test::program prog(rng, 8, 80, {data_test::side::host, data_test::side::device}, 1, 2);
    const auto stats = run_program(graph, prog);
    const auto minimum = prog.minimum_moves(0);
    CHECK(stats.moves.to_device.moves == minimum[0]);
    CHECK(stats.moves.to_host.moves == minimum[1]);
  }
}

TEST_CASE("under a small device memory cap, copies are evicted and written back, and results stay right",
          "[task][data]") {
  auto rng = hetero::testing::rng(44);
  // Pieces of up to 64 words (512 bytes): a task of 3 pieces fits, a dozen pieces do not.
  graph_type graph({.workers = 2, .comm = MPI_COMM_SELF, .device_memory = 3 * 512});
  std::uint64_t evictions = 0, write_backs = 0;
  for (int round = 0; round < 6; ++round) {
    const data_test::program prog(
        rng, 12, 100,
        {data_test::side::device, data_test::side::device, data_test::side::host, data_test::side::either});
    const auto stats = run_program(graph, prog);
    evictions += stats.moves.evictions;
    write_backs += stats.moves.write_backs;
  }
  CHECK(evictions > 0);
  CHECK(write_backs > 0);
}

TEST_CASE("a piece larger than the device memory cap is a named error", "[task][data]") {
  graph_type graph({.workers = 2, .comm = MPI_COMM_SELF, .device_memory = 256});
  host_view big("big", 64);  // 512 bytes
  auto data = graph.data("big", big);
  CHECK_THROWS_MATCHES(
      graph.spawn("too big", hetero::device(), hetero::updates(data), [](const Kokkos::Serial&, auto) {}),
      hetero::invalid_argument,
      Catch::Matchers::MessageMatches(ContainsSubstring("device task 'too big' uses task data 'big'") &&
                                      ContainsSubstring("more than a device memory may hold (256")));
  // A task with both bodies runs on the host instead.
  std::atomic<int> where{-1};
  graph.spawn("either", hetero::updates(data),
              hetero::host_or_device(
                  [&](auto v) {
                    where = 0;
                    v(0) = 7;
                  },
                  [&](const Kokkos::Serial&, auto) { where = 1; }));
  graph.wait();
  CHECK(where == 0);
  CHECK(big(0) == 7);
}

TEST_CASE("a device task that throws while another task's data moves leaves the data whole", "[task][data]") {
  graph_type graph(task_test::local(2));
  host_view a("a", 64), b("b", 64);
  for (std::size_t e = 0; e < 64; ++e) a(e) = b(e) = e;
  auto da = graph.data("a", a);
  auto db = graph.data("b", b);
  std::atomic<bool> started{false};
  graph.spawn("fails", hetero::device(0), hetero::updates(da), [&](const Kokkos::Serial&, auto v) {
    started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // b's move is queued meanwhile
    v(0) = 99;
    throw std::runtime_error("device body failed");
  });
  graph.spawn("queued", hetero::device(0), hetero::updates(db),
              [](const Kokkos::Serial&, auto v) { v(0) = 1000; });
  CHECK_THROWS_WITH(graph.wait(), ContainsSubstring("device body failed"));
  CHECK(started);
  CHECK(b(0) == 0);  // skipped: b holds its old values
  for (std::size_t e = 1; e < 64; ++e) REQUIRE(b(e) == e);
  // The graph and the data go on.
  graph.spawn("again", hetero::device(0), hetero::reads(db), hetero::updates(da),
              [](const Kokkos::Serial&, auto from, auto to) {
                for (std::size_t e = 0; e < to.extent(0); ++e) to(e) = from(e) * 2;
              });
  graph.wait();
  for (std::size_t e = 0; e < 64; ++e) REQUIRE(a(e) == 2 * e);
}

TEST_CASE("empty pieces (a rank's empty share) run on the host and the device like any other", "[task][data]") {
  // With a cap too (an empty piece needs no room), and beside a piece that has elements.
  for (std::size_t cap : {std::size_t{0}, std::size_t{512}}) {
    INFO("device memory cap " << cap << " (0: the default)");
    hetero::task_options options = task_test::local(2);
    options.no_progress_timeout = std::chrono::seconds(20);
    if (cap) options.device_memory = cap;
    graph_type graph(options);
    host_view empty("empty", 0), x("x", 8);
    auto de = graph.data("empty", empty);
    auto dx = graph.data("x", x);
    std::atomic<int> ran{0};
    const auto device_writes = [&](const Kokkos::Serial&, auto e, auto v) {
      ran += e.extent(0) == 0 ? 1 : 100;
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) = i + 1;
    };
    graph.spawn("device writes", hetero::device(), hetero::writes(de), hetero::writes(dx), device_writes);
    graph.spawn("device reads", hetero::device(), hetero::reads(de), hetero::updates(dx), device_writes);
    graph.spawn("host reads", hetero::reads(de), hetero::updates(dx), [&](auto e, auto v) {
      ran += e.extent(0) == 0 ? 1 : 100;
      for (std::size_t i = 0; i < v.extent(0); ++i) v(i) *= 3;
    });
    graph.spawn("either", hetero::updates(de),
                hetero::host_or_device([&](auto e) { ran += e.extent(0) == 0 ? 1 : 100; },
                                       [&](const Kokkos::Serial&, auto e) { ran += e.extent(0) == 0 ? 1 : 100; }));
    graph.wait();
    graph.wait(de);
    CHECK(ran == 4);
    for (std::size_t i = 0; i < 8; ++i) REQUIRE(x(i) == 3 * (i + 1));
  }
}

TEST_CASE("wait(data) reads one piece back while the graph goes on", "[task][data]") {
  graph_type graph(task_test::local(2));
  host_view x("x", 16), y("y", 16);
  auto dx = graph.data("x", x);
  auto dy = graph.data("y", y);
  graph.spawn("fill", hetero::device(), hetero::writes(dx), [](const Kokkos::Serial&, auto v) {
    for (std::size_t e = 0; e < v.extent(0); ++e) v(e) = e + 1;
  });
  graph.spawn("copy", hetero::device(), hetero::reads(dx), hetero::writes(dy),
              [](const Kokkos::Serial&, auto a, auto b) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
                for (std::size_t e = 0; e < b.extent(0); ++e) b(e) = a(e) * 3;
              });
  graph.wait(dx);
  for (std::size_t e = 0; e < 16; ++e) REQUIRE(x(e) == e + 1);
  graph.wait();
  for (std::size_t e = 0; e < 16; ++e) REQUIRE(y(e) == 3 * (e + 1));
  const auto stats = graph.statistics();
  CHECK(stats.moves.to_host.moves == 2);  // x once for wait(x), y at the end
  CHECK(stats.moves.to_device.moves == 0);
}

TEST_CASE("task data destroyed while its tasks run is a named error of wait()", "[task][data]") {
  // Where the task fails too, wait() raises the task's error and prints the drop's (before, the
  // drop's waited for the next wait()).
  const bool body_fails = GENERATE(false, true);
  CAPTURE(body_fails);
  graph_type graph(task_test::local(2));
  host_view x("x", 8);
  std::atomic<bool> release{false};
  {
    auto data = graph.data("doomed", x);
    graph.spawn("slow", hetero::updates(data), [&](auto v) {
      while (!release) std::this_thread::yield();
      v(0) = 5;
      if (body_fails) throw std::runtime_error("the body failed");
    });
  }  // the last handle goes while "slow" waits
  release = true;
  const auto drop_named = ContainsSubstring("task data 'doomed' was destroyed while 1 task");
  if (body_fails) {
    const std::string printed = hetero::testing::capture_stderr(
        [&] { CHECK_THROWS_WITH(graph.wait(), ContainsSubstring("the body failed")); });
    CHECK_THAT(printed, drop_named && ContainsSubstring("(while this wait raised another error)"));
    CHECK_NOTHROW(graph.wait());  // not left for the next wait
  } else {
    CHECK_THROWS_MATCHES(graph.wait(), hetero::invalid_argument,
                         Catch::Matchers::MessageMatches(drop_named && ContainsSubstring("keep its handle")));
  }
  CHECK(x(0) == 5);  // the task ran on the memory, which the registration kept alive
  // Destroyed after wait(): no error, and the View holds the newest version.
  {
    auto data = graph.data("kept", x);
    graph.spawn("device", hetero::device(), hetero::updates(data),
                [](const Kokkos::Serial&, auto v) { v(1) = 6; });
    graph.wait();
  }
  graph.wait();
  CHECK(x(1) == 6);
}

TEST_CASE("what task data refuses, with its message", "[task][data]") {
  graph_type graph(task_test::local(2));
  graph_type other(task_test::local(1));
  host_view x("x", 8);
  auto data = graph.data("x", x);
  auto foreign = other.data("y", host_view("y", 8));
  CHECK_THROWS_WITH(graph.spawn("twice", hetero::reads(data), hetero::updates(data), [](auto, auto) {}),
                    ContainsSubstring("names task data 'x' in two data clauses"));
  std::vector<hetero::task_data<host_view>> many;  // over 32 accesses: found by sorting, not pairwise
  for (int i = 0; i < 40; ++i) many.push_back(graph.data("many" + std::to_string(i), host_view("m", 1)));
  many.push_back(many[17]);
  CHECK_THROWS_WITH(graph.spawn("many", hetero::reads(many), [](auto) {}),
                    ContainsSubstring("task 'many' names task data 'many17' in two data clauses"));
  CHECK_THROWS_WITH(graph.spawn("foreign", hetero::reads(foreign), [](auto) {}),
                    ContainsSubstring("task data 'y' of another task_graph"));
  CHECK_THROWS_WITH(graph.spawn(hetero::reads(hetero::task_data<host_view>()), [](auto) {}),
                    ContainsSubstring("names an empty task_data"));
  CHECK_THROWS_WITH((void)graph.record([&] { graph.spawn("recorded", hetero::reads(data), [](auto) {}); }),
                    ContainsSubstring("record() cannot record yet"));
  graph.wait();
  other.wait();
  // Rows padded to an alignment: LayoutRight, but not contiguous.
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> padded(
      Kokkos::view_alloc("padded", Kokkos::AllowPadding), 3, 9);
  if (padded.span_is_contiguous())
    SKIP("this Kokkos does not pad rows of 9 doubles: no non-contiguous View to refuse");
  CHECK_THROWS_WITH((void)graph.data("padded", padded), ContainsSubstring("whose elements are not contiguous"));
}

TEST_CASE("a range of pieces in one clause reaches the body as a span of Views", "[task][data]") {
  auto rng = hetero::testing::rng(45);
  std::uniform_int_distribution<int> count(0, 6), value(0, 1000);
  graph_type graph(task_test::local(2));
  std::vector<host_view> views;
  std::vector<hetero::task_data<host_view>> pieces;
  std::vector<data_test::word> expected(16, 0);
  const int n = count(rng);
  for (int i = 0; i < n; ++i) {
    views.emplace_back("part", 16);
    for (std::size_t e = 0; e < 16; ++e) {
      views.back()(e) = static_cast<data_test::word>(value(rng));
      expected[e] += views.back()(e);
    }
    pieces.push_back(graph.data("part" + std::to_string(i), views.back()));
  }
  host_view sum("sum", 16);
  auto dsum = graph.data("sum", sum);
  using part_view = hetero::task_data<host_view>::view_in<Kokkos::HostSpace, true>;
  graph.spawn("sum", hetero::device(), hetero::reads(pieces), hetero::writes(dsum),
              [n](const Kokkos::Serial&, std::span<const part_view> parts, auto out) {
                REQUIRE(parts.size() == static_cast<std::size_t>(n));
                for (std::size_t e = 0; e < out.extent(0); ++e) {
                  out(e) = 0;
                  for (const auto& p : parts) out(e) += p(e);
                }
              });
  // Updates of a range: every piece doubled on the host, after the device read them.
  graph.spawn("double", hetero::updates(pieces), [](auto parts) {
    for (const auto& p : parts)
      for (std::size_t e = 0; e < p.extent(0); ++e) p(e) *= 2;
  });
  graph.wait();
  for (std::size_t e = 0; e < 16; ++e) REQUIRE(sum(e) == expected[e]);
  data_test::word all = 0;
  for (const auto& v : views)
    for (std::size_t e = 0; e < 16; ++e) all += v(e);
  data_test::word before = 0;
  for (std::size_t e = 0; e < 16; ++e) before += expected[e];
  CHECK(all == 2 * before);
}

TEST_CASE("a task naming more pieces of task data than a task may is refused before it is declared",
          "[task][data]") {
  // 65536 tiles of one element; a task may name 65535 of them.
  using part_view = Kokkos::View<data_test::word*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr std::int64_t n = 65536;
  auto rng = hetero::testing::rng(46);
  std::uniform_int_distribution<int> value(0, 1000);
  std::vector<data_test::word> all(static_cast<std::size_t>(n));
  for (auto& v : all) v = static_cast<data_test::word>(value(rng));
  graph_type graph(task_test::local(2));
  auto parts = graph.tiles(
      "part", {n}, {1}, [](std::int64_t) { return 0; },
      [&all](std::int64_t i) { return part_view(all.data() + i, 1); });
  std::vector<hetero::task_data<part_view>> pieces;
  for (std::int64_t i = 0; i < n; ++i) pieces.push_back(parts(i));
  host_view sum("sum", 1);
  auto dsum = graph.data("sum", sum);
  CHECK_THROWS_MATCHES(graph.spawn("too many", hetero::reads(pieces), hetero::writes(dsum), [](auto, auto) {}),
                       hetero::invalid_argument,
                       Catch::Matchers::MessageMatches(ContainsSubstring(
                           "task 'too many' names 65537 pieces of task data; allowed: at most 65535 per task")));
  // Nothing of the refused task stays in the graph: one naming the most it may (65534 parts and
  // the sum) runs, and wait() returns.
  pieces.resize(65534);
  graph.spawn("sum", hetero::reads(pieces), hetero::writes(dsum), [](auto in, auto out) {
    out(0) = 0;
    for (const auto& p : in) out(0) += p(0);
  });
  graph.wait();
  data_test::word expected = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) expected += all[i];
  CHECK(sum(0) == expected);
}

namespace {

// Busy for `us` microseconds (a body whose time the placement measures).
void busy(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

TEST_CASE("a task with both bodies runs mostly where its label is faster, and both sides are tried",
          "[task][data]") {
  graph_type graph(task_test::local(2));
  host_view x("x", 8), y("y", 8);
  auto dx = graph.data("x", x);
  auto dy = graph.data("y", y);
  // A chain (each task updates x): one ready task at a time, the device 10x faster.
  for (int t = 0; t < 40; ++t)
    graph.spawn("fast device", hetero::updates(dx),
                hetero::host_or_device([](auto v) { busy(2000), v(0) += 1; },
                                       [](const Kokkos::Serial&, auto v) { busy(200), v(0) += 1; }));
  // Equal sides.
  for (int t = 0; t < 16; ++t)
    graph.spawn("equal", hetero::updates(dy),
                hetero::host_or_device([](auto v) { busy(300), v(0) += 1; },
                                       [](const Kokkos::Serial&, auto v) { busy(300), v(0) += 1; }));
  graph.wait();
  CHECK(x(0) == 40);
  CHECK(y(0) == 16);
  const auto stats = graph.statistics();
  const auto* fast = stats.find("fast device");
  REQUIRE(fast != nullptr);
  INFO("fast device: " << fast->device_runs << " on the device, " << fast->host_runs << " on the host");
  // Calibration takes 3 runs of each side; after it the median of 5 runs decides, which one
  // slow run cannot turn.
  CHECK(fast->device_runs >= 34);
  // Each side's seconds are its bodies' (at least their busy time: a loaded machine only adds).
  CHECK(fast->host_seconds >= 2000e-6 * static_cast<double>(fast->host_runs));
  CHECK(fast->device_seconds >= 200e-6 * static_cast<double>(fast->device_runs));
  const auto* equal = stats.find("equal");
  REQUIRE(equal != nullptr);
  INFO("equal: " << equal->device_runs << " on the device, " << equal->host_runs << " on the host, "
                 << equal->host_seconds << " s on the host");
  CHECK(equal->device_runs >= 3);
  CHECK(equal->host_runs >= 1);  // both sides are tried
  // ... and both used, unless the host's first run took decisive_ratio times the device's (the
  // rule that spares a much slower side more tries; a loaded machine took the core away for
  // that run): its time in the statistics then shows it.
  if (equal->host_runs < 3)
    CHECK(equal->host_seconds >=
          hetero::detail::label_record::decisive_ratio * 300e-6 * static_cast<double>(equal->host_runs));
}

TEST_CASE("moves are regions hetero:task:move:<data> of a trace", "[task][data]") {
  auto regions = std::make_shared<hetero::testing::region_recorder>("task");
  const hetero::scoped_observer listening(regions);
  graph_type graph(task_test::local(2));
  host_view x("x", 8);
  auto dx = graph.data("x", x);
  graph.spawn("device", hetero::device(), hetero::updates(dx), [](const Kokkos::Serial&, auto v) { v(0) = 1; });
  graph.spawn("host", hetero::reads(dx), [](auto) {});
  graph.wait();
  const auto parts = regions->parts("move");
  CHECK(parts == std::vector<std::string>{"x", "x"});  // to the device, and back for the host task
}

TEST_CASE("a device task whose pieces together exceed the cap, and a tile named after its graph, are refused",
          "[task][data]") {
  std::vector<host_view> views{host_view("a", 48), host_view("b", 48)};  // 384 bytes each
  hetero::tile_array<host_view, 1> tiles;
  {
    graph_type graph({.workers = 2, .comm = MPI_COMM_SELF, .device_memory = 512});
    auto a = graph.data("a", views[0]);
    auto b = graph.data("b", views[1]);
    CHECK_THROWS_WITH(
        graph.spawn("both", hetero::device(), hetero::reads(a), hetero::updates(b),
                    [](const Kokkos::Serial&, auto, auto) {}),
        ContainsSubstring("device task 'both' uses 768 bytes of task data, more than a device memory may "
                          "hold (512"));
    tiles = graph.tiles(
        "T", {2}, {48}, [](std::int64_t) { return 0; },
        [&](std::int64_t t) { return views[static_cast<std::size_t>(t)]; });
    (void)tiles(0);
    graph.wait();
  }
  CHECK_THROWS_WITH((void)tiles(1), ContainsSubstring("belongs to a task_graph that no longer exists"));
}

// A Kokkos View made inside a task body: with Kokkos 3's OpenMP (the default space here) the
// worker threads cannot initialise it, and wait() says what to do instead; the ways it names
// work on a worker thread. With Kokkos 4 or another default space the plain View just works.

#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <thread>
#include <type_traits>

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::MessageMatches;

namespace {

// Runs `make_view` in one of two tasks that wait for each other, so that with 2 workers one
// of them runs on the worker thread (not the thread in wait()); only that one calls it.
// Returns whether a task ran on the worker thread.
bool on_a_worker_thread(hetero::task_graph<>& graph, const std::function<void()>& make_view) {
  const auto main_thread = std::this_thread::get_id();
  std::atomic<int> started{0};
  std::atomic<bool> worker_ran{false};
  for (int t = 0; t < 2; ++t) {
    graph.spawn("scratch", [&] {
      started.fetch_add(1);
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      if (std::this_thread::get_id() != main_thread) {
        worker_ran.store(true);
        make_view();
      }
    });
  }
  graph.wait();
  return worker_ran.load();
}

// Kokkos 3's OpenMP keeps its instance in a thread-local of the thread that initialised it.
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
constexpr bool plain_view_refused = std::is_same_v<Kokkos::DefaultHostExecutionSpace, Kokkos::OpenMP>;
#else
constexpr bool plain_view_refused = false;
#endif

}  // namespace

TEST_CASE("a View constructed in a task body works, or wait() says what to do instead", "[task]") {
  hetero::task_graph graph({.workers = 2});
  const std::size_t n = 1000;
  std::atomic<double> sum{0};
  auto plain = [&] {
    Kokkos::View<double*, Kokkos::HostSpace> v("scratch", n);
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += v(i) + 1;
    sum.store(s);
  };
  if constexpr (plain_view_refused) {
    CHECK_THROWS_MATCHES(
        on_a_worker_thread(graph, plain), hetero::runtime_error,
        MessageMatches(ContainsSubstring("a task body constructed a Kokkos View") &&
                       ContainsSubstring("Kokkos::view_alloc(Kokkos::WithoutInitializing, label)") &&
                       ContainsSubstring("Kokkos said: Constructing View")));
  } else {
    CHECK(on_a_worker_thread(graph, plain));
    CHECK(sum.load() == static_cast<double>(n));
  }

  SECTION("without initialisation, filled by the task") {
    sum.store(0);
    CHECK(on_a_worker_thread(graph, [&] {
      Kokkos::View<double*, Kokkos::HostSpace> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "scratch"), n);
      for (std::size_t i = 0; i < n; ++i) v(i) = 2;
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += v(i);
      sum.store(s);
    }));
    CHECK(sum.load() == 2.0 * static_cast<double>(n));
  }
#ifdef KOKKOS_ENABLE_SERIAL
  SECTION("initialised by Kokkos::Serial") {
    sum.store(-1);
    CHECK(on_a_worker_thread(graph, [&] {
      Kokkos::View<double*, Kokkos::HostSpace> v(Kokkos::view_alloc("scratch", Kokkos::Serial()), n);
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += v(i);
      sum.store(s);
    }));
    CHECK(sum.load() == 0.0);
  }
#endif
}

// CPU and device ready queues (seed 002): device tasks run on a device execution space
// instance, one at a time per device; an idle worker takes a device task first while the
// device is idle; tasks pinned to a device run only there. The device is emulated by a host
// space (this machine has no GPU).
#include <hetero/task.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <omp.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "local_options.hpp"

namespace {

// Under ThreadSanitizer only Kokkos::Serial: libgomp is not instrumented, so TSan cannot see
// the fork and join of Kokkos::OpenMP's parallel regions and reports races inside every kernel.
// The OpenMP device is exercised by the release and AddressSanitizer builds.
using device_spaces = std::tuple<
#if defined(KOKKOS_ENABLE_OPENMP) && !defined(__SANITIZE_THREAD__)
    Kokkos::OpenMP,
#endif
    Kokkos::Serial>;

using task_test::local;

// Waits (up to 20 s) until `flag` is set; false on timeout.
bool await(const std::atomic<bool>& flag) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("device tasks run kernels on the device instance, one task at a time", "[task][device]",
                        device_spaces) {
  hetero::task_graph<TestType> graph(local(2));
  constexpr int n = 256;
  std::vector<int> data(n * 20, 0);
  std::atomic<int> in_flight{0}, worst{0}, wrong_device{0};
  for (int t = 0; t < 20; ++t) {
    graph.spawn("kernel", hetero::device(), [&, t](const TestType& space) {
      worst.store(std::max(worst.load(), in_flight.fetch_add(1) + 1));
      if (hetero::current_device() != 0) wrong_device.fetch_add(1);
      Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> slice(data.data() + t * n, n);
      Kokkos::parallel_for(
          "hetero::test device kernel", Kokkos::RangePolicy<TestType>(space, 0, n),
          KOKKOS_LAMBDA(int i) { slice(i) = t * n + i; });
      in_flight.fetch_sub(1);
    });
    graph.spawn("cpu", [&] {
      if (hetero::current_device() != -1) wrong_device.fetch_add(1);
    });
  }
  graph.wait();
  CHECK(worst.load() == 1);
  CHECK(wrong_device.load() == 0);
  for (int i = 0; i < n * 20; ++i) REQUIRE(data[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("an idle worker takes device tasks first while the device is idle", "[task][device]") {
  hetero::task_graph<Kokkos::Serial> graph(local(1));  // one worker: a deterministic order
  std::vector<char> order;
  for (int t = 0; t < 6; ++t) {
    graph.spawn("cpu", [&] { order.push_back('c'); });
    graph.spawn("device", hetero::device(), [&](const Kokkos::Serial&) { order.push_back('d'); });
  }
  graph.wait();
  CHECK(std::string(order.begin(), order.end()) == "ddddddcccccc");
}

TEST_CASE("while the device is busy, another worker runs CPU tasks instead of a second device task",
          "[task][device]") {
  hetero::task_graph<Kokkos::Serial> graph(local(2));
  std::atomic<bool> cpu_ran{false}, first_done{false}, overlapped{false}, timed_out{false};
  std::atomic<int> device_running{0};
  graph.spawn("first device task", hetero::device(), [&](const Kokkos::Serial&) {
    if (device_running.fetch_add(1) != 0) overlapped = true;
    if (!await(cpu_ran)) timed_out = true;  // finishes only once a CPU task ran meanwhile
    device_running.fetch_sub(1);
    first_done = true;
  });
  graph.spawn("second device task", hetero::device(), [&](const Kokkos::Serial&) {
    if (device_running.fetch_add(1) != 0) overlapped = true;
    device_running.fetch_sub(1);
  });
  graph.spawn("cpu task", [&] { cpu_ran = true; });
  graph.wait();
  CHECK(first_done.load());
  CHECK_FALSE(timed_out.load());
  CHECK_FALSE(overlapped.load());
}

TEST_CASE("device tasks pinned to a device run only on it; the others on any device", "[task][device]") {
  hetero::task_graph<Kokkos::Serial> graph(local(3), {Kokkos::Serial(), Kokkos::Serial()});
  REQUIRE(graph.devices() == 2);
  std::mutex mutex;
  std::vector<int> pinned0, pinned1, any;
  for (int t = 0; t < 30; ++t) {
    graph.spawn(hetero::device(0), [&](const Kokkos::Serial&) {
      std::lock_guard lock(mutex);
      pinned0.push_back(hetero::current_device());
    });
    graph.spawn(hetero::device(1), [&](const Kokkos::Serial&) {
      std::lock_guard lock(mutex);
      pinned1.push_back(hetero::current_device());
    });
    graph.spawn(hetero::device(), [&](const Kokkos::Serial&) {
      std::lock_guard lock(mutex);
      any.push_back(hetero::current_device());
    });
  }
  graph.wait();
  REQUIRE(pinned0.size() == 30);
  REQUIRE(pinned1.size() == 30);
  REQUIRE(any.size() == 30);
  for (int d : pinned0) CHECK(d == 0);
  for (int d : pinned1) CHECK(d == 1);
  for (int d : any) CHECK((d == 0 || d == 1));
}

#if defined(KOKKOS_ENABLE_OPENMP) && !defined(__SANITIZE_THREAD__)
TEST_CASE("an OpenMP device task's kernels get all of the device's threads, whichever worker is free",
          "[task][device]") {
  const int threads = Kokkos::OpenMP().concurrency();
  if (threads < 2) SKIP("Kokkos::OpenMP has one thread here: nothing to tell apart");
  hetero::task_graph<Kokkos::OpenMP> graph(local(2));
  constexpr int tasks = 8;
  std::vector<int> seen(tasks, 0);  // distinct OpenMP threads that ran each task's kernel
  for (int t = 0; t < tasks; ++t) {
    graph.spawn("device", hetero::device(), [&seen, t, threads](const Kokkos::OpenMP& space) {
      std::vector<std::atomic<int>> ran(static_cast<std::size_t>(threads));
      Kokkos::parallel_for("hetero::test thread count",
                           Kokkos::RangePolicy<Kokkos::OpenMP>(space, 0, 64 * threads), [&](int) {
                             const int id = omp_get_thread_num();
                             if (id < threads)
                               ran[static_cast<std::size_t>(id)].store(1, std::memory_order_relaxed);
                           });
      for (const auto& r : ran) seen[static_cast<std::size_t>(t)] += r.load();
    });
  }
  // The declaring thread is busy elsewhere for a while: the other worker is the free one.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  graph.wait();
  for (int t = 0; t < tasks; ++t) {
    INFO("device task " << t);
    CHECK(seen[static_cast<std::size_t>(t)] == threads);
  }
}
#endif

#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
TEST_CASE("Kokkos 3: a graph with OpenMP devices made on another thread than Kokkos' is refused",
          "[task][device]") {
  std::string message;
  std::thread other([&] {
    try {
      hetero::task_graph<Kokkos::OpenMP> graph(local(1));
    } catch (const hetero::invalid_argument& e) {
      message = e.what();
    }
  });
  other.join();
  CHECK_THAT(message, Catch::Matchers::ContainsSubstring("only the thread that initialised Kokkos runs them in "
                                                         "parallel"));
}
#endif

// Operations completing outside the graph adopted as the writer of an event, as they are: an MPI
// request, a non-blocking collective of the comm module (collective_request), an asynchronous
// reflect of a distributed array (reflect_handle) and an asynchronous gmove (gmove_handle); and
// the waits wait() reports to the observer.
#include <hetero/comm.hpp>
#include <hetero/core/observer.hpp>
#include <hetero/distarray.hpp>
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// Counts the task waits the observer is told about.
class wait_counter : public hetero::observer {
 public:
  void wait_begin(hetero::wait_kind kind, std::string_view label) noexcept override {
    if (kind != hetero::wait_kind::task) return;
    std::lock_guard lock(m_mutex);
    ++begins;
    labels.emplace_back(label);
    waiting = true;
  }
  void wait_end(hetero::wait_kind kind, std::string_view) noexcept override {
    if (kind != hetero::wait_kind::task) return;
    std::lock_guard lock(m_mutex);
    ++ends;
  }
  std::atomic<bool> waiting{false};
  int begins = 0;
  int ends = 0;
  std::vector<std::string> labels;

 private:
  std::mutex m_mutex;
};

// Completes once the observer saw a wait: wait() must be idle (sleeping) to let it complete.
struct after_a_wait {
  const wait_counter* counter;
  bool test() const noexcept { return counter->waiting.load(); }
};

static_assert(hetero::completion_source<hetero::collective_request>);
static_assert(hetero::completion_source<hetero::reflect_handle<double, 2, Kokkos::HostSpace>>);

// A value every rank computes alike from a global index and a salt (exact in double).
double value_at(std::int64_t i, std::int64_t j, std::uint64_t salt) {
  std::uint64_t h = salt * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(i) * 1000003ULL +
                    static_cast<std::uint64_t>(j) * 998244353ULL;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  return static_cast<double>(h % 1000000);
}

// The summand rank `rank` contributes to element `i` of a reduction (small integers: exact sums).
double summand(int rank, std::size_t i, std::uint64_t salt) {
  return static_cast<double>((salt + 7 * i + 13 * static_cast<std::uint64_t>(rank) * (i % 5 + 1)) % 1000);
}

using array2 = hetero::distributed_array<double, 2, Kokkos::HostSpace>;

// A random 2-D array with random shadows (periodic reflects fill every shadow element), its owned
// elements set to value_at(global index, salt).
array2 random_array(std::mt19937_64& gen, std::uint64_t salt) {
  const hetero::process_grid<2> grid;
  std::array<std::int64_t, 2> extents{};
  hetero::shadow_width<2> shadow;
  for (int d = 0; d < 2; ++d) {
    const std::int64_t blocks = grid.extent(d);
    extents[d] = 2 * blocks + static_cast<std::int64_t>(gen() % 7);
    shadow.lower[d] = 1 + static_cast<std::int64_t>(gen() % 2);
    shadow.upper[d] = 1 + static_cast<std::int64_t>(gen() % 2);
  }
  array2 a(hetero::index_space<2>(extents, grid), {.shadow = shadow, .label = "adopted halo"});
  const auto storage = a.local_with_shadow();
  Kokkos::deep_copy(storage, -1.0);  // shadows not refreshed would keep this
  const auto& space = a.space();
  const auto coords = space.grid().coords();
  const auto n = a.local_extents();
  for (std::int64_t i = 0; i < n[0]; ++i)
    for (std::int64_t j = 0; j < n[1]; ++j)
      storage(i + shadow.lower[0], j + shadow.lower[1]) =
          value_at(space.axis(0).to_global(coords[0], i), space.axis(1).to_global(coords[1], j), salt);
  return a;
}

// Counts the elements of a snapshot of `a`'s storage (block and shadows, row by row) that differ
// from what a periodic reflect with corners leaves.
std::int64_t wrong_after_reflect(const array2& a, const std::vector<double>& snapshot, std::uint64_t salt) {
  const auto& space = a.space();
  const auto coords = space.grid().coords();
  const auto storage = a.local_with_shadow();
  const auto lo = a.shadow().lower;
  std::array<std::int64_t, 2> first{};
  for (int d = 0; d < 2; ++d) first[d] = space.axis(d).block_range(coords[d]).first;
  std::int64_t wrong = 0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < storage.extent(0); ++i) {
    for (std::size_t j = 0; j < storage.extent(1); ++j, ++k) {
      const std::int64_t e0 = space.extent(0), e1 = space.extent(1);
      const std::int64_t g0 = (first[0] + static_cast<std::int64_t>(i) - lo[0] + e0) % e0;
      const std::int64_t g1 = (first[1] + static_cast<std::int64_t>(j) - lo[1] + e1) % e1;
      if (snapshot[k] != value_at(g0, g1, salt)) ++wrong;
    }
  }
  return wrong;
}

// What a task sees of `a`'s storage, row by row.
std::vector<double> snapshot_of(const array2& a) {
  const auto storage = a.local_with_shadow();
  std::vector<double> copy;
  copy.reserve(storage.size());
  for (std::size_t i = 0; i < storage.extent(0); ++i)
    for (std::size_t j = 0; j < storage.extent(1); ++j) copy.push_back(storage(i, j));
  return copy;
}

}  // namespace

TEST_CASE("a collective_request of the comm module is adopted as it is", "[task][mpi][comm]") {
  hetero::communicator comm;
  const int p = comm.size(), me = comm.rank();
  auto gen = hetero::testing::rng(61);  // the same draws on every rank: same sizes and salts
  hetero::task_graph graph({.workers = 2});
  for (int trial = 0; trial < 6; ++trial) {
    const std::size_t n = 1 + gen() % 3000;
    const std::uint64_t salt = gen() % 100000;
    INFO("trial " << trial << ": " << n << " elements");
    std::vector<double> mine(n), sum(n, -1.0), seen;
    for (std::size_t i = 0; i < n; ++i) mine[i] = summand(me, i, salt);
    auto reduced = graph.event("reduced");
    int unrelated = 0;
    graph.spawn("unrelated", [&] { ++unrelated; });
    graph.adopt(hetero::out(reduced),
                comm.iallreduce(hetero::send_buf(mine), hetero::recv_buf(sum), hetero::op(hetero::ops::sum{})),
                "iallreduce");
    graph.spawn("read the sum", hetero::in(reduced), [&] { seen = sum; });
    graph.wait();
    CHECK(unrelated == 1);
    REQUIRE(seen.size() == n);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double expected = 0.0;
      for (int r = 0; r < p; ++r) expected += summand(r, i, salt);
      wrong += seen[i] != expected;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("a reflect_handle of the distarray module is adopted as it is", "[task][mpi][distarray]") {
  auto gen = hetero::testing::rng(62);
  hetero::task_graph graph({.workers = 2});
  for (int trial = 0; trial < 6; ++trial) {
    const std::uint64_t salt = gen() % 100000;
    array2 a = random_array(gen, salt);
    INFO("trial " << trial << ": extents " << a.space().extent(0) << " x " << a.space().extent(1));
    auto halo = graph.event("halo");
    std::vector<double> seen;
    // A corner-refreshing reflect has one phase per axis: test() starts the second one.
    graph.adopt(hetero::out(halo), hetero::reflect_async(a, {.periodic = {true, true}, .corners = true}),
                "reflect");
    graph.spawn("read the shadows", hetero::in(halo), [&] { seen = snapshot_of(a); });
    graph.wait();
    REQUIRE(seen.size() == a.local_with_shadow().size());
    CHECK(wrong_after_reflect(a, seen, salt) == 0);
    CHECK_NOTHROW(hetero::reflect(a));  // the adopted handle finished: no reflect is in flight
  }
}

TEST_CASE("a gmove_handle of the distarray module is adopted as it is", "[task][mpi][distarray]") {
  static_assert(hetero::completion_source<hetero::gmove_handle<double, Kokkos::HostSpace, Kokkos::HostSpace>>);
  auto gen = hetero::testing::rng(64);
  hetero::task_graph graph({.workers = 2});
  for (int trial = 0; trial < 6; ++trial) {
    const std::uint64_t salt = gen() % 100000;
    const array2 a = random_array(gen, salt);
    INFO("trial " << trial << ": extents " << a.space().extent(0) << " x " << a.space().extent(1));
    // The same values redistributed cyclically on both axes, read by a task once moved.
    const array2 b(hetero::index_space<2>({a.space().extent(0), a.space().extent(1)}, a.space().grid(),
                                          {hetero::distribution::cyclic(), hetero::distribution::cyclic()}));
    auto moved = graph.event("moved");
    std::vector<double> seen;
    graph.adopt(hetero::out(moved), hetero::gmove_async(b, a), "gmove");
    graph.spawn("read the moved block", hetero::in(moved), [&] { seen = snapshot_of(b); });
    graph.wait();
    const auto& space = b.space();
    const auto coords = space.grid().coords();
    const auto n = b.local_extents();
    REQUIRE(seen.size() == static_cast<std::size_t>(n[0] * n[1]));
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < n[0]; ++i)
      for (std::int64_t j = 0; j < n[1]; ++j)
        wrong += seen[static_cast<std::size_t>(i * n[1] + j)] !=
                 value_at(space.axis(0).to_global(coords[0], i), space.axis(1).to_global(coords[1], j), salt);
    CHECK(wrong == 0);
  }
}

// The graph polls an adopted operation on whichever thread does progress duty, not the one
// that started it. A gmove_handle holds its plan while in flight: the hold must be released by
// the thread that completes it (ThreadSanitizer reports a mutex unlocked by another thread), and
// the plan must be free again afterwards (a blocking gmove of the same arrays would wait for it).
TEST_CASE("a gmove_handle completes on a thread other than the one that started it", "[task][mpi][distarray]") {
  auto gen = hetero::testing::rng(65);
  for (int trial = 0; trial < 4; ++trial) {
    const std::uint64_t salt = gen() % 100000;
    const array2 a = random_array(gen, salt);
    const array2 b(hetero::index_space<2>({a.space().extent(0), a.space().extent(1)}, a.space().grid(),
                                          {hetero::distribution::cyclic(), hetero::distribution::cyclic()}));
    INFO("trial " << trial << ": extents " << a.space().extent(0) << " x " << a.space().extent(1));
    auto handle = hetero::gmove_async(b, a);
    const bool by_test = trial % 2 == 0;  // polled with test() as the graph does, or wait()
    std::thread other([&handle, by_test] {
      if (by_test) {
        while (!handle.test()) std::this_thread::yield();
      } else {
        handle.wait();
      }
    });
    other.join();
    CHECK(handle.done());
    const auto check = [&](const char* what) {
      const auto seen = snapshot_of(b);
      const auto& space = b.space();
      const auto coords = space.grid().coords();
      const auto n = b.local_extents();
      std::int64_t wrong = 0;
      for (std::int64_t i = 0; i < n[0]; ++i)
        for (std::int64_t j = 0; j < n[1]; ++j)
          wrong += seen[static_cast<std::size_t>(i * n[1] + j)] !=
                   value_at(space.axis(0).to_global(coords[0], i), space.axis(1).to_global(coords[1], j), salt);
      INFO(what);
      CHECK(wrong == 0);
    };
    check("after the other thread completed the gmove");
    // The same move again, blocking, on this thread: it takes the cached plan the other thread released.
    Kokkos::deep_copy(b.local(), -1.0);
    hetero::gmove(b, a);
    check("after a blocking gmove of the same arrays");
  }
}

TEST_CASE("a task waits for an adopted collective and an adopted reflect together", "[task][mpi]") {
  hetero::communicator comm;
  const int p = comm.size(), me = comm.rank();
  auto gen = hetero::testing::rng(63);
  hetero::task_graph graph({.workers = 2});
  const std::uint64_t salt = gen() % 100000;
  array2 a = random_array(gen, salt);
  const std::size_t n = 1 + gen() % 500;
  std::vector<double> mine(n), sum(n, -1.0), seen_sum, seen_storage;
  for (std::size_t i = 0; i < n; ++i) mine[i] = summand(me, i, salt);
  auto reduced = graph.event("reduced");
  auto halo = graph.event("halo");
  graph.adopt(hetero::out(halo), hetero::reflect_async(a, {.periodic = {true, true}}), "reflect");
  graph.adopt(hetero::out(reduced),
              comm.iallreduce(hetero::send_buf(mine), hetero::recv_buf(sum), hetero::op(hetero::ops::sum{})),
              "iallreduce");
  graph.spawn("read both", hetero::in(reduced), hetero::in(halo), [&] {
    seen_sum = sum;
    seen_storage = snapshot_of(a);
  });
  graph.wait();
  REQUIRE(seen_sum.size() == n);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double expected = 0.0;
    for (int r = 0; r < p; ++r) expected += summand(r, i, salt);
    wrong += seen_sum[i] != expected;
  }
  CHECK(wrong == 0);
  CHECK(wrong_after_reflect(a, seen_storage, salt) == 0);
}

TEST_CASE("a task depends on a non-blocking MPI collective adopted as an event", "[task][mpi]") {
  int p = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  hetero::task_graph graph({.workers = 2});
  auto reduced = graph.event("reduced");
  double local = me + 1.0, global = 0.0, seen = -1.0;
  int before = 0;
  graph.spawn("independent", [&] { ++before; });
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  graph.adopt(hetero::out(reduced), hetero::mpi_request(request), "allreduce");
  graph.spawn("use the sum", hetero::in(reduced), [&] { seen = global; });
  graph.wait();
  CHECK(before == 1);
  CHECK(seen == p * (p + 1) / 2.0);
}

// Completes once `go` is set.
struct when_set {
  const std::atomic<bool>* go;
  bool test() const noexcept { return go->load(); }
};

// Idle workers poll what the graph waits for while the declaring thread is outside it. A long
// task completes an adopted operation and then waits for the operation's reader (without
// another worker polling, it gives up after 10 s). Two ways the polling could stop:
// - the worker polling the operation takes the long task: a worker asleep until then must
//   take over (the adopted operation first, then a short task and the long one, with several
//   timings, since which worker takes which depends on who sleeps where);
// - the long task is spawned and the operation adopted at once: the wake-up for the operation
//   is merged with the one on its way for the task, so the worker it wakes passes it on.
TEST_CASE("an adopted operation is polled while a worker runs a long task", "[task]") {
  for (int round = 0; round < 24; ++round) {
    const bool adopted_first = round < 16;
    INFO("round " << round
                  << (adopted_first ? ": adopted, then a short and the long task" : ": long task, then adopted"));
    hetero::task_graph graph({.workers = 3, .comm = MPI_COMM_SELF});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // both workers fall asleep
    auto done = graph.event("done");
    std::atomic<bool> go{false}, waiter_ran{false}, long_done{false};
    bool waiter_ran_first = false;
    const auto long_task = [&] {
      go = true;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!waiter_ran.load() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      waiter_ran_first = waiter_ran.load();
      long_done = true;
    };
    if (adopted_first) {
      graph.adopt(hetero::out(done), when_set{&go}, "set by the long task");
      graph.spawn("short", [] { std::this_thread::sleep_for(std::chrono::microseconds(200)); });
      std::this_thread::sleep_for(std::chrono::microseconds(100 * (round % 8)));
      graph.spawn("long", long_task);
    } else {
      graph.spawn("long", long_task);
      graph.adopt(hetero::out(done), when_set{&go}, "set by the long task");
    }
    graph.spawn("waiter", hetero::in(done), [&] { waiter_ran = true; });
    // Outside the graph until the long task ended (it ends within 10 s; 60 s if it never starts).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!long_done.load() && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(long_done.load());
    graph.wait();
    CHECK(waiter_ran_first);
  }
}

TEST_CASE("wait() tells the observer when it waits idle, as a task wait", "[task]") {
  wait_counter counter;
  hetero::set_observer(&counter);
  {
    hetero::task_graph graph({.workers = 1, .comm = MPI_COMM_SELF});  // only the thread in wait() can idle
    auto ready = graph.event("ready");
    bool ran = false;
    graph.adopt(hetero::out(ready), after_a_wait{&counter}, "released by the observer");
    graph.spawn(hetero::in(ready), [&] { ran = true; });
    graph.wait();
    CHECK(ran);
  }
  hetero::set_observer(nullptr);
  CHECK(counter.begins >= 1);
  CHECK(counter.begins == counter.ends);
  bool from_wait = false;
  for (const auto& label : counter.labels) from_wait = from_wait || label == "task_graph::wait";
  CHECK(from_wait);
}

TEST_CASE("adopt refuses remote targets and foreign events", "[task]") {
  hetero::task_graph graph({.workers = 1, .comm = MPI_COMM_SELF});
  hetero::task_graph other({.workers = 1, .comm = MPI_COMM_SELF});
  auto remote = graph.remote_event("R");
  auto theirs = other.event("theirs");
  CHECK_THROWS_WITH(graph.adopt(hetero::out(remote).to(0), hetero::mpi_request(MPI_REQUEST_NULL)),
                    ContainsSubstring("an adopted operation cannot notify other ranks"));
  CHECK_THROWS_WITH(graph.adopt(hetero::out(theirs), hetero::mpi_request(MPI_REQUEST_NULL)),
                    ContainsSubstring("of another task_graph"));
  int ran = 0;  // a completed request releases its readers at once
  graph.adopt(hetero::out(remote), hetero::mpi_request(MPI_REQUEST_NULL), "done already");
  graph.spawn(hetero::in(remote), [&] { ++ran; });
  graph.wait();
  CHECK(ran == 1);
}

// task on a GPU: device tasks on Kokkos::Cuda instances (two streams), launched by whichever
// worker takes them, pinned to one instance or not; a recording of device tasks replayed; and
// device work on two ranks ordered by a cross-rank event, the data travelling through a coarray.
// Every element is checked on the host against the serial definition.
#include <hetero/distarray/coarray.hpp>
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gpu_support.hpp"
#include "world.hpp"

namespace {

using gpu_test::device;
using graph_type = hetero::task_graph<device>;
using vector = Kokkos::View<double*, gpu_test::device_memory>;

// Two CUDA streams wrapped as Kokkos::Cuda instances: device tasks of one graph run on both.
struct two_streams {
  cudaStream_t streams[2]{};
  two_streams() {
    for (auto& s : streams) REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  }
  ~two_streams() {
    for (auto& s : streams) cudaStreamDestroy(s);
  }
  two_streams(const two_streams&) = delete;
  two_streams& operator=(const two_streams&) = delete;
  [[nodiscard]] std::vector<device> instances() const { return {device(streams[0]), device(streams[1])}; }
};

KOKKOS_INLINE_FUNCTION double start_value(int chain, std::int64_t i) {
  return 1000.0 * chain + static_cast<double>(i % 977);
}

// Which devices and worker threads ran the device tasks.
struct launches {
  std::mutex mutex;
  std::set<int> devices;
  std::set<std::thread::id> threads;
  std::vector<int> wrong_pins;
  void note(int expected_device = -1) {
    std::lock_guard lock(mutex);
    devices.insert(hetero::current_device());
    threads.insert(std::this_thread::get_id());
    if (expected_device >= 0 && hetero::current_device() != expected_device)
      wrong_pins.push_back(hetero::current_device());
  }
};

}  // namespace

// The test bodies are functions of external linkage that TEST_CASE calls: nvcc 13's cudafe++
// never finished (over 25 minutes) on a device lambda inside a task body lambda when the
// enclosing function has internal linkage, as TEST_CASE's and an anonymous namespace's do.
namespace gpu_task_test {

void device_tasks_on_two_streams() {
  two_streams streams;
  launches seen;
  const int chains = 24;
  const std::int64_t n = 1 << 16;
  std::vector<vector> data;
  for (int c = 0; c < chains; ++c) data.emplace_back("chain", n);
  {
    graph_type graph({.workers = 4, .comm = MPI_COMM_SELF}, streams.instances());
    REQUIRE(graph.devices() == 2);
    auto ready = graph.events("ready", chains);
    for (int c = 0; c < chains; ++c) {
      const vector v = data[static_cast<std::size_t>(c)];
      // fill (any device), then scale (pinned to c % 2), then add (any device): in order per chain.
      graph.spawn("fill", hetero::device(), hetero::out(ready(c)), [=, &seen](const device& space) {
        seen.note();
        Kokkos::parallel_for(
            "fill", Kokkos::RangePolicy<device>(space, 0, n),
            KOKKOS_LAMBDA(std::int64_t i) { v(i) = start_value(c, i); });
      });
      graph.spawn("scale", hetero::device(c % 2), hetero::inout(ready(c)), [=, &seen](const device& space) {
        seen.note(c % 2);
        Kokkos::parallel_for(
            "scale", Kokkos::RangePolicy<device>(space, 0, n), KOKKOS_LAMBDA(std::int64_t i) { v(i) *= 2; });
      });
      graph.spawn("add", hetero::device(), hetero::inout(ready(c)), [=, &seen](const device& space) {
        seen.note();
        Kokkos::parallel_for(
            "add", Kokkos::RangePolicy<device>(space, 0, n), KOKKOS_LAMBDA(std::int64_t i) { v(i) += 1; });
      });
    }
    graph.wait();
  }
  CHECK(seen.wrong_pins.empty());
  CHECK(seen.devices == std::set<int>{0, 1});
  INFO(seen.threads.size() << " threads launched device tasks");
  CHECK(seen.threads.size() >= 1);
  std::int64_t wrong = 0;
  for (int c = 0; c < chains; ++c) {
    const auto h = gpu_test::to_host(data[static_cast<std::size_t>(c)]);
    for (std::int64_t i = 0; i < n; ++i) wrong += h[static_cast<std::size_t>(i)] != 2 * start_value(c, i) + 1;
  }
  CHECK(wrong == 0);
}

void recording_replays() {
  two_streams streams;
  const std::int64_t n = 100000;
  vector v("v", n);
  Kokkos::View<double*, gpu_test::managed_memory> total("total", 1);
  std::vector<double> totals;
  {
    graph_type graph({.workers = 3, .comm = MPI_COMM_SELF}, streams.instances());
    auto e = graph.event();
    graph.spawn("zero", hetero::device(), hetero::out(e), [=](const device& space) {
      Kokkos::parallel_for(
          "zero", Kokkos::RangePolicy<device>(space, 0, n),
          KOKKOS_LAMBDA(std::int64_t i) { v(i) = static_cast<double>(i); });
    });
    graph.wait();
    const auto step = graph.record([&] {
      graph.spawn("increment", hetero::device(), hetero::inout(e), [=](const device& space) {
        Kokkos::parallel_for(
            "increment", Kokkos::RangePolicy<device>(space, 0, n), KOKKOS_LAMBDA(std::int64_t i) { v(i) += 1; });
      });
      graph.spawn("sum", hetero::device(1), hetero::inout(e), [=](const device& space) {
        double s = 0;
        Kokkos::parallel_reduce(
            "sum", Kokkos::RangePolicy<device>(space, 0, n),
            KOKKOS_LAMBDA(std::int64_t i, double& acc) { acc += v(i); }, s);
        total(0) = s;  // parallel_reduce into a scalar waits for the kernel
      });
      graph.spawn("keep", hetero::in(e), [&] { totals.push_back(total(0)); });
    });
    for (int round = 0; round < 5; ++round) graph.run(step);
  }
  REQUIRE(totals.size() == 5);
  for (std::size_t r = 0; r < totals.size(); ++r) {
    const double rounds = static_cast<double>(r + 1);
    CHECK(totals[r] ==
          static_cast<double>(n) * (static_cast<double>(n) - 1) / 2 + rounds * static_cast<double>(n));
  }
  const auto h = gpu_test::to_host(v);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += h[static_cast<std::size_t>(i)] != static_cast<double>(i) + 5;
  CHECK(wrong == 0);
}

void cross_rank_device_work() {
  const std::int64_t n = 50000;
  two_streams streams;
  hetero::coarray<double, 1, Kokkos::HostSpace> mailbox({n});
  const int p = mailbox.num_images(), me = mailbox.this_image();
  vector mine("mine", n);
  {
    graph_type graph({.workers = 2}, streams.instances());
    auto sent = graph.remote_events("sent", p);
    auto produced = graph.event("produced");  // orders this rank's own use of `mine`
    // Rank r computes its vector on the GPU and copies it into its coarray image ...
    for (int r = 0; r < p; ++r)
      graph.spawn("produce", hetero::on(r), hetero::device(), hetero::out(produced),
                  hetero::out(sent(r)).to(hetero::rank_set((r + 1) % p)), [=](const device& space) {
                    Kokkos::parallel_for(
                        "produce", Kokkos::RangePolicy<device>(space, 0, n),
                        KOKKOS_LAMBDA(std::int64_t i) { mine(i) = 3.0 * static_cast<double>(i) + r; });
                    Kokkos::deep_copy(space, mailbox.local(), mine);
                    space.fence();
                  });
    // ... and the next rank, once notified, fetches it and adds it on its GPU.
    for (int r = 0; r < p; ++r)
      graph.spawn("consume", hetero::on((r + 1) % p), hetero::device(), hetero::in(sent(r)),
                  hetero::inout(produced), [=](const device& space) {
                    const auto fetched = mailbox.get(r, hetero::section_spec<1>{});
                    const auto on_device = Kokkos::create_mirror_view_and_copy(gpu_test::device_memory{}, fetched);
                    Kokkos::parallel_for(
                        "consume", Kokkos::RangePolicy<device>(space, 0, n),
                        KOKKOS_LAMBDA(std::int64_t i) { mine(i) += 1000.0 * on_device(i); });
                    space.fence();
                  });
    graph.wait();
  }
  const int previous = (me + p - 1) % p;
  const auto h = gpu_test::to_host(mine);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double produced = 3.0 * static_cast<double>(i) + me;
    const double received = 3.0 * static_cast<double>(i) + previous;
    wrong += h[static_cast<std::size_t>(i)] != produced + 1000.0 * received;
  }
  CHECK(wrong == 0);
  mailbox.sync_all();
}

using host_ints = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;
using device_ints = hetero::data_view<device, host_ints>;
using device_ints_read = hetero::data_view<device, host_ints, true>;

// step r of a chain: x = (3 x + r + i) mod 1000003, on the GPU (kernel on the task's stream).
void step_on_device(const device& space, device_ints x, std::int64_t r) {
  Kokkos::parallel_for(
      "step", Kokkos::RangePolicy<device>(space, 0, static_cast<std::int64_t>(x.extent(0))),
      KOKKOS_LAMBDA(std::int64_t i) { x(i) = (3 * x(i) + r + i) % 1000003; });
}

// y = x + y on the GPU.
void add_on_device(const device& space, device_ints_read x, device_ints y) {
  Kokkos::parallel_for(
      "add", Kokkos::RangePolicy<device>(space, 0, static_cast<std::int64_t>(y.extent(0))),
      KOKKOS_LAMBDA(std::int64_t i) { y(i) = (x(i) + y(i)) % 1000003; });
}

void task_data_between_host_and_gpu() {
  two_streams streams;
  const std::int64_t n = 1 << 16;
  host_ints x("x", n), y("y", n);
  std::vector<std::int64_t> rx(static_cast<std::size_t>(n)), ry(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    x(i) = rx[static_cast<std::size_t>(i)] = i, y(i) = ry[static_cast<std::size_t>(i)] = 1;
  const auto step = [&](std::vector<std::int64_t>& v, std::int64_t r) {
    for (std::int64_t i = 0; i < n; ++i)
      v[static_cast<std::size_t>(i)] = (3 * v[static_cast<std::size_t>(i)] + r + i) % 1000003;
  };
  {
    graph_type graph({.workers = 4, .comm = MPI_COMM_SELF}, streams.instances());
    auto dx = graph.data("x", x);
    auto dy = graph.data("y", y);
    for (std::int64_t r = 0; r < 12; ++r) {
      // device, device on the other stream, host, either: every move between them
      if (r % 4 == 0 || r % 4 == 1)
        graph.spawn("device step", hetero::device(static_cast<int>(r % 2)), hetero::updates(dx),
                    [r](const device& space, device_ints v) { step_on_device(space, v, r); });
      if (r % 4 == 2)
        graph.spawn("host step", hetero::updates(dx), [r, n](auto v) {
          for (std::int64_t i = 0; i < n; ++i) v(i) = (3 * v(i) + r + i) % 1000003;
        });
      if (r % 4 == 3)
        graph.spawn("either step", hetero::updates(dx),
                    hetero::host_or_device(
                        [r, n](auto v) {
                          for (std::int64_t i = 0; i < n; ++i) v(i) = (3 * v(i) + r + i) % 1000003;
                        },
                        [r](const device& space, device_ints v) { step_on_device(space, v, r); }));
      step(rx, r);
      graph.spawn("add", hetero::device(), hetero::reads(dx), hetero::updates(dy), add_on_device);
      for (std::int64_t i = 0; i < n; ++i)
        ry[static_cast<std::size_t>(i)] =
            (rx[static_cast<std::size_t>(i)] + ry[static_cast<std::size_t>(i)]) % 1000003;
    }
    graph.wait();
    const auto stats = graph.statistics();
    CHECK(stats.moves.to_device.moves > 0);
    CHECK(stats.moves.to_host.moves > 0);
  }
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i)
    wrong += x(i) != rx[static_cast<std::size_t>(i)] || y(i) != ry[static_cast<std::size_t>(i)];
  CHECK(wrong == 0);
}

void tiles_across_ranks_on_gpu() {
  if (hetero::testing::world_size() < 2) SKIP("needs 2 or more ranks (a rank reads the next rank's tile)");
  graph_type graph({.workers = 2});
  const int p = graph.size(), me = graph.rank();
  const std::int64_t n = 4096;
  std::vector<host_ints> mine(static_cast<std::size_t>(p));
  mine[static_cast<std::size_t>(me)] = host_ints("tile", n);
  for (std::int64_t i = 0; i < n; ++i) mine[static_cast<std::size_t>(me)](i) = me * n + i;
  auto tiles = graph.tiles(
      "T", {p}, {n}, [](std::int64_t t) { return static_cast<int>(t); },
      [&](std::int64_t t) { return mine[static_cast<std::size_t>(t)]; });
  // In declaration order, tile r += tile r + 1 (the last adds the first, already updated), each
  // on its owner's GPU.
  for (int r = 0; r < p; ++r)
    graph.spawn("add next", hetero::device(), hetero::reads(tiles((r + 1) % p)), hetero::updates(tiles(r)),
                add_on_device);
  graph.wait();
  std::vector<std::vector<std::int64_t>> reference(static_cast<std::size_t>(p), std::vector<std::int64_t>(n));
  for (int t = 0; t < p; ++t)
    for (std::int64_t i = 0; i < n; ++i)
      reference[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] = t * n + i;
  for (int r = 0; r < p; ++r)
    for (std::int64_t i = 0; i < n; ++i) {
      auto& own = reference[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      own = (own + reference[static_cast<std::size_t>((r + 1) % p)][static_cast<std::size_t>(i)]) % 1000003;
    }
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i)
    wrong += mine[static_cast<std::size_t>(me)](i) !=
             reference[static_cast<std::size_t>(me)][static_cast<std::size_t>(i)];
  CHECK(wrong == 0);
}

}  // namespace gpu_task_test

TEST_CASE("task data moves between host memory and the GPU's, on two streams", "[gpu][task][data]") {
  gpu_task_test::task_data_between_host_and_gpu();
}

TEST_CASE("tiles read on other ranks reach their GPUs", "[gpu][task][data]") {
  gpu_task_test::tiles_across_ranks_on_gpu();
}

TEST_CASE("device tasks on two CUDA streams, from any worker, pinned or not, in dependency order", "[gpu][task]") {
  gpu_task_test::device_tasks_on_two_streams();
}

TEST_CASE("a recording of device and host tasks replays in order", "[gpu][task]") {
  gpu_task_test::recording_replays();
}

TEST_CASE("device work on one rank feeds device work on the next through a cross-rank event", "[gpu][task]") {
  gpu_task_test::cross_rank_device_work();
}

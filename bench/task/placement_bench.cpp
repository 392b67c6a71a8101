// Where tasks with a host and a device body run (hetero::host_or_device): 256 tasks per
// iteration, each updating a piece of task data of its own (independent tasks) or all the same
// one (a chain), whose bodies busy-wait a set time on each side. The device is a host space
// standing in for a GPU (this machine has none): a device task holds one of the graph's
// workers, as a host task does, so the two sides are two kinds of work on the same cores, and
// the times are the bodies', not a GPU's. Families: the device 10x faster than the host
// (device 40 us, host 400 us), 1000x faster (20 us against 20 ms: a host core beside an H200 at
// a tile kernel, where every run on the host costs a thousand on the device) and both sides
// equal (200 us each). Baseline: every task forced on the device (device()); host_only: forced
// on the host (a plain body); hetero_either: the graph picks. Each variant runs one untimed iteration first (the
// calibration of the either tasks; its time is the counter calibration_ms). Counters: the fraction of the either
// tasks that ran on the device in the timed iterations, from graph.statistics().
#include <hetero/task.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_main.hpp"

namespace {

using device_space = Kokkos::Serial;
using graph_type = hetero::task_graph<device_space>;
using piece = Kokkos::View<double*, Kokkos::HostSpace>;

constexpr int tasks = 256;
constexpr int workers = 2;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Busy for `us` microseconds, then touches the piece (so that the data is used where it runs).
template <class View>
void work(int us, const View& v) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
  v(0) += 1;
}

enum class side { device, host, either };

void place(benchmark::State& state, side where, int host_us, int device_us, bool chain) {
  graph_type graph({.workers = workers, .comm = MPI_COMM_SELF});
  std::vector<piece> views;
  std::vector<hetero::task_data<piece>> data;
  for (int t = 0; t < (chain ? 1 : tasks); ++t) {
    views.emplace_back("piece", 1024);
    data.push_back(graph.data("piece" + std::to_string(t), views.back()));
  }
  const auto host = [host_us](auto v) { work(host_us, v); };
  const auto device = [device_us](const device_space&, auto v) { work(device_us, v); };
  const auto iteration = [&] {
    for (int t = 0; t < tasks; ++t) {
      const auto& d = data[chain ? 0 : static_cast<std::size_t>(t)];
      if (where == side::device) graph.spawn("task", hetero::device(), hetero::updates(d), device);
      if (where == side::host) graph.spawn("task", hetero::updates(d), host);
      if (where == side::either) graph.spawn("task", hetero::updates(d), hetero::host_or_device(host, device));
    }
    graph.wait();
  };
  // Calibration (the first runs of each side) happens in an untimed first iteration, as a
  // program that runs its graph more than once pays it once; every variant gets one.
  const auto calibrating = std::chrono::steady_clock::now();
  iteration();
  state.counters["calibration_ms"] = seconds_since(calibrating) * 1e3;
  std::uint64_t on_device = 0, total = 0;
  for (auto _ : state) {
    graph.reset_statistics();
    const auto start = std::chrono::steady_clock::now();
    iteration();
    hetero::bench::set_iteration_time(state, seconds_since(start));
    if (const auto* l = graph.statistics().find("task")) {
      on_device += l->device_runs;
      total += l->device_runs + l->host_runs;
    }
  }
  if (total > 0) state.counters["device_fraction"] = static_cast<double>(on_device) / static_cast<double>(total);
}

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(hetero::bench::smoke_run() ? 2 : 6);
};

template <int Host, int Device, bool Chain>
void device_only(benchmark::State& s) {
  place(s, side::device, Host, Device, Chain);
}
template <int Host, int Device, bool Chain>
void host_only(benchmark::State& s) {
  place(s, side::host, Host, Device, Chain);
}
template <int Host, int Device, bool Chain>
void either(benchmark::State& s) {
  place(s, side::either, Host, Device, Chain);
}

template <int Host, int Device, bool Chain>
int add(const std::string& family) {
  hetero::bench::add(family + "/baseline_device_only", device_only<Host, Device, Chain>, configure);
  hetero::bench::add(family + "/host_only", host_only<Host, Device, Chain>, configure);
  hetero::bench::add(family + "/hetero_either", either<Host, Device, Chain>, configure);
  return 0;
}

const int registered[] = {
    add<400, 40, false>("placement_device_10x_faster"), add<400, 40, true>("placement_device_10x_faster_chain"),
    add<20000, 20, false>("placement_device_1000x_faster"), add<200, 200, false>("placement_equal")};

}  // namespace

HETERO_BENCHMARK_MAIN()

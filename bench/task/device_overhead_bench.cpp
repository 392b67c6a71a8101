// The task graph's cost per device task (issue 68, point 3): N device tasks, each launching one
// tiny kernel (one thread writes one number) on the device's instance, as a chain (each after
// the one before: inout of one event) and independent, against plain Kokkos on the same
// instance:
//   baseline_fenced  launch, fence, N times: what a user writes to run the kernels one after
//                    another and know when each is done (a device task is fenced before its
//                    successors are released);
//   launches_only    N launches and one fence: the instance's launch rate, which no task system
//                    on it can beat.
// One iteration runs N = 1000 kernels, reported in milliseconds: the time per iteration in ms
// is the time per task in us. On a build without a GPU the device is Kokkos::Serial standing in
// (as in the task tests: its "kernel" runs on the launching thread); the GPU kit runs the CUDA
// build, where it is the GPU, and prints each case's bound (N launches, and for the fenced and
// task cases N waits, at the measured rates).
#include <hetero/task.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <stdexcept>
#include <type_traits>

#include "bench_main.hpp"

namespace {

// The GPU where there is one, else a host space standing in.
using device_space = std::conditional_t<
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible,
    Kokkos::Serial, Kokkos::DefaultExecutionSpace>;
using cell = Kokkos::View<int*, device_space::memory_space>;

constexpr int tasks = 1000;

// The tiny kernel: one thread writes `value`. (A functor: nvcc takes no device lambda here.)
struct touch {
  cell v;
  int value;
  KOKKOS_INLINE_FUNCTION void operator()(int) const { v(0) = value; }
};

void launch(const device_space& space, const cell& v, int value) {
  Kokkos::parallel_for("hetero::bench tiny kernel", Kokkos::RangePolicy<device_space>(space, 0, 1),
                       touch{v, value});
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The last value written, which every case checks once (the kernels ran, in order for a chain).
int last_value(const cell& v) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  return h(0);
}

void report(benchmark::State& state, bool fenced) {
  hetero::bench::device_work work;
  work.launches = tasks;
  work.host_waits = fenced ? tasks : 1;
  hetero::bench::report_bound(state, work);
}

void plain_kokkos(benchmark::State& state, bool fenced) {
  const device_space space;
  const cell v("v", 1);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < tasks; ++t) {
      launch(space, v, t);
      if (fenced) space.fence();
    }
    space.fence();
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
  if (last_value(v) != tasks - 1) throw std::runtime_error("plain Kokkos: the last kernel did not run last");
  report(state, fenced);
}

void hetero_tasks(benchmark::State& state, bool chain) {
  hetero::task_graph<device_space> graph({.workers = 2, .comm = MPI_COMM_SELF});
  const auto e = graph.event();
  const cell v("v", 1);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < tasks; ++t) {
      const auto body = [v, t](const device_space& space) { launch(space, v, t); };
      if (chain) {
        graph.spawn("tiny", hetero::device(), hetero::inout(e), body);
      } else {
        graph.spawn("tiny", hetero::device(), body);
      }
    }
    graph.wait();
    hetero::bench::set_iteration_time(state, seconds_since(start));
  }
  if (chain && last_value(v) != tasks - 1)
    throw std::runtime_error("hetero: the chain's last task did not run last");
  report(state, true);
}

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
};

const int registered[] = {
    hetero::bench::add(
        "device_tasks/baseline_fenced", [](benchmark::State& s) { plain_kokkos(s, true); }, configure),
    hetero::bench::add(
        "device_tasks/launches_only", [](benchmark::State& s) { plain_kokkos(s, false); }, configure),
    hetero::bench::add(
        "device_tasks/hetero_chain", [](benchmark::State& s) { hetero_tasks(s, true); }, configure),
    hetero::bench::add(
        "device_tasks/hetero_independent", [](benchmark::State& s) { hetero_tasks(s, false); }, configure),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

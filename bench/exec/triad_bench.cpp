// The STREAM triad a = b + s c on 2^26 doubles per vector (1.5 GiB moved per call): the
// device's bandwidth as plain Kokkos reaches it, and hetero's split loop over the same vectors.
// Family triad (its baseline plain Kokkos on the device, the best a user would run there):
//  - baseline_plain_kokkos: Kokkos::parallel_for on the device alone;
//  - host_cores_plain_kokkos: the same on all of the rank's host cores (CUDA builds only);
//  - hetero_device_alone: hetero::parallel_for at weight 0 on mirrored arrays;
//  - hetero_w<permille>: a manual weight (0.01, 0.05, 0.2): its counters device_s and host_s
//    are each side's own time of the last call, so a device part slower than its share of the
//    device alone shows (the device's launch delayed by the host's part);
//  - hetero_w50_half_cores: weight 0.05 with the host part on half of the cores;
//  - hetero_tuned: the default tuner, converged before the first timing.
// In a CUDA run of the GPU kit each case's bound is the triad's bytes at the measured bandwidth.
#include <hetero/exec.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "bench_main.hpp"

namespace {

using device_space = hetero::split_spaces::device;
using host_space = hetero::split_spaces::host;
using policy = hetero::split_policy<device_space, host_space>;
using vector = hetero::mirrored_array<double*, device_space, host_space>;

struct vectors {
  std::int64_t n = -1;
  vector a, b, c;
};

vectors& vectors_for(std::int64_t n) {
  static vectors v;
  static const bool hooked = (Kokkos::push_finalize_hook([] { v = vectors{}; }), true);
  (void)hooked;
  if (v.n != n) {
    v.a = vector("a", n), v.b = vector("b", n), v.c = vector("c", n);
    Kokkos::deep_copy(v.b.host_view(), 1.0);
    Kokkos::deep_copy(v.c.host_view(), 2.0);
    v.b.modify_host(), v.c.modify_host();
    v.b.sync_device(), v.c.sync_device();
    v.n = n;
  }
  return v;
}

struct triad_body {
  double s;
  template <class A, class B, class C>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const A& a, const B& b, const C& c) const {
    a(i) = b(i) + s * c(i);
  }
};

// Every case's bound (24 bytes an element at the measured bandwidth) and its rate.
void report_triad(benchmark::State& state, std::int64_t n) {
  hetero::bench::report_bound(state, hetero::bench::triad_work(n));
  state.counters["GB_per_s"] =
      benchmark::Counter(24.0 * static_cast<double>(n) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

template <class A, class B, class C>
struct plain_triad {
  A a;
  B b;
  C c;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { a(i) = b(i) + 3.0 * c(i); }
};

template <class Space, class A, class B, class C>
void run_plain(benchmark::State& state, std::int64_t n, A a, B b, C c) {
  const plain_triad<A, B, C> body{a, b, c};
  for (auto _ : state) {
    Kokkos::parallel_for("triad_plain", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(0, n), body);
    Space().fence();
  }
}

template <class Space>
void plain_kokkos(benchmark::State& state) {
  auto& v = vectors_for(state.range(0));
  if constexpr (std::is_same_v<typename Space::memory_space, typename device_space::memory_space>) {
    run_plain<Space>(state, v.n, v.a.device_view(), v.b.device_view(), v.c.device_view());
    v.a.modify_device();
  } else {
    v.b.sync_host(), v.c.sync_host();
    run_plain<Space>(state, v.n, v.a.host_view(), v.b.host_view(), v.c.host_view());
    v.a.modify_host();
  }
  report_triad(state, v.n);
}

void split(benchmark::State& state, const char* label, policy range,
           const hetero::work_sharing& sharing = hetero::default_work_sharing()) {
  auto& v = vectors_for(state.range(0));
  const auto run = [&] {
    hetero::parallel_for(sharing, label, range,
                         hetero::access(hetero::writes(v.a), hetero::reads(v.b), hetero::reads(v.c)),
                         triad_body{3.0});
  };
  for (int k = 0; k < 3; ++k) run();  // the rows each side reads are moved there once
  for (auto _ : state) run();
  state.counters["device_s"] = sharing.gpu_seconds(label);
  state.counters["host_s"] = sharing.cpu_seconds(label);
  state.counters["weight"] = range.weight().value_or(sharing.cpu_weight(label));
  report_triad(state, v.n);
}

void device_alone(benchmark::State& state) {
  split(state, "bench_triad_device_alone", policy(0, state.range(0)).weight(0.0));
}

template <int Permille>
void manual(benchmark::State& state) {
  static const std::string label = "bench_triad_w" + std::to_string(Permille);
  split(state, label.c_str(), policy(0, state.range(0)).weight(Permille / 1000.0));
}

// The same split at 0.05 with the host part on half of the cores (split_config::host_cores):
// whether the two parts then overlap better shows whether the host part's threads hold back the
// thread that drives the device.
void manual_half_cores(benchmark::State& state) {
  static const hetero::work_sharing half(hetero::split_config{
      .host_cores = std::max(1, static_cast<int>(Kokkos::DefaultHostExecutionSpace().concurrency()) / 2)});
  split(state, "bench_triad_w50_half_cores", policy(0, state.range(0)).weight(0.05), half);
}

void tuned(benchmark::State& state) { split(state, "bench_triad_tuned", policy(0, state.range(0))); }

const auto sizes = [](benchmark::internal::Benchmark* b) {
  // Real time: the work runs on other threads than the one Google Benchmark's CPU time counts.
  b->Arg(hetero::bench::smoke_run() ? 1 << 16 : 1 << 26)->Unit(benchmark::kMillisecond)->UseRealTime();
};

const int registered[] = {
    hetero::bench::add("triad/baseline_plain_kokkos", plain_kokkos<device_space>, sizes),
    std::is_same_v<device_space, Kokkos::DefaultHostExecutionSpace>
        ? 0
        : hetero::bench::add("triad/host_cores_plain_kokkos", plain_kokkos<Kokkos::DefaultHostExecutionSpace>,
                             sizes),
    hetero::bench::add("triad/hetero_device_alone", device_alone, sizes),
    hetero::bench::add("triad/hetero_w10", manual<10>, sizes),
    hetero::bench::add("triad/hetero_w50", manual<50>, sizes),
    hetero::bench::add("triad/hetero_w200", manual<200>, sizes),
    hetero::bench::add("triad/hetero_w50_half_cores", manual_half_cores, sizes),
    hetero::bench::add("triad/hetero_tuned", tuned, sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

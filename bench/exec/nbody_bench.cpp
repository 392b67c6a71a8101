// Work sharing on N-body forces (direct all-pairs, double precision). On a CPU-only node OpenMP
// on the rank's cores stands in for the device and Serial is the host; in a CUDA build the
// device is the GPU, the host its node's cores, and nbody_step/host_cores_plain_kokkos times
// plain Kokkos on all the host cores (the GPU alone is baseline_plain_kokkos). In a split the two own
// disjoint cores (the device part keeps the cores the host part leaves), so a split can win only
// by using the machine better:
//  - nbody_step: one force evaluation of all N particles (the example's two loops), the baseline plain Kokkos on
//  all of the
//    rank's cores; hetero's device side alone (w = 0, also all cores) and the split chosen by the
//    (converged) default tuner, which settles on the faster of the two;
//  - nbody_kernel (16,384 bodies, the device alone, plain Kokkos): the force kernel as it was
//    (one thread per body, 1 / std::sqrt), with hetero::rsqrt, with 8 sources a step, and the
//    example's (nbody_kernels.hpp: partial sums over slices of the sources, then their sum) in
//    32 and 64 slices and in as many as the example takes; each checked against a serial loop;
//  - convergence: N-body steps from the seed paper's start w = 0.2, with the default tuner and
//    with the paper's 0.01 rule, in the same run; the counter steps_to_5pct is the first step
//    whose time is within 5 % of the time the tuner settles at (median of the last 10 steps). --exec_trace=FILE
//    writes each tuner's last sequence (per step: device and host time, weight, step time) for
//    bench/exec/plot_convergence.sh.
// A quick run (--benchmark_min_time below 0.1 s, as in the test command's smoke run) uses small
// sizes and few steps.
#include <hetero/core/math.hpp>
#include <hetero/exec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bench_main.hpp"
#include "nbody_kernels.hpp"

namespace {

using device_space = hetero::split_spaces::device;  // OpenMP in a CPU-only build, the GPU in a CUDA one
using host_space = hetero::split_spaces::host;      // Serial in a CPU-only build, the host cores in a CUDA one
using policy = hetero::split_policy<device_space, host_space>;
template <class T>
using array = hetero::mirrored_array<T, device_space, host_space>;

bool g_quick = false;
std::string g_trace_file;

struct step_record {
  int step;
  double device, host, weight, seconds;
};
std::vector<step_record> g_last_trace[2];
std::vector<double> g_steps_to_5pct[2];

struct particles {
  std::int64_t n = -1;
  array<double* [4]> all;
  array<double* [3]> acc;
  std::int64_t slices = 1;
  array<double* [3]> partial;  // the example's partial sums (nbody::partial_forces)
};

particles& particles_for(std::int64_t n) {
  static particles p;
  static const bool hooked = (Kokkos::push_finalize_hook([] { p = particles{}; }), true);
  (void)hooked;
  if (p.n != n) {
    p.all = array<double* [4]>("all", n);
    p.acc = array<double* [3]>("acc", n);
    p.slices = nbody::force_slices(n, n);
    p.partial = array<double* [3]>("partial", n * p.slices);
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::int64_t i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) p.all.host_view()(i, d) = u(gen);
      p.all.host_view()(i, 3) = 1.0 / static_cast<double>(n);
    }
    p.all.modify_host();
    p.n = n;
  }
  return p;
}

// A loop body of the example (element index, then its views) as a plain Kokkos functor.
template <class Body, class A, class B>
struct plain_body {
  Body body;
  A a;
  B b;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { body(i, a, b); }
};

template <class Space, class All, class Partial, class Acc>
void plain_forces(std::int64_t n, std::int64_t slices, const All& all, const Partial& partial, const Acc& acc) {
  using range = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
  const nbody::partial_forces forces{0, n, n, slices, 0.05 * 0.05};
  const nbody::sum_partials sum{n, slices};
  Kokkos::parallel_for("nbody_plain_forces", range(0, n * slices),
                       plain_body<nbody::partial_forces, All, Partial>{forces, all, partial});
  Kokkos::parallel_for("nbody_plain_sum", range(0, n),
                       plain_body<nbody::sum_partials, Partial, Acc>{sum, partial, acc});
  Space().fence();
}

void step_plain_kokkos(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& p = particles_for(n);
  p.all.sync_device();  // the positions were drawn on the host
  for (auto _ : state)
    plain_forces<device_space>(n, p.slices, p.all.device_view(), p.partial.device_view(), p.acc.device_view());
  p.acc.modify_device();
  hetero::bench::report_bound(state, hetero::bench::nbody_forces_work(n, n));
}

// --- the force kernel's variants on the device alone (plain Kokkos), beside its bound --------------
// One thread per particle as the example had it (1 / std::sqrt), with hetero::rsqrt, and with
// hetero::rsqrt and `Unroll` sources per step (independent interactions for the FP64 pipe to
// overlap); the example's kernel now is below (kernel_example).
template <bool Rsqrt, int Unroll>
struct forces_variant {
  Kokkos::View<const double* [4], Kokkos::LayoutRight, device_space::memory_space> all;
  Kokkos::View<double* [3], Kokkos::LayoutRight, device_space::memory_space> acc;
  std::int64_t count;
  double softening2;

  KOKKOS_INLINE_FUNCTION double inverse_root(double r2) const {
    if constexpr (Rsqrt) {
      return hetero::rsqrt(r2);
    } else {
      return 1.0 / std::sqrt(r2);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const double xi = all(i, 0), yi = all(i, 1), zi = all(i, 2);
    double ax = 0, ay = 0, az = 0;
    std::int64_t j = 0;
    for (; j + Unroll <= count; j += Unroll) {
      double dx[Unroll], dy[Unroll], dz[Unroll], s[Unroll];
      for (int u = 0; u < Unroll; ++u) {
        dx[u] = all(j + u, 0) - xi, dy[u] = all(j + u, 1) - yi, dz[u] = all(j + u, 2) - zi;
        const double inv = inverse_root(dx[u] * dx[u] + dy[u] * dy[u] + dz[u] * dz[u] + softening2);
        s[u] = all(j + u, 3) * inv * inv * inv;
      }
      for (int u = 0; u < Unroll; ++u) ax += s[u] * dx[u], ay += s[u] * dy[u], az += s[u] * dz[u];
    }
    for (; j < count; ++j) {
      const double dx = all(j, 0) - xi, dy = all(j, 1) - yi, dz = all(j, 2) - zi;
      const double inv = inverse_root(dx * dx + dy * dy + dz * dz + softening2);
      const double s = all(j, 3) * inv * inv * inv;
      ax += s * dx, ay += s * dy, az += s * dz;
    }
    acc(i, 0) = ax, acc(i, 1) = ay, acc(i, 2) = az;
  }
};

// Largest difference of the device's forces from a serial loop over the host copy, at 64
// particles (the variants must compute the example's forces, whatever their order of sums). Each
// difference is measured against the sum of its terms' magnitudes: signed terms cancel, so a
// force near zero would make a relative difference meaningless.
double worst_difference(particles& p) {
  p.all.sync_host();
  const auto all = p.all.host_view();
  auto acc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.acc.device_view());
  double worst = 0;
  for (std::int64_t i = 0; i < p.n; i += std::max<std::int64_t>(1, p.n / 64)) {
    double expected[3] = {0, 0, 0}, magnitude[3] = {0, 0, 0};
    for (std::int64_t j = 0; j < p.n; ++j) {
      const double dx = all(j, 0) - all(i, 0), dy = all(j, 1) - all(i, 1), dz = all(j, 2) - all(i, 2);
      const double inv = 1.0 / std::sqrt(dx * dx + dy * dy + dz * dz + 0.05 * 0.05);
      const double s = all(j, 3) * inv * inv * inv;
      expected[0] += s * dx, expected[1] += s * dy, expected[2] += s * dz;
      magnitude[0] += std::abs(s * dx), magnitude[1] += std::abs(s * dy), magnitude[2] += std::abs(s * dz);
    }
    for (int d = 0; d < 3; ++d)
      worst = std::max(worst, std::abs(acc(i, d) - expected[d]) / (magnitude[d] + 1e-300));
  }
  return worst;
}

template <class Run>
void time_kernel(benchmark::State& state, particles& p, Run&& run) {
  run();
  device_space().fence();
  const double worst = worst_difference(p);
  if (!(worst < 1e-12)) {
    state.SkipWithError(("forces differ from a serial loop by " + std::to_string(worst)).c_str());
    return;
  }
  for (auto _ : state) {
    run();
    device_space().fence();
  }
  state.counters["worst_scaled_difference"] = worst;
  hetero::bench::report_bound(state, hetero::bench::nbody_forces_work(p.n, p.n));
}

template <bool Rsqrt, int Unroll>
void kernel_variant(benchmark::State& state) {
  auto& p = particles_for(state.range(0));
  p.all.sync_device();
  const forces_variant<Rsqrt, Unroll> f{p.all.device_view(), p.acc.device_view(), p.n, 0.05 * 0.05};
  time_kernel(state, p, [&] {
    Kokkos::parallel_for("nbody_variant",
                         Kokkos::RangePolicy<device_space, Kokkos::IndexType<std::int64_t>>(0, p.n), f);
  });
  p.acc.modify_device();
}

// The example's two loops (nbody::partial_forces, then their sum) in `Slices` slices of the
// sources, 0: as many as the example takes (nbody::force_slices).
template <std::int64_t Slices>
void kernel_example(benchmark::State& state) {
  auto& p = particles_for(state.range(0));
  p.all.sync_device();
  const std::int64_t slices = Slices > 0 ? Slices : p.slices;
  Kokkos::View<double* [3], Kokkos::LayoutRight, device_space::memory_space> partial("partial", slices * p.n);
  time_kernel(state, p,
              [&] { plain_forces<device_space>(p.n, slices, p.all.device_view(), partial, p.acc.device_view()); });
  p.acc.modify_device();
  state.counters["slices"] = static_cast<double>(slices);
}

// The host cores alone, plain Kokkos on all of them: in a build with a GPU the other side's
// best (in a CPU-only build the device is these cores, and this case is not registered).
void step_host_cores(benchmark::State& state) {
  using host_all = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t n = state.range(0);
  auto& p = particles_for(n);
  p.all.sync_host();
  for (auto _ : state)
    plain_forces<host_all>(n, p.slices, p.all.host_view(), p.partial.host_view(), p.acc.host_view());
  p.acc.modify_host();
  state.counters["threads"] = host_all().concurrency();
}

// The example's two loops (nbody.cpp), the forces under `label` and their sum under label_sum;
// a weight given applies to both.
void run_split(std::int64_t n, const std::string& label, std::optional<double> weight = std::nullopt) {
  auto& p = particles_for(n);
  const auto range = [&](std::int64_t items) {
    return weight ? policy(0, items).weight(*weight) : policy(0, items);
  };
  hetero::parallel_for(label, range(n * p.slices),
                       hetero::access(hetero::reads_all(p.all), hetero::writes(p.partial)),
                       nbody::partial_forces{0, n, n, p.slices, 0.05 * 0.05});
  hetero::parallel_for(label + "_sum", range(n),
                       hetero::access(hetero::reads_all(p.partial), hetero::writes(p.acc)),
                       nbody::sum_partials{n, p.slices});
}

void step_device_alone(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  for (auto _ : state) run_split(n, "bench_nbody_device_alone", 0.0);
  hetero::bench::report_bound(state, hetero::bench::nbody_forces_work(n, n));
}

void step_split(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  static std::int64_t warmed_up = -1;  // the tuner converges once, before the first timing
  if (warmed_up != n)
    for (int k = 0; k < 4; ++k) run_split(n, "bench_nbody_step");
  warmed_up = n;
  for (auto _ : state) run_split(n, "bench_nbody_step");
  state.counters["weight"] = hetero::cpu_weight("bench_nbody_step");
  state.SetLabel(hetero::split_statistics("bench_nbody_step").decision);
  hetero::bench::report_bound(state, hetero::bench::nbody_forces_work(n, n));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

template <hetero::tuner_kind Kind>
void convergence(benchmark::State& state) {
  constexpr int which = Kind == hetero::tuner_kind::model ? 0 : 1;
  const char* label = which == 0 ? "bench_convergence_model" : "bench_convergence_fixed_step";
  const std::int64_t n = state.range(0);
  const int steps = g_quick ? 4 : 40;
  for (auto _ : state) {
    hetero::set_tuner(label, Kind);  // a fresh tuner: nothing learnt in an earlier round
    hetero::reset_weight(label, 0.2);
    std::vector<step_record> trace;
    double total = 0;
    for (int s = 1; s <= steps; ++s) {
      const double weight = hetero::cpu_weight(label);
      hetero::stopwatch watch;
      run_split(n, label);
      const double seconds = watch.seconds();
      total += seconds;
      trace.push_back({s, hetero::gpu_seconds(label), hetero::cpu_seconds(label), weight, seconds});
    }
    // "Its best": the time the tuner settles at, the median of the last 10 steps (both tuners
    // have settled by then). The minimum of all steps would instead follow this machine's drift
    // (phases 5 to 10 % apart within one sequence) and one lucky step.
    std::vector<double> last;
    for (std::size_t k = trace.size() - std::min<std::size_t>(10, trace.size()); k < trace.size(); ++k)
      last.push_back(trace[k].seconds);
    const double settled = median(last);
    const auto first_near = std::find_if(trace.begin(), trace.end(),
                                         [&](const step_record& r) { return r.seconds <= 1.05 * settled; });
    state.SetIterationTime(total);
    state.counters["steps_to_5pct"] = first_near->step;
    state.counters["settled_seconds"] = settled;
    state.counters["final_weight"] = trace.back().weight;
    g_steps_to_5pct[which].push_back(first_near->step);
    g_last_trace[which] = trace;
  }
}

const auto step_sizes = [](benchmark::internal::Benchmark* b) {
  b->Arg(g_quick ? 512 : 12288)->Unit(benchmark::kMillisecond);
};
const auto convergence_setup = [](benchmark::internal::Benchmark* b) {
  b->Arg(g_quick ? 512 : 8192)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
};

const auto kernel_sizes = [](benchmark::internal::Benchmark* b) {
  b->Arg(g_quick ? 512 : 16384)->Unit(benchmark::kMillisecond);
};

const int registered[] = {
    hetero::bench::add("nbody_kernel/baseline_one_thread_per_body", kernel_variant<false, 1>, kernel_sizes),
    hetero::bench::add("nbody_kernel/rsqrt", kernel_variant<true, 1>, kernel_sizes),
    hetero::bench::add("nbody_kernel/rsqrt_unroll8", kernel_variant<true, 8>, kernel_sizes),
    hetero::bench::add("nbody_kernel/example_slices32", kernel_example<32>, kernel_sizes),
    hetero::bench::add("nbody_kernel/example_slices64", kernel_example<64>, kernel_sizes),
    hetero::bench::add("nbody_kernel/example", kernel_example<0>, kernel_sizes),
    hetero::bench::add("nbody_step/baseline_plain_kokkos", step_plain_kokkos, step_sizes),
    hetero::bench::add("nbody_step/hetero_device_alone", step_device_alone, step_sizes),
    hetero::bench::add("nbody_step/hetero_split", step_split, step_sizes),
    std::is_same_v<device_space, Kokkos::DefaultHostExecutionSpace>
        ? 0
        : hetero::bench::add("nbody_step/host_cores_plain_kokkos", step_host_cores, step_sizes),
    hetero::bench::add("convergence/model_tuner", convergence<hetero::tuner_kind::model>, convergence_setup),
    hetero::bench::add("convergence/fixed_step_tuner", convergence<hetero::tuner_kind::fixed_step>,
                       convergence_setup),
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--exec_trace=")) {
      g_trace_file = a.substr(13);
      continue;
    }
    if (a.starts_with("--benchmark_min_time=")) g_quick = std::stod(std::string(a.substr(21))) < 0.1;
    args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  char** arguments = args.data();
  const int rc = hetero::bench::run_benchmarks(count, arguments);
  if (!g_steps_to_5pct[0].empty())
    std::printf(
        "convergence from w = 0.2, steps until the step time is within 5%% of its settled time (median over %zu "
        "rounds): model tuner %.1f, fixed-step (paper) tuner %.1f\n",
        g_steps_to_5pct[0].size(), median(g_steps_to_5pct[0]), median(g_steps_to_5pct[1]));
  if (!g_trace_file.empty()) {
    std::ofstream out(g_trace_file);
    out << "# tuner step device_seconds host_seconds weight step_seconds\n";
    const char* names[2] = {"model", "fixed_step"};
    for (int k = 0; k < 2; ++k)
      for (const auto& r : g_last_trace[k])
        out << names[k] << ' ' << r.step << ' ' << r.device << ' ' << r.host << ' ' << r.weight << ' ' << r.seconds
            << '\n';
  }
  return rc;
}

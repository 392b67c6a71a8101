// Work sharing on N-body forces (direct all-pairs, double precision). On a CPU-only node OpenMP
// on the rank's cores stands in for the device and Serial is the host; in a CUDA build the
// device is the GPU, the host its node's cores, and nbody_step/host_cores_plain_kokkos times
// plain Kokkos on all the host cores (the GPU alone is baseline_plain_kokkos). In a split the two own
// disjoint cores (the device part keeps the cores the host part leaves), so a split can win only
// by using the machine better:
//  - nbody_step: one force evaluation of all N particles, the baseline plain Kokkos on all of the
//    rank's cores; hetero's device side alone (w = 0, also all cores) and the split chosen by the
//    (converged) default tuner, which settles on the faster of the two;
//  - convergence: N-body steps from the seed paper's start w = 0.2, with the default tuner and
//    with the paper's 0.01 rule, in the same run; the counter steps_to_5pct is the first step
//    whose time is within 5 % of the time the tuner settles at (median of the last 10 steps). --exec_trace=FILE
//    writes each tuner's last sequence (per step: device and host time, weight, step time) for
//    bench/exec/plot_convergence.sh.
// A quick run (--benchmark_min_time below 0.1 s, as in the test command's smoke run) uses small
// sizes and few steps.
#include <hetero/exec.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
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
};

particles& particles_for(std::int64_t n) {
  static particles p;
  static const bool hooked = (Kokkos::push_finalize_hook([] { p = particles{}; }), true);
  (void)hooked;
  if (p.n != n) {
    p.all = array<double* [4]>("all", n);
    p.acc = array<double* [3]>("acc", n);
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

void step_plain_kokkos(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& p = particles_for(n);
  const auto all = p.all.device_view();
  const auto acc = p.acc.device_view();
  const nbody::forces forces{0, n, 0.05 * 0.05};
  for (auto _ : state) {
    Kokkos::parallel_for(
        "nbody_plain_kokkos", Kokkos::RangePolicy<device_space, Kokkos::IndexType<std::int64_t>>(0, n),
        KOKKOS_LAMBDA(std::int64_t i) { forces(i, all, acc); });
    device_space().fence();
  }
}

// The host cores alone, plain Kokkos on all of them: in a build with a GPU the other side's
// best (in a CPU-only build the device is these cores, and this case is not registered).
void step_host_cores(benchmark::State& state) {
  using host_all = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t n = state.range(0);
  auto& p = particles_for(n);
  p.all.sync_host();
  const auto all = p.all.host_view();
  const auto acc = p.acc.host_view();
  const nbody::forces forces{0, n, 0.05 * 0.05};
  for (auto _ : state) {
    Kokkos::parallel_for("nbody_host_cores", Kokkos::RangePolicy<host_all, Kokkos::IndexType<std::int64_t>>(0, n),
                         [=](std::int64_t i) { forces(i, all, acc); });
    host_all().fence();
  }
  state.counters["threads"] = host_all().concurrency();
}

void run_split(std::int64_t n, const char* label, policy range) {
  auto& p = particles_for(n);
  hetero::parallel_for(label, range, hetero::access(hetero::reads_all(p.all), hetero::writes(p.acc)),
                       nbody::forces{0, n, 0.05 * 0.05});
}
void run_split(std::int64_t n, const char* label) { run_split(n, label, policy(0, n)); }

void step_device_alone(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  for (auto _ : state) run_split(n, "bench_nbody_device_alone", policy(0, n).weight(0.0));
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

const int registered[] = {
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

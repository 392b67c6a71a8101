// What hetero::parallel_for costs over a plain Kokkos::parallel_for when everything runs on one
// space (the default in a CPU-only build: no split): a triad a = b + s c over N = 1e3 .. 1e8,
// both fenced (hetero's call returns when the work is done); and the two paired call by call.
// And the fixed cost of one call (N = 1): plain Kokkos, hetero on one space (untimed, and timed
// with split_config::time_one_space), hetero split between OpenMP and Serial with all work on
// one side (no hand-over), and split with work on both sides (the helper thread's hand-over).
// And the exception guard's cost: the same triad through hetero with a body that may throw
// (guarded) and a noexcept one (unguarded, the baseline), on one space and split, N = 1e3 ..
// 1e7, as separate cases and paired call by call. A quick run
// (--benchmark_min_time below 0.1 s, the test command's smoke run) stops at N = 1e6.
#include <hetero/exec.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bench_main.hpp"

namespace {

using index_policy = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>;

// Arrays of every size stay allocated (2.7 GB in all), so that the baseline and hetero, which
// alternate, run on the same memory pages.
struct triad_arrays {
  Kokkos::View<double*> a, b, c;
};

triad_arrays& arrays_for(std::int64_t n) {
  static std::map<std::int64_t, triad_arrays> arrays;
  static const bool hooked = (Kokkos::push_finalize_hook([] { arrays.clear(); }), true);
  (void)hooked;
  auto it = arrays.find(n);
  if (it == arrays.end()) {
    triad_arrays t{Kokkos::View<double*>("a", n), Kokkos::View<double*>("b", n), Kokkos::View<double*>("c", n)};
    Kokkos::deep_copy(t.b, 1.0);
    Kokkos::deep_copy(t.c, 2.0);
    it = arrays.emplace(n, t).first;
  }
  return it->second;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void set_bytes(benchmark::State& state, std::int64_t n) {  // per timed call
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * n * 3 * 8);
}

void triad_kokkos(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& t = arrays_for(n);
  auto a = t.a, b = t.b, c = t.c;
  for (auto _ : state) {
    Kokkos::parallel_for(
        "triad", index_policy(0, n), KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + 3.0 * c(i); });
    Kokkos::DefaultExecutionSpace().fence();
  }
  set_bytes(state, n);
}

void triad_hetero(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& t = arrays_for(n);
  auto a = t.a, b = t.b, c = t.c;
  for (auto _ : state)
    hetero::parallel_for(
        "triad", n, KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + 3.0 * c(i); });
  set_bytes(state, n);
}

// Paired: every iteration runs one plain Kokkos triad and one hetero triad back to back (the
// order alternating), and the counter ratio_to_kokkos is the median of the pairs' ratios. The two
// cases above are seconds apart, and this machine's speed drifts by 10 % between such phases
// (more than the effect looked for); a pair is microseconds apart. Manual time: hetero's call.
void triad_paired(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& t = arrays_for(n);
  auto a = t.a, b = t.b, c = t.c;
  const auto kokkos = [&] {
    Kokkos::parallel_for(
        "triad", index_policy(0, n), KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + 3.0 * c(i); });
    Kokkos::DefaultExecutionSpace().fence();
  };
  const auto ours = [&] {
    hetero::parallel_for(
        "triad", n, KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + 3.0 * c(i); });
  };
  std::vector<double> ratios, kokkos_seconds, hetero_seconds;
  bool kokkos_first = true;
  for (auto _ : state) {
    double k = 0, h = 0;
    hetero::stopwatch watch;
    if (kokkos_first) {
      kokkos();
      k = watch.restart();
      ours();
      h = watch.restart();
    } else {
      ours();
      h = watch.restart();
      kokkos();
      k = watch.restart();
    }
    kokkos_first = !kokkos_first;
    state.SetIterationTime(h);
    ratios.push_back(h / k);
    kokkos_seconds.push_back(k);
    hetero_seconds.push_back(h);
  }
  state.counters["ratio_to_kokkos"] = median(ratios);
  state.counters["kokkos_us"] = 1e6 * median(kokkos_seconds);
  state.counters["hetero_us"] = 1e6 * median(hetero_seconds);
}

// The exception guard (exec/detail/guarded_functor.hpp): a body that may throw runs on a host
// space in blocks, with one flag load and a try block per block; a noexcept body runs bare. The two
// bodies below differ only in noexcept, so the cases with `unguarded` are the same hetero call
// without the guard (the baseline). `Split`: OpenMP/Serial at w = 0.5 (a real split, guarded on
// both sides), else the default space alone (OpenMP: the device part only).
template <bool Split>
auto triad_policy(std::int64_t n) {
#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
  if constexpr (Split) {
    return hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial>(0, n).weight(0.5);
  } else {
    return hetero::split_policy<>(0, n);
  }
#else
  return hetero::split_policy<>(0, n);
#endif
}

template <bool Split, bool Guarded>
void triad_guard(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& t = arrays_for(n);
  auto a = t.a, b = t.b, c = t.c;
  const auto policy = triad_policy<Split>(n);
  const auto may_throw = KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + 3.0 * c(i); };
  const auto cannot_throw = KOKKOS_LAMBDA(std::int64_t i) noexcept { a(i) = b(i) + 3.0 * c(i); };
  using space = typename std::remove_cvref_t<decltype(policy)>::host_space;
  static_assert(hetero::detail::guards_elements<space, void, decltype(may_throw)> &&
                !hetero::detail::guards_elements<space, void, decltype(cannot_throw)>);
  for (auto _ : state) {
    if constexpr (Guarded) {
      hetero::parallel_for(Split ? "triad_guard_split" : "triad_guard", policy, may_throw);
    } else {
      hetero::parallel_for(Split ? "triad_guard_split" : "triad_guard", policy, cannot_throw);
    }
  }
  set_bytes(state, n);
}

// Guarded and unguarded call by call, order alternating; guard_ratio is the median of the pairs'
// ratios (guarded / unguarded). Manual time: the guarded call.
template <bool Split>
void triad_guard_paired(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto& t = arrays_for(n);
  auto a = t.a, b = t.b, c = t.c;
  const auto policy = triad_policy<Split>(n);
  const char* label = Split ? "triad_guard_split" : "triad_guard";
  const auto guarded = [&] {
    hetero::parallel_for(
        label, policy, KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + 3.0 * c(i); });
  };
  const auto unguarded = [&] {
    hetero::parallel_for(
        label, policy, KOKKOS_LAMBDA(std::int64_t i) noexcept { a(i) = b(i) + 3.0 * c(i); });
  };
  std::vector<double> ratios, guarded_seconds, unguarded_seconds;
  bool guarded_first = true;
  for (auto _ : state) {
    double g = 0, u = 0;
    hetero::stopwatch watch;
    if (guarded_first) {
      guarded();
      g = watch.restart();
      unguarded();
      u = watch.restart();
    } else {
      unguarded();
      u = watch.restart();
      guarded();
      g = watch.restart();
    }
    guarded_first = !guarded_first;
    state.SetIterationTime(g);
    ratios.push_back(g / u);
    guarded_seconds.push_back(g);
    unguarded_seconds.push_back(u);
  }
  state.counters["guard_ratio"] = median(ratios);
  state.counters["unguarded_us"] = 1e6 * median(unguarded_seconds);
  state.counters["guarded_us"] = 1e6 * median(guarded_seconds);
}

bool g_quick = false;  // a smoke run: sizes up to 1e6 only

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->RangeMultiplier(10)->Range(1000, g_quick ? 1'000'000 : 100'000'000)->Unit(benchmark::kMicrosecond);
};

// A paired family registers one case per size: an iteration count belongs to a whole
// benchmark, not to one of its arguments (the last size's count held for every size before, so
// the medians at 1e3 were over 10 pairs and moved by 5 % from round to round).
// `pairs_per_n`: pairs per round are that divided by N, within [min_pairs, 2000].
int add_paired(const std::string& name, void (*function)(benchmark::State&), std::int64_t largest,
               std::int64_t pairs_per_n, std::int64_t min_pairs) {
  int count = 0;
  if (hetero::bench::smoke_run()) largest = std::min<std::int64_t>(largest, 1'000'000);
  for (std::int64_t n = 1000; n <= largest; n *= 10) {
    count = hetero::bench::add(name, function, [n, pairs_per_n, min_pairs](benchmark::internal::Benchmark* b) {
      b->Args({n})
          ->Iterations(g_quick ? 3 : std::clamp<std::int64_t>(pairs_per_n / n, min_pairs, 2000))
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    });
  }
  return count;
}

// Fixed cost per call: one iteration of (almost) nothing.
void call_kokkos(benchmark::State& state) {
  auto a = arrays_for(1000).a;
  for (auto _ : state) {
    Kokkos::parallel_for(
        "call", index_policy(0, 1), KOKKOS_LAMBDA(std::int64_t i) { a(i) += 1.0; });
    Kokkos::DefaultExecutionSpace().fence();
  }
}

void call_hetero(benchmark::State& state) {
  auto a = arrays_for(1000).a;
  for (auto _ : state)
    hetero::parallel_for(
        "call", 1, KOKKOS_LAMBDA(std::int64_t i) { a(i) += 1.0; });
}

// One space with its runs timed (split_config::time_one_space): what the two clock reads and
// the locked statistics cost that an untimed loop on one space leaves out.
void call_hetero_timed(benchmark::State& state) {
  auto a = arrays_for(1000).a;
  hetero::split_config config;
  config.time_one_space = true;
  const hetero::work_sharing timed(config);
  for (auto _ : state)
    hetero::parallel_for(
        timed, "call", 1, KOKKOS_LAMBDA(std::int64_t i) { a(i) += 1.0; });
}

#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
template <int Weight>  // in percent
void call_split(benchmark::State& state) {
  auto a = arrays_for(1000).a;
  const hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial> policy =
      hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial>(0, 2).weight(Weight / 100.0);
  for (auto _ : state)
    hetero::parallel_for(
        "call_split", policy, KOKKOS_LAMBDA(std::int64_t i) { a(i) += 1.0; });
}
#endif

const auto in_us = [](benchmark::internal::Benchmark* b) { b->Unit(benchmark::kMicrosecond); };

const auto guard_sizes = [](benchmark::internal::Benchmark* b) {
  b->RangeMultiplier(10)->Range(1000, g_quick ? 1'000'000 : 10'000'000)->Unit(benchmark::kMicrosecond);
};

const int registered[] = {
    hetero::bench::add("triad/baseline_kokkos", triad_kokkos, sizes),
    hetero::bench::add("triad/hetero_one_space", triad_hetero, sizes),
    add_paired("triad_paired/hetero_one_space", triad_paired, 100'000'000, 1'000'000'000, 10),
    hetero::bench::add("call/baseline_kokkos", call_kokkos, in_us),
    hetero::bench::add("call/hetero_one_space", call_hetero, in_us),
    hetero::bench::add("call/hetero_one_space_timed", call_hetero_timed, in_us),
#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
    hetero::bench::add("call/hetero_split_one_side", call_split<0>, in_us),
    hetero::bench::add("call/hetero_split_both_sides", call_split<50>, in_us),
#endif
    hetero::bench::add("guard_one_space/baseline_unguarded", triad_guard<false, false>, guard_sizes),
    hetero::bench::add("guard_one_space/guarded", triad_guard<false, true>, guard_sizes),
    add_paired("guard_paired/one_space", triad_guard_paired<false>, 10'000'000, 100'000'000, 20),
#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
    hetero::bench::add("guard_split/baseline_unguarded", triad_guard<true, false>, guard_sizes),
    hetero::bench::add("guard_split/guarded", triad_guard<true, true>, guard_sizes),
    add_paired("guard_paired/split", triad_guard_paired<true>, 10'000'000, 100'000'000, 20),
#endif
};

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--benchmark_min_time=")) g_quick = std::stod(std::string(a.substr(21))) < 0.1;
  }
  return hetero::bench::run_benchmarks(argc, argv);
}

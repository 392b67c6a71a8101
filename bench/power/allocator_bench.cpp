// Algorithm 1's cost against the even allocation (the baseline: what dividing a budget costs
// without criticalities), for N CPUs of the seed's table (9 steps). "mid": a budget of N CPUs at
// 1.6 GHz; "worst": every CPU climbs to f_max, the seed's worst case O(M N log N).
#include <hetero/power/allocator.hpp>
#include <hetero_tools/power/machine_tables.hpp>

#include <random>
#include <vector>

#include "bench_main.hpp"

namespace {

using hetero::power::frequency_table;

const frequency_table& table() {
  static const frequency_table t = hetero_tools::power::xeon_e5_2630l();
  return t;
}

std::vector<double> criticalities(std::size_t n) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> c(1.0, 2.0);  // up to 2x between CPUs, as the seed's pattern
  std::vector<double> v(n);
  for (auto& x : v) x = c(rng);
  return v;
}

double budget(std::size_t n, bool worst) {
  return static_cast<double>(n) * (worst ? table().max_power() : table().power(4));
}

template <bool Worst>
void even(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(hetero::power::allocate_evenly(n, table(), budget(n, Worst)));
}

template <bool Worst, std::size_t Group>
void algorithm1(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto c = criticalities(n);
  for (auto _ : state)
    benchmark::DoNotOptimize(hetero::power::allocate_in_groups(c, table(), budget(n, Worst), Group));
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->Arg(16)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
};
const int registered[] = {hetero::bench::add("allocate_mid/baseline_even", even<false>, sizes),
                          hetero::bench::add("allocate_mid/algorithm1", algorithm1<false, 0>, sizes),
                          hetero::bench::add("allocate_mid/algorithm1_groups8", algorithm1<false, 8>, sizes),
                          hetero::bench::add("allocate_worst/baseline_even", even<true>, sizes),
                          hetero::bench::add("allocate_worst/algorithm1", algorithm1<true, 0>, sizes),
                          hetero::bench::add("allocate_worst/algorithm1_groups8", algorithm1<true, 8>, sizes)};

}  // namespace

HETERO_BENCHMARK_MAIN()

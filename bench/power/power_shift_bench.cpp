// The power_shift example's loop on 2 ranks with emulated DVFS, under a budget of 1.6 GHz per
// rank: dynamic power shifting against the even setting (policy off, the baseline); and what
// monitoring costs with the policy off (monitor and controller thread running, the loop's
// allreduces reporting their waits) against no monitoring at all (the baseline: the waits find
// no observer). One iteration is one whole run; rounds alternate the variants.
#include "bench_main.hpp"
#include "imbalanced_loop.hpp"

namespace {

const hetero::communicator& world() {
  static const hetero::communicator w;  // made on first use, on every rank at once
  return w;
}

const power_shift::kernel& work() {
  static const power_shift::kernel k;  // calibrated on first use, on every rank at once
  return k;
}

template <bool On>
void shifting(benchmark::State& state) {
  power_shift::options o;
  o.steps = 200;
  o.swap_every = 50;
  o.policy_on = On;
  for (auto _ : state) hetero::bench::set_iteration_time(state, power_shift::run(world(), work(), o).seconds);
}

template <bool Monitored>
void monitoring(benchmark::State& state) {
  power_shift::options o;
  o.steps = 300;
  o.swap_every = 50;
  o.busy_ms = 2.0;  // more steps per second: more waits to record
  o.policy_on = false;
  o.monitored = Monitored;
  for (auto _ : state) hetero::bench::set_iteration_time(state, power_shift::run(world(), work(), o).seconds);
}

const auto configure = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
};
const int registered[] = {hetero::bench::add("power_shift/baseline_policy_off", shifting<false>, configure),
                          hetero::bench::add("power_shift/policy_on", shifting<true>, configure),
                          hetero::bench::add("monitoring/baseline_unmonitored", monitoring<false>, configure),
                          hetero::bench::add("monitoring/monitored_policy_off", monitoring<true>, configure)};

}  // namespace

HETERO_BENCHMARK_MAIN()

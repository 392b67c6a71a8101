// power_shift: DVFS power shifting under a power budget, end to end on any machine.
//
// An imbalanced loop (one rank computes twice as long as the others, and which rank changes
// every few steps) runs under a power budget that allows every rank 1.6 GHz, first with the
// even setting (policy off), then with dynamic power shifting (policy on), alternately, a given
// number of times each. The CPUs' frequencies are emulated (compute is stretched by
// f_max / f); the waits are those hetero's collectives report, the phases come from the loop's
// hetero::mark_phase(). The program checks that both policies computed the same values and that
// every round of settings kept within the budget, and prints the median times.
//   mpiexec -n 2 ./power_shift [--steps 120] [--swap-every 40] [--runs 1] [--busy-ms 8]
//                              [--phases automatic|markers|detected] [--require-gain <percent>]
#include <hetero/hetero.hpp>
#include <hetero/power.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "imbalanced_loop.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Every round every rank received: the sum of P(f) of the ranks' steps within the budget.
bool rounds_within_budget(const hetero::communicator& world,
                          const std::vector<hetero::power::power_setting>& history, double budget) {
  const auto table = power_shift::cpu_table();
  const int rounds =
      world.allreduce(hetero::send_buf(static_cast<int>(history.size())), hetero::op(hetero::ops::min{}));
  std::vector<double> watts(static_cast<std::size_t>(rounds));
  for (int k = 0; k < rounds; ++k)
    watts[static_cast<std::size_t>(k)] = table.power(history[static_cast<std::size_t>(k)].step);
  world.allreduce(hetero::send_recv_buf(watts), hetero::op(hetero::ops::sum{}));  // every round's total
  return std::all_of(watts.begin(), watts.end(), [&](double sum) { return sum <= budget * (1 + 1e-12); });
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const hetero::communicator world;
  power_shift::options o;
  int runs = 1;
  double required_gain = -1e9;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--steps")
      o.steps = std::stoi(value);
    else if (flag == "--swap-every")
      o.swap_every = std::stoi(value);
    else if (flag == "--runs")
      runs = std::stoi(value);
    else if (flag == "--busy-ms")
      o.busy_ms = std::stod(value);
    else if (flag == "--require-gain")
      required_gain = std::stod(value);
    else if (flag == "--phases")
      o.phases = value == "markers"    ? hetero::power::phase_source::markers
                 : value == "detected" ? hetero::power::phase_source::detected
                                       : hetero::power::phase_source::automatic;
    else {
      if (rt.world_rank() == 0) std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return EXIT_FAILURE;
    }
  }
  if (o.steps < 1 || o.swap_every < 1 || runs < 1 || o.busy_ms <= 0) {
    if (rt.world_rank() == 0)
      std::fprintf(stderr, "--steps, --swap-every, --runs and --busy-ms must be positive\n");
    return EXIT_FAILURE;
  }
  const auto table = power_shift::cpu_table();
  const double budget = rt.world_size() * table.power(table.step_of(1.6));
  o.budget_watts = budget;
  if (rt.world_rank() == 0)
    std::printf(
        "%d rank(s), budget %.1f W (every rank at 1.6 GHz), %d steps, busy rank changes every %d, "
        "emulated DVFS %.1f to %.1f GHz\n",
        rt.world_size(), budget, o.steps, o.swap_every, table.min_frequency(), table.max_frequency());

  const power_shift::kernel work;
  std::vector<double> off, on;
  bool same = true, within = true;
  for (int run = 0; run < runs; ++run) {
    o.policy_on = false;
    const auto a = power_shift::run(world, work, o);
    o.policy_on = true;
    const auto b = power_shift::run(world, work, o);
    off.push_back(a.seconds);
    on.push_back(b.seconds);
    same = same && std::abs(a.checksum - b.checksum) <= 1e-12 * std::abs(a.checksum);
    within = rounds_within_budget(world, b.history, budget) && within;
    if (rt.world_rank() == 0)
      std::printf("run %d: policy off %.3f s, policy on %.3f s (%llu settings, phases from %s)\n", run, a.seconds,
                  b.seconds, static_cast<unsigned long long>(b.status.settings),
                  b.status.markers ? "phase marks" : "the detected period");
  }
  const int all_ok = world.allreduce(hetero::send_buf(same && within ? 1 : 0), hetero::op(hetero::ops::min{}));
  const double gain = 100 * (1 - median(on) / median(off));
  if (rt.world_rank() == 0) {
    std::printf("median over %d run(s): policy off %.3f s, policy on %.3f s: %.1f %% less time\n", runs,
                median(off), median(on), gain);
    std::printf("same results under both policies: %s; every round within the budget: %s\n", all_ok ? "yes" : "NO",
                all_ok ? "yes" : "see above");
  }
  if (!all_ok) return EXIT_FAILURE;
  if (gain < required_gain) {
    if (rt.world_rank() == 0) std::printf("gain %.1f %% is below the required %.1f %%\n", gain, required_gain);
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

// The workload of the power_shift example (and of its benchmark): a bulk-synchronous loop on
// 2 or more ranks where one rank computes twice as long as the others and the busy rank changes
// every few steps (a synthetic imbalance, reduced to a few ranks). Compute is a real
// Kokkos reduction, stretched by an emulated actuator to the frequency the controller sets; the
// steps meet in an allreduce, which hetero's communicator reports to the monitor as a wait.
#ifndef HETERO_EXAMPLES_POWER_SHIFT_IMBALANCED_LOOP_HPP
#define HETERO_EXAMPLES_POWER_SHIFT_IMBALANCED_LOOP_HPP

#include <hetero/hetero.hpp>
#include <hetero/power.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace power_shift {

// The emulated CPUs' frequency table, given as a list as for a real machine: its frequencies
// (GHz; cpufreq's scaling_available_frequencies) and the node power at each, fully active (W;
// from the datasheet or a calibration run). These are a 1.2-2.0 GHz server CPU's.
inline hetero::power::frequency_table cpu_table() {
  return hetero::power::frequency_table({1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0},
                                        {72.6, 74.9, 77.3, 79.9, 82.6, 85.5, 88.5, 91.7, 95.0});
}

// `units` units of arithmetic on the host cores; returns a value that depends on every unit.
inline double arithmetic(long units) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "power_shift_kernel", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, units * 256),
      KOKKOS_LAMBDA(long i, double& s) { s += std::sqrt(static_cast<double>(i % 4096) + 1.0); }, sum);
  return sum;
}

// A fixed amount of arithmetic, calibrated in units per millisecond at full speed.
class kernel {
 public:
  // Measures this rank's speed: the fastest of a few timed runs.
  kernel() {
    (void)run(200);
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
      hetero::stopwatch watch;
      (void)run(200);
      best = std::min(best, watch.seconds());
    }
    m_units_per_ms = std::max(1.0, 200 / (best * 1e3));
  }
  // About `ms` milliseconds of work at full speed; returns a value that depends on every unit.
  [[nodiscard]] double compute(double ms) const { return run(std::max(1L, std::lround(ms * m_units_per_ms))); }

 private:
  static double run(long units) { return arithmetic(units); }
  double m_units_per_ms = 1;
};

struct options {
  int steps = 120;          // loop steps
  int swap_every = 40;      // steps between changes of the busy rank
  double busy_ms = 8.0;     // the busy rank's compute per step at full speed (the others: half)
  double budget_watts = 0;  // for all ranks; 0: N * P(1.6 GHz), the even setting 1.6 GHz
  bool policy_on = true;    // dynamic power shifting, or the even setting throughout
  bool monitored = true;    // false: no monitor and no controller (the even setting, set directly)
  hetero::power::phase_source phases = hetero::power::phase_source::automatic;
  std::size_t learning_frames = 50;  // frames at the even setting before the controller plans
};

struct result {
  double seconds = 0;   // the slowest rank's wall time of the loop
  double checksum = 0;  // the sum of every rank's kernel results (the same whatever the policy)
  std::vector<hetero::power::power_setting> history;  // this rank's settings, round by round
  hetero::power::controller_status status;
};

// Runs the loop once under the given policy; collective over `world`.
inline result run(const hetero::communicator& world, const kernel& work, const options& o) {
  const int rank = world.rank(), ranks = world.size();
  const auto table = cpu_table();
  const double budget = o.budget_watts > 0 ? o.budget_watts : ranks * table.power(table.step_of(1.6));
  hetero::power::emulated_actuator cpu(table);
  std::optional<hetero::power::monitor> activity;
  std::optional<hetero::power::controller> control;
  if (o.monitored) {
    activity.emplace();
    activity->install();
    control.emplace(*activity, cpu, world,
                    hetero::power::controller_options{
                        .budget_watts = budget,
                        .mode = o.policy_on ? hetero::power::policy::dynamic : hetero::power::policy::even,
                        .phases = o.phases,
                        .learning_frames = o.learning_frames});
  } else {
    cpu.apply(hetero::power::allocate_evenly(static_cast<std::size_t>(ranks), table, budget).settings[0]);
  }
  result r;
  world.barrier();
  hetero::stopwatch watch;
  double mine = 0;
  for (int step = 0; step < o.steps; ++step) {
    const int busy = (step / o.swap_every) % ranks;
    const double ms = rank == busy ? o.busy_ms : o.busy_ms / 2;
    const double value = cpu.compute([&] { return work.compute(ms); });
    mine += world.allreduce(hetero::send_buf(value), hetero::op(hetero::ops::sum{}));
    hetero::mark_phase();
  }
  const double seconds = watch.seconds();
  r.seconds = world.allreduce(hetero::send_buf(seconds), hetero::op(hetero::ops::max{}));
  r.checksum = mine;
  if (control) {
    control->stop();
    r.history = control->history();
    r.status = control->status();
    activity->uninstall();
  }
  return r;
}

}  // namespace power_shift

#endif  // HETERO_EXAMPLES_POWER_SHIFT_IMBALANCED_LOOP_HPP

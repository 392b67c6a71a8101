/// @file
/// Power allocation under a budget: Algorithm 1 of DVFS power shifting (greedy on predicted
/// times), the even allocation it is compared with, and groups of nodes controlled separately.
#ifndef HETERO_POWER_ALLOCATOR_HPP
#define HETERO_POWER_ALLOCATOR_HPP

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/power/detail/greedy.hpp"
#include "hetero/power/frequency_table.hpp"

namespace hetero::power {

/// The outcome of an allocation: one setting per CPU (its frequency step, and its power budget:
/// P(f) plus its share of what was left), and the totals.
struct allocation {
  std::vector<power_setting> settings;  ///< per CPU, in input order
  double budget_watts = 0.0;            ///< the budget that was divided
  double used_watts = 0.0;              ///< sum of P(f) of the chosen steps (<= budget)

  /// Number of CPUs.
  [[nodiscard]] std::size_t size() const noexcept { return settings.size(); }
  /// Budget not needed by the chosen steps (spread evenly over the CPUs' power budgets).
  [[nodiscard]] double leftover_watts() const noexcept { return std::max(0.0, budget_watts - used_watts); }
  /// Sum of the granted power budgets (equals the budget).
  [[nodiscard]] double granted_watts() const noexcept {
    double sum = 0.0;
    for (const auto& s : settings) sum += s.power_watts;
    return sum;
  }
};

/// Algorithm 1 (greedy power shifting): divides `budget_watts` among CPUs of identical `table` by their
/// criticalities (seconds of activity the last phase would take at f_min; any common unit
/// works, only ratios matter).
///
/// Every CPU starts at f_min. A priority queue holds each CPU's predicted time C * f_min / f;
/// the CPU on top (ties: the lower frequency, then the lower CPU number) is raised one step of
/// the table when the total P(f) stays within the budget, and leaves the queue otherwise or at
/// f_max. What is left is spread evenly over the CPUs' power budgets; each CPU's frequency is
/// then the highest whose P(f) fits its budget (f_P(P), which the spread never raises).
/// A priority queue costs O(M N log N) for M steps and N CPUs; since every CPU shares
/// the table, the same order of raises comes here from one sort and a merge of M - 1 lists,
/// O(N log N + M N log M) (see detail/greedy.hpp).
///
/// Throws `hetero::invalid_argument` for a budget below N * P(f_min) (the message states the
/// minimum) or a negative or non-finite criticality.
/// <!-- snippet: fragment -->
/// @code
/// hetero::power::frequency_table table({1.2, 1.6, 2.0}, {73.0, 83.0, 95.0});
/// std::vector<double> c = {2.0, 1.0, 1.5, 1.0};
/// auto a = hetero::power::allocate(c, table, 4 * table.power(1));  // budget of 4 CPUs at 1.6 GHz
/// double f0 = a.settings[0].frequency_ghz;                          // the busiest CPU's frequency
/// @endcode
inline allocation allocate(std::span<const double> criticality, const frequency_table& table,
                           double budget_watts) {
  HETERO_EXPECTS(!criticality.empty(), "allocation over no CPUs; give at least one criticality");
  table.check_budget(budget_watts, criticality.size());
  std::vector<std::size_t> steps;
  allocation result;
  result.budget_watts = budget_watts;
  result.used_watts = detail::greedy_steps_common_table(criticality, table, budget_watts, steps);
  const double share = result.leftover_watts() / static_cast<double>(criticality.size());
  result.settings.resize(criticality.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double granted = table.power(steps[i]) + share;
    // f_P(P_out): the highest step within each CPU's budget. The spread never lifts a CPU a step (a step that
    // fitted would have been taken, and the leftover only shrinks as the loop runs), so this is the loop's step;
    // the tests check that against a plain reference.
    const std::size_t step = table.highest_step_within(granted);
    result.settings[i] = {step, table.frequency(step), granted};
  }
  return result;
}

/// The even allocation: every CPU at the highest frequency whose N * P(f) fits the budget, the
/// rest of the budget spread evenly (what runs without power shifting).
inline allocation allocate_evenly(std::size_t cpus, const frequency_table& table, double budget_watts) {
  const std::size_t step = table.even_step(budget_watts, cpus);
  allocation result;
  result.budget_watts = budget_watts;
  result.used_watts = static_cast<double>(cpus) * table.power(step);
  const double share = result.leftover_watts() / static_cast<double>(cpus);
  result.settings.assign(cpus, {step, table.frequency(step), table.power(step) + share});
  return result;
}

/// Algorithm 1 in groups of `group_size` consecutive CPUs (the last group may be smaller), each
/// group controlled on its own with the budget share of its CPUs, budget * n_g / N, and no
/// power shifted between groups (e.g. groups of 8 nodes), which spreads the leaders' work. `group_size` 0 means
/// one group of all CPUs.
inline allocation allocate_in_groups(std::span<const double> criticality, const frequency_table& table,
                                     double budget_watts, std::size_t group_size) {
  const std::size_t n = criticality.size();
  if (group_size == 0 || group_size >= n) return allocate(criticality, table, budget_watts);
  table.check_budget(budget_watts, n);
  allocation result;
  result.budget_watts = budget_watts;
  result.settings.reserve(n);
  for (std::size_t first = 0; first < n; first += group_size) {
    const std::size_t count = std::min(group_size, n - first);
    const double share = budget_watts * static_cast<double>(count) / static_cast<double>(n);
    const allocation group = allocate(criticality.subspan(first, count), table, share);
    result.settings.insert(result.settings.end(), group.settings.begin(), group.settings.end());
    result.used_watts += group.used_watts;
  }
  return result;
}

}  // namespace hetero::power

#endif  // HETERO_POWER_ALLOCATOR_HPP

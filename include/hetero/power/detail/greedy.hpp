/// @file
/// The greedy loop of the power allocation (`allocate`, Algorithm 1 of DVFS power shifting),
/// written once for a table per
/// device so that the same code serves identical CPUs (allocator.hpp) and a node's GPU and CPU
/// (node_shift.hpp).
#ifndef HETERO_POWER_DETAIL_GREEDY_HPP
#define HETERO_POWER_DETAIL_GREEDY_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/power/frequency_table.hpp"

namespace hetero::power::detail {

/// A step fits when the new total is within the budget up to 1e-12 relative: the running total
/// is a sum of differences of P(f), whose rounding must not refuse a step that fits exactly
/// (a budget of N * P(f_max) must let every device reach f_max).
inline constexpr double fit_slack = 1 + 1e-12;

/// An entry of the priority queue: the predicted time C * f_min / f of one device at its
/// current frequency.
struct queued_device {
  double predicted_seconds;
  double frequency_ghz;
  std::uint32_t device;
};

/// Heap order (true when `a` ranks below `b`): the largest predicted time on top; equal times go
/// to the lower frequency (its power increment is smaller and its frequency ratio larger); equal frequencies too
/// go to the lower device number, so the result does not depend on the heap's internals.
struct queue_order {
  bool operator()(const queued_device& a, const queued_device& b) const noexcept {
    if (a.predicted_seconds != b.predicted_seconds) return a.predicted_seconds < b.predicted_seconds;
    if (a.frequency_ghz != b.frequency_ghz) return a.frequency_ghz > b.frequency_ghz;
    return a.device > b.device;
  }
};

/// Algorithm 1: every device starts at its f_min; the device with the largest predicted time is
/// raised one step when the total P(f) stays within the budget, and leaves the queue when it
/// does not fit or reaches f_max. `table_of(i)` gives device i's table; `steps` receives each
/// device's step. Returns the total P(f) of the chosen steps. O(M N log N).
template <class TableOf>
double greedy_steps(std::span<const double> criticality, TableOf&& table_of, double budget_watts,
                    std::vector<std::size_t>& steps) {
  const std::size_t n = criticality.size();
  HETERO_EXPECTS(n <= UINT32_MAX, "Algorithm 1 over ", n, " devices; at most ", UINT32_MAX, " are supported");
  steps.assign(n, 0);
  double used = 0.0;
  std::vector<queued_device> heap;
  heap.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double c = criticality[i];
    HETERO_EXPECTS(std::isfinite(c) && c >= 0, "criticality of device ", i, " is ", c,
                   "; criticalities must be finite and >= 0 (seconds of activity at f_min)");
    const frequency_table& table = table_of(i);
    used += table.min_power();
    if (table.size() > 1) heap.push_back({c, table.min_frequency(), static_cast<std::uint32_t>(i)});
  }
  // Relative slack of 1e-12: a budget computed as N * P(f_min) may differ from this sum in the
  // last bits, and "exactly the minimum" must be accepted.
  HETERO_EXPECTS(budget_watts >= used * (1 - 1e-12), "power budget ", budget_watts, " W is below the minimum for ",
                 n, " device(s): the sum of P(f_min) is ", used, " W");
  const queue_order order;
  std::make_heap(heap.begin(), heap.end(), order);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), order);
    queued_device& top = heap.back();
    const std::size_t i = top.device;
    const frequency_table& table = table_of(i);
    const std::size_t next = steps[i] + 1;
    const double with_next = used - table.power(steps[i]) + table.power(next);
    if (with_next > budget_watts * fit_slack) {  // does not fit: this device keeps its step
      heap.pop_back();
      continue;
    }
    used = with_next;
    steps[i] = next;
    if (next + 1 >= table.size()) {  // reached f_max
      heap.pop_back();
      continue;
    }
    top.frequency_ghz = table.frequency(next);
    top.predicted_seconds = criticality[i] * table.min_frequency() / top.frequency_ghz;
    std::push_heap(heap.begin(), heap.end(), order);
  }
  return used;
}

/// Algorithm 1 for devices that share one table, in O(N log N + M N log M) instead of
/// O(M N log N), with the same result as `greedy_steps`.
///
/// Why it is the same: the heap holds each device's next raise, keyed C * f_min / f. A device's
/// keys fall strictly from one step to the next, so the heap pops, over the whole run, the
/// raises (device, step) in the order of one global sort by the queue's order, skipping those
/// of devices that have left. For one step every device has the same f, so that step's raises
/// sorted are simply the devices sorted by criticality: one sort, then a merge of the M - 1
/// step lists yields the global order.
inline double greedy_steps_common_table(std::span<const double> criticality, const frequency_table& table,
                                        double budget_watts, std::vector<std::size_t>& steps) {
  const std::size_t n = criticality.size();
  HETERO_EXPECTS(n <= UINT32_MAX, "Algorithm 1 over ", n, " devices; at most ", UINT32_MAX, " are supported");
  for (std::size_t i = 0; i < n; ++i)
    HETERO_EXPECTS(std::isfinite(criticality[i]) && criticality[i] >= 0, "criticality of device ", i, " is ",
                   criticality[i], "; criticalities must be finite and >= 0 (seconds of activity at f_min)");
  steps.assign(n, 0);
  double used = static_cast<double>(n) * table.min_power();
  HETERO_EXPECTS(budget_watts >= used * (1 - 1e-12), "power budget ", budget_watts, " W is below the minimum for ",
                 n, " device(s): the sum of P(f_min) is ", used, " W");
  if (table.size() < 2 || n == 0) return used;
  // Devices by criticality, largest first, ties to the lower number (the queue's order at equal f).
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return criticality[a] != criticality[b] ? criticality[a] > criticality[b] : a < b;
  });
  // The raises of step k, in order, are (order[j], k) for j = 0, 1, ...: list k's next raise is
  // at cursor[k], keyed sorted[cursor[k]] * f_min / f_k. With M - 1 lists (8 for a table of 9
  // steps) a linear scan for the largest key beats a heap; scanning k upwards with a strict
  // comparison sends equal keys to the lower frequency, as the queue does.
  std::vector<double> sorted(n);
  for (std::size_t j = 0; j < n; ++j) sorted[j] = criticality[order[j]];
  const std::size_t lists = table.size() - 1;
  std::vector<double> ratio(lists);
  for (std::size_t k = 0; k < lists; ++k) ratio[k] = table.min_frequency() / table.frequency(k);
  std::vector<std::size_t> cursor(lists, 0);
  std::vector<double> head(lists);  // each list's next key; -1 once the list is exhausted
  for (std::size_t k = 0; k < lists; ++k) head[k] = sorted[0] * ratio[k];
  std::vector<unsigned char> left(n, 0);
  for (std::size_t remaining = lists * n; remaining > 0; --remaining) {
    std::size_t k = 0;
    for (std::size_t l = 1; l < lists; ++l)
      if (head[l] > head[k]) k = l;
    const std::uint32_t i = order[cursor[k]++];
    head[k] = cursor[k] < n ? sorted[cursor[k]] * ratio[k] : -1.0;
    if (left[i]) continue;  // this device already left the queue; its later raises are void
    const double with_next = used - table.power(k) + table.power(k + 1);
    if (with_next > budget_watts * fit_slack) {
      left[i] = 1;
      continue;
    }
    used = with_next;
    steps[i] = k + 1;
  }
  return used;
}

}  // namespace hetero::power::detail

#endif  // HETERO_POWER_DETAIL_GREEDY_HPP

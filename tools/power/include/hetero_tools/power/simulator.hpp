/// @file
/// A deterministic model of N ranks running a bulk-synchronous loop under a power budget, to
/// compare the even allocation, a static one (whole-run criticality) and the dynamic policy as
/// the seed did on its 16 nodes (seed 004, Figures 7 and 12), at any scale and on any machine.
#ifndef HETERO_TOOLS_POWER_SIMULATOR_HPP
#define HETERO_TOOLS_POWER_SIMULATOR_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/power/activity_timeline.hpp"
#include "hetero/power/allocator.hpp"
#include "hetero/power/frequency_table.hpp"
#include "hetero/power/node_shift.hpp"
#include "hetero/power/phase_detection.hpp"
#include "hetero_tools/power/imbalance_patterns.hpp"
#include "hetero_tools/power/machine_tables.hpp"

namespace hetero_tools::power {

// The simulator is written in the library's terms: the same tables, allocator, timelines and
// phase detection as the controller runs.
using ::hetero::power::activity_timeline;
using ::hetero::power::allocate_in_groups;
using ::hetero::power::allocation;
using ::hetero::power::autocovariance;
using ::hetero::power::detect_phase;
using ::hetero::power::device_host_times;
using ::hetero::power::node_power_shifter;
using ::hetero::power::node_split;
using ::hetero::power::normalized;
using ::hetero::power::phase_detection_options;
using ::hetero::power::phase_estimate;
using ::hetero::power::power_setting;

/// How power is divided in a simulated run.
enum class simulated_policy {
  even,                ///< every rank at the even frequency
  static_criticality,  ///< Algorithm 1 once, on each rank's work over the whole run
  dynamic              ///< the controller: learn the phase length, then Algorithm 1 every phase
};

/// The model's parameters.
struct simulation_options {
  frequency_table table = xeon_e5_2630l();  ///< frequencies and P(f) of every rank
  std::size_t iterations = 500;             ///< iterations of the loop (each ends with a collective)
  double sync_seconds = 50e-6;              ///< the collective's own cost (an allreduce over 16 nodes' 10GbE)
  double frame_seconds = 0.004;             ///< monitor frames (seed: 4 ms)
  std::size_t learning_frames = 250;        ///< frames at the even setting before the phase length is known
  phase_detection_options detection = {.min_frames = 24};  ///< seed 004 sec. 6.3: phases of 24 frames or more
  std::size_t fallback_phase_frames = 25;                  ///< the phase when no period is found
  std::size_t group_size = 0;                              ///< ranks per group (0: one group; seed's dynamic8: 8)
  std::size_t lag_frames = 2;                              ///< from a phase's end until its allocation applies
};

/// What a simulated run gives.
struct simulation_result {
  double seconds = 0.0;          ///< time to run all iterations
  double energy_joules = 0.0;    ///< integral of the sum of P(f) (the budget drawn)
  double max_power_watts = 0.0;  ///< the largest sum of P(f) at any time (<= budget)
  double period_frames = 0.0;    ///< dynamic: the period found while learning (0: none)
  std::size_t phase_frames = 0;  ///< dynamic: the phase length used
  std::size_t allocations = 0;   ///< allocations made (dynamic: one per phase)
};

namespace detail {

// The loop of one run, event by event: ranks compute their work at their frequency, wait for
// the slowest, pay the collective's cost; the controller acts at frame-aligned times.
class simulated_run {
 public:
  simulated_run(const imbalance_pattern& pattern, double budget, simulated_policy policy,
                const simulation_options& options, const std::vector<double>& whole_run_work)
      : m_pattern(pattern), m_budget(budget), m_policy(policy), m_options(options), m_n(pattern.ranks) {
    const frequency_table& t = options.table;
    const std::size_t even = t.even_step(budget, m_n);
    m_steps.assign(m_n, even);
    if (policy == simulated_policy::static_criticality) {
      HETERO_EXPECTS(whole_run_work.size() == m_n, "static policy needs each rank's work over the whole run");
      set(allocate_in_groups(whole_run_work, t, budget, options.group_size));
    }
    for (std::size_t r = 0; r < m_n; ++r)
      m_timelines.emplace_back(options.frame_seconds, std::size_t{8192}, t.frequency(m_steps[r]));
    m_next_control = policy == simulated_policy::dynamic ? frame_time(options.learning_frames) : never;
  }

  simulation_result run() {
    std::vector<double> remaining(m_n);
    for (std::size_t it = 0; it < m_options.iterations; ++it) {
      m_pattern.work(it, remaining);
      for (std::size_t r = 0; r < m_n; ++r) m_timelines[r].end_wait(0, m_now);
      std::size_t computing = m_n;
      while (computing > 0) {
        double done = never;
        for (std::size_t r = 0; r < m_n; ++r)
          if (remaining[r] > 0) done = std::min(done, m_now + remaining[r] / frequency(r));
        if (next_event() <= done) {
          advance(next_event(), remaining);
          control();
          continue;
        }
        advance(done, remaining);
        for (std::size_t r = 0; r < m_n; ++r)
          if (remaining[r] > 0 && remaining[r] <= 1e-12 * (1 + frequency(r))) remaining[r] = 0;
        computing = 0;
        for (std::size_t r = 0; r < m_n; ++r) {
          if (remaining[r] > 0) {
            ++computing;
          } else if (!m_waiting_since_done[r]) {
            m_timelines[r].begin_wait(0, m_now);
            m_waiting_since_done[r] = true;
          }
        }
      }
      const double end = m_now + m_options.sync_seconds;
      while (next_event() <= end) {
        advance(next_event(), remaining);
        control();
      }
      advance(end, remaining);
      std::fill(m_waiting_since_done.begin(), m_waiting_since_done.end(), false);
    }
    m_result.seconds = m_now;
    return m_result;
  }

 private:
  static constexpr double never = std::numeric_limits<double>::infinity();

  double frame_time(std::size_t frames) const { return static_cast<double>(frames) * m_options.frame_seconds; }
  double frequency(std::size_t r) const { return m_options.table.frequency(m_steps[r]); }
  double next_event() const { return std::min(m_next_control, m_next_apply); }

  void advance(double until, std::vector<double>& remaining) {
    const double dt = until - m_now;
    double power = 0;
    for (std::size_t r = 0; r < m_n; ++r) {
      if (remaining[r] > 0) remaining[r] -= frequency(r) * dt;
      power += m_options.table.power(m_steps[r]);
    }
    m_result.energy_joules += power * dt;
    m_result.max_power_watts = std::max(m_result.max_power_watts, power);
    m_now = until;
  }

  void set(const allocation& a) {
    for (std::size_t r = 0; r < m_n; ++r) {
      m_steps[r] = a.settings[r].step;
      if (!m_timelines.empty()) m_timelines[r].set_frequency(m_now, frequency(r));
    }
    ++m_result.allocations;
  }

  // A control time: the end of learning (plan the phases) or of a phase (allocate), or the
  // moment an allocation takes effect.
  void control() {
    if (m_now >= m_next_apply) {
      set(m_pending);
      m_next_apply = never;
      return;
    }
    for (auto& t : m_timelines) t.advance(m_now);
    if (m_phase_frames == 0) {
      plan();
    } else {
      std::vector<double> criticality(m_n, 0.0);
      const auto first = static_cast<std::int64_t>(m_phase_start);
      for (std::size_t r = 0; r < m_n; ++r)
        for (std::int64_t f = first; f < first + static_cast<std::int64_t>(m_phase_frames); ++f)
          criticality[r] += m_timelines[r].frame_at(f).work_ghz_seconds / m_options.table.min_frequency();
      m_pending = allocate_in_groups(criticality, m_options.table, m_budget, m_options.group_size);
      m_next_apply = m_now + frame_time(m_options.lag_frames);
      m_phase_start += m_phase_frames;
    }
    m_next_control = frame_time(m_phase_start + m_phase_frames);
  }

  // Learning ends: the period of the summed autocovariance of all ranks' active series.
  void plan() {
    const std::size_t frames = m_options.learning_frames;
    std::vector<double> covariance(frames / 2 + 1, 0.0), series(frames);
    for (const auto& t : m_timelines) {
      for (std::size_t f = 0; f < frames; ++f) series[f] = t.frame_at(static_cast<std::int64_t>(f)).active_seconds;
      const auto c = autocovariance(series, frames / 2);
      for (std::size_t lag = 0; lag < c.size(); ++lag) covariance[lag] += c[lag];
    }
    const phase_estimate found =
        detect_phase(normalized(std::move(covariance), m_options.frame_seconds), m_options.detection);
    m_phase_frames = found.found ? found.frames : m_options.fallback_phase_frames;
    m_result.period_frames = found.period_frames;
    m_result.phase_frames = m_phase_frames;
    m_phase_start = frames;
  }

  const imbalance_pattern& m_pattern;
  double m_budget;
  simulated_policy m_policy;
  const simulation_options& m_options;
  std::size_t m_n;
  std::vector<std::size_t> m_steps;
  std::vector<activity_timeline> m_timelines;
  std::vector<bool> m_waiting_since_done = std::vector<bool>(m_n, false);
  double m_now = 0.0;
  double m_next_control = never;
  double m_next_apply = never;
  allocation m_pending;
  std::size_t m_phase_frames = 0;
  std::size_t m_phase_start = 0;
  simulation_result m_result;
};

}  // namespace detail

/// Each rank's total work over the run (its whole-run criticality in gigacycles), as the
/// static policy uses it.
inline std::vector<double> whole_run_work(const imbalance_pattern& pattern, std::size_t iterations) {
  std::vector<double> total(pattern.ranks, 0.0), work(pattern.ranks);
  for (std::size_t it = 0; it < iterations; ++it) {
    pattern.work(it, work);
    for (std::size_t r = 0; r < pattern.ranks; ++r) total[r] += work[r];
  }
  return total;
}

/// Simulates `pattern` under `budget_watts` (>= N * P(f_min)) with `policy`. Deterministic.
/// @code
/// auto pattern = hetero_tools::power::synthetic_imbalance(16);
/// auto table = hetero_tools::power::xeon_e5_2630l();
/// double budget = 16 * table.power(4);
/// auto even = hetero_tools::power::simulate(pattern, budget, hetero_tools::power::simulated_policy::even);
/// auto dynamic = hetero_tools::power::simulate(pattern, budget, hetero_tools::power::simulated_policy::dynamic);
/// double gain = 1 - dynamic.seconds / even.seconds;
/// @endcode
inline simulation_result simulate(const imbalance_pattern& pattern, double budget_watts, simulated_policy policy,
                                  const simulation_options& options = {}) {
  HETERO_EXPECTS(pattern.ranks >= 1 && pattern.work, "simulation of an empty pattern");
  HETERO_EXPECTS(options.frame_seconds > 0, "simulation frame length is ", options.frame_seconds,
                 " s; it must be positive");
  HETERO_EXPECTS(options.learning_frames >= 16, "simulation learning_frames is ", options.learning_frames,
                 "; need at least 16");
  HETERO_EXPECTS(options.fallback_phase_frames >= 1, "simulation fallback_phase_frames is 0");
  options.table.check_budget(budget_watts, pattern.ranks);
  const std::vector<double> total = policy == simulated_policy::static_criticality
                                        ? whole_run_work(pattern, options.iterations)
                                        : std::vector<double>{};
  return detail::simulated_run(pattern, budget_watts, policy, options, total).run();
}

/// One node's work per step: gigacycles for its GPU part and for its CPU part, which overlap
/// (the step ends when both are done).
struct node_pattern {
  std::function<device_host_times(std::size_t step)> work;  ///< gigacycles, in the time fields
};

/// A node whose work alternates every `period` steps between a GPU-bound phase (the GPU has
/// twice the CPU's time at the tables' tops) and a CPU-bound one (the reverse): the loop's
/// split is fixed (a work-sharing tuner left at its weight, or host-side work such as packing
/// and MPI that the GPU cannot take).
inline node_pattern alternating_node_pattern(std::size_t period = 25) {
  HETERO_EXPECTS(period >= 1, "alternating node pattern with a period of 0 steps");
  return {[period](std::size_t step) {
    const bool gpu_bound = (step / period) % 2 == 0;
    // Times at the tables' tops: GPU 20 ms vs CPU 10 ms, then GPU 10 ms vs CPU 20 ms.
    return gpu_bound ? device_host_times{0.020 * 1.5, 0.010 * 2.0} : device_host_times{0.010 * 1.5, 0.020 * 2.0};
  }};
}

/// The two ways of splitting a node's budget compared by `simulate_node_shift`.
struct node_simulation_result {
  double fixed_seconds = 0.0;    ///< budget split by the devices' peak power, once
  double shifted_seconds = 0.0;  ///< `node_power_shifter` every step, from the last step's times
};

/// Simulates `steps` steps of one node under `node_budget_watts`: the fixed split gives each
/// device a share of the budget proportional to its peak power; the shifted one re-splits after
/// every step from the times just measured, as `node_power_shifter::apply` does on hardware.
inline node_simulation_result simulate_node_shift(const node_pattern& pattern, double node_budget_watts,
                                                  std::size_t steps = 400,
                                                  const frequency_table& gpu = gpu_board_model(),
                                                  const frequency_table& cpu = cpu_package_model()) {
  const node_power_shifter shifter(gpu, cpu);
  const double minimum = gpu.min_power() + cpu.min_power();
  HETERO_EXPECTS(node_budget_watts >= minimum * (1 - 1e-12), "node budget ", node_budget_watts,
                 " W is below the minimum: P_gpu(f_min) + P_cpu(f_min) = ", minimum, " W");
  // Fixed: shares by peak power; a share below a device's minimum is topped up from the other.
  double gpu_share = node_budget_watts * gpu.max_power() / (gpu.max_power() + cpu.max_power());
  gpu_share = std::clamp(gpu_share, gpu.min_power(), node_budget_watts - cpu.min_power());
  const power_setting fixed_gpu = gpu.setting(gpu.highest_step_within(gpu_share));
  const power_setting fixed_cpu = cpu.setting(cpu.highest_step_within(node_budget_watts - gpu_share));
  node_simulation_result result;
  power_setting gpu_now = fixed_gpu, cpu_now = fixed_cpu;
  for (std::size_t step = 0; step < steps; ++step) {
    const device_host_times work = pattern.work(step);
    result.fixed_seconds +=
        std::max(work.gpu_seconds / fixed_gpu.frequency_ghz, work.cpu_seconds / fixed_cpu.frequency_ghz);
    const device_host_times measured = {work.gpu_seconds / gpu_now.frequency_ghz,
                                        work.cpu_seconds / cpu_now.frequency_ghz};
    result.shifted_seconds += std::max(measured.gpu_seconds, measured.cpu_seconds);
    const node_split next = shifter.split(measured, gpu_now, cpu_now, node_budget_watts);
    gpu_now = next.gpu;
    cpu_now = next.cpu;
  }
  return result;
}

}  // namespace hetero_tools::power

#endif  // HETERO_TOOLS_POWER_SIMULATOR_HPP

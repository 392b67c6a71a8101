/// @file
/// Power shifting inside a node, between its GPU and its CPU (the controller shifts power
/// between ranks; this shifts it within one): the node's budget goes to the side whose measured time is longer,
/// by the same greedy rule as Algorithm 1, with a table for each device.
#ifndef HETERO_POWER_NODE_SHIFT_HPP
#define HETERO_POWER_NODE_SHIFT_HPP

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/power/actuators/actuator.hpp"
#include "hetero/power/detail/greedy.hpp"
#include "hetero/power/frequency_table.hpp"

namespace hetero::power {

/// One step's device and host times on a node, as a GPU/CPU work-sharing tuner measures them
/// (e.g. the exec module's `gpu_seconds(label)` and `cpu_seconds(label)`), taken at the settings
/// in effect during that step.
struct device_host_times {
  double gpu_seconds = 0.0;  ///< time the GPU's part took
  double cpu_seconds = 0.0;  ///< time the CPU's part took
};

/// Keeps the device and host times of the last run of every work-sharing loop label, as the
/// exec module reports them through hetero's observer hook (`observer::split_loop_end`); the
/// power module never reads the exec module itself. Register one with `hetero::add_observer`,
/// or use `measured_times(label)`, which reads the one registered for the whole process. Labels
/// of all `work_sharing` handles land here; the last run of a label wins.
class loop_times final : public observer {
 public:
  /// Records the times of one run of `event.label`.
  void split_loop_end(const split_loop_event& event) noexcept override {
    try {
      std::scoped_lock lock(m_mutex);
      auto it = m_times.find(event.label);
      if (it == m_times.end()) it = m_times.emplace(std::string(event.label), device_host_times{}).first;
      it->second = {.gpu_seconds = event.device_seconds, .cpu_seconds = event.host_seconds};
    } catch (...) {  // out of memory for a new label: that label stays unknown
    }
  }
  /// Loop events only.
  [[nodiscard]] observer_events events() const noexcept override { return observer_events::loops; }

  /// The times of the last run of `label`; throws `hetero::invalid_argument` when no loop of that
  /// label has run since this recorder was registered.
  [[nodiscard]] device_host_times of(std::string_view label) const {
    std::scoped_lock lock(m_mutex);
    if (auto it = m_times.find(label); it != m_times.end()) return it->second;
    hetero::detail::raise<invalid_argument>("no split loop labelled '", label,
                                            "' has run in this process (the power module saw no such loop)");
  }

  /// True when a loop labelled `label` has run.
  [[nodiscard]] bool contains(std::string_view label) const {
    std::scoped_lock lock(m_mutex);
    return m_times.find(label) != m_times.end();
  }

 private:
  struct label_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex m_mutex;
  std::unordered_map<std::string, device_host_times, label_hash, std::equal_to<>> m_times;
};

namespace detail {
/// The process's `loop_times`, registered before `main` so that it sees every loop.
inline const std::shared_ptr<loop_times>& process_loop_times() {
  static const std::shared_ptr<loop_times> recorder = [] {
    auto made = std::make_shared<loop_times>();
    add_observer(made);
    return made;
  }();
  return recorder;
}
inline const bool g_loop_times_registered = process_loop_times() != nullptr;
}  // namespace detail

/// The device and host times of the last run of the work-sharing loop `label` (what the exec
/// module's `hetero::gpu_seconds(label)` and `hetero::cpu_seconds(label)` return), ready for
/// `node_power_shifter::apply`. Throws `hetero::invalid_argument` when no loop of that label has
/// run in this process.
/// <!-- snippet: fragment
/// hetero::split_policy<> policy(0, 64);
/// auto body = KOKKOS_LAMBDA(std::int64_t) {};
/// hetero::power::frequency_table gpu_table({1.0, 1.5}, {200.0, 300.0}), cpu_table({1.2, 2.0}, {60.0, 95.0});
/// hetero::power::node_power_shifter shifter(gpu_table, cpu_table);
/// hetero::power::dry_run_actuator gpu_actuator(gpu_table), cpu_actuator(cpu_table);
/// -->
/// @code
/// hetero::parallel_for("forces", policy, body);
/// shifter.apply(hetero::power::measured_times("forces"), 400.0, gpu_actuator, cpu_actuator);
/// @endcode
[[nodiscard]] inline device_host_times measured_times(std::string_view label) {
  return detail::process_loop_times()->of(label);
}

/// How a node's budget is split.
struct node_split {
  power_setting gpu;               ///< the GPU's step and power budget
  power_setting cpu;               ///< the CPU's step and power budget
  double predicted_seconds = 0.0;  ///< the longer of the two predicted times at the new settings
};

/// Splits a node's power budget between its GPU and its CPU from their measured times. Each
/// side's time is predicted to scale as 1 / f (clock-bound work); both start at f_min and the
/// side with the longer predicted time is raised one step while the sum of P(f) fits (Algorithm
/// 1 with two devices), the rest is shared evenly.
/// <!-- snippet: fragment
/// hetero::power::frequency_table gpu_table({1.0, 1.5}, {200.0, 300.0}), cpu_table({1.2, 2.0}, {60.0, 95.0});
/// double t_gpu = 1.0, t_cpu = 1.2;
/// hetero::power::power_setting gpu_now = gpu_table.setting(0), cpu_now = cpu_table.setting(0);
/// -->
/// @code
/// hetero::power::node_power_shifter shifter(gpu_table, cpu_table);
/// auto split = shifter.split({.gpu_seconds = t_gpu, .cpu_seconds = t_cpu}, gpu_now, cpu_now, 400.0);
/// @endcode
class node_power_shifter {
 public:
  /// A shifter for a node whose GPU has the steps of `gpu` and whose CPU has those of `cpu`.
  node_power_shifter(frequency_table gpu, frequency_table cpu) : m_gpu(std::move(gpu)), m_cpu(std::move(cpu)) {}

  /// The GPU's table (graphics clocks and board power).
  [[nodiscard]] const frequency_table& gpu_table() const noexcept { return m_gpu; }
  /// The CPU's table (frequencies and package power).
  [[nodiscard]] const frequency_table& cpu_table() const noexcept { return m_cpu; }

  /// The split for `node_budget_watts` (>= P_gpu(f_min) + P_cpu(f_min)) given the times measured
  /// while the GPU ran at `gpu_now` and the CPU at `cpu_now`.
  [[nodiscard]] node_split split(const device_host_times& measured, const power_setting& gpu_now,
                                 const power_setting& cpu_now, double node_budget_watts) const {
    HETERO_EXPECTS(std::isfinite(measured.gpu_seconds) && measured.gpu_seconds >= 0 &&
                       std::isfinite(measured.cpu_seconds) && measured.cpu_seconds >= 0,
                   "device/host times are ", measured.gpu_seconds, " s (GPU) and ", measured.cpu_seconds,
                   " s (CPU); they must be finite and >= 0");
    detail::check_setting(gpu_now, m_gpu, "node power shifter (GPU now)");
    detail::check_setting(cpu_now, m_cpu, "node power shifter (CPU now)");
    const double minimum = m_gpu.min_power() + m_cpu.min_power();
    HETERO_EXPECTS(std::isfinite(node_budget_watts) && node_budget_watts >= minimum * (1 - 1e-12), "node budget ",
                   node_budget_watts, " W is below the minimum: P_gpu(f_min) + P_cpu(f_min) = ", m_gpu.min_power(),
                   " W + ", m_cpu.min_power(), " W = ", minimum, " W");
    // Times at f_min: the criticalities of the two devices.
    const std::array<double, 2> at_min = {measured.gpu_seconds * gpu_now.frequency_ghz / m_gpu.min_frequency(),
                                          measured.cpu_seconds * cpu_now.frequency_ghz / m_cpu.min_frequency()};
    const std::array<const frequency_table*, 2> tables = {&m_gpu, &m_cpu};
    std::vector<std::size_t> steps;
    const double used = detail::greedy_steps(
        at_min, [&](std::size_t i) -> const frequency_table& { return *tables[i]; }, node_budget_watts, steps);
    const double share = std::max(0.0, node_budget_watts - used) / 2;
    node_split result;
    result.gpu = {steps[0], m_gpu.frequency(steps[0]), m_gpu.power(steps[0]) + share};
    result.cpu = {steps[1], m_cpu.frequency(steps[1]), m_cpu.power(steps[1]) + share};
    result.predicted_seconds = std::max(at_min[0] * m_gpu.min_frequency() / result.gpu.frequency_ghz,
                                        at_min[1] * m_cpu.min_frequency() / result.cpu.frequency_ghz);
    return result;
  }

  /// Splits and applies: `gpu` (e.g. an `nvml_actuator`) and `cpu` (e.g. a `cpufreq_actuator`
  /// or `rapl_actuator`) get their settings; the settings in effect are remembered for the next
  /// call, starting from each table's top.
  node_split apply(const device_host_times& measured, double node_budget_watts, actuator& gpu, actuator& cpu) {
    const node_split s = split(measured, m_gpu_now, m_cpu_now, node_budget_watts);
    gpu.apply(s.gpu);
    cpu.apply(s.cpu);
    m_gpu_now = s.gpu;
    m_cpu_now = s.cpu;
    return s;
  }

 private:
  frequency_table m_gpu;
  frequency_table m_cpu;
  power_setting m_gpu_now = m_gpu.setting(m_gpu.size() - 1);
  power_setting m_cpu_now = m_cpu.setting(m_cpu.size() - 1);
};

}  // namespace hetero::power

#endif  // HETERO_POWER_NODE_SHIFT_HPP

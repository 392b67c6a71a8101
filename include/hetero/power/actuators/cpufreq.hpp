/// @file
/// `hetero::power::cpufreq_actuator`: sets CPU frequencies through Linux's cpufreq sysfs files.
#ifndef HETERO_POWER_ACTUATORS_CPUFREQ_HPP
#define HETERO_POWER_ACTUATORS_CPUFREQ_HPP

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <filesystem>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/power/actuators/actuator.hpp"
#include "hetero/power/actuators/detail/sysfs.hpp"

namespace hetero::power {

/// Which cpufreq file sets the frequency.
enum class cpufreq_mode {
  scaling_max_freq,  ///< caps the governor's choice (any governor; the usual way without a daemon)
  scaling_setspeed   ///< sets the frequency itself (needs the `userspace` governor)
};

/// Where and how a `cpufreq_actuator` writes.
struct cpufreq_options {
  std::filesystem::path sysfs_root = "/sys/devices/system/cpu";  ///< holds cpu<N>/cpufreq/
  std::vector<int> cpus;                               ///< CPUs to set; empty: every CPU this process may run on
  cpufreq_mode mode = cpufreq_mode::scaling_max_freq;  ///< which file sets the frequency
  bool restore = true;                                 ///< write the original values back on destruction
};

/// The frequencies CPU `cpu` offers, read from cpufreq under `sysfs_root`, with the power
/// `power_of(ghz)` (W, fully active) at each: the list in `scaling_available_frequencies` where
/// the driver gives one (acpi-cpufreq), else `cpuinfo_min_freq` upwards by `step_ghz` and
/// `cpuinfo_max_freq` last (intel_pstate and amd-pstate list none). Throws
/// `hetero::backend_error` naming a file that is missing or unreadable.
/// <!-- snippet: fragment -->
/// @code
/// auto table = hetero::power::cpufreq_frequency_table([](double ghz) { return 60.0 + 20.0 * ghz; });
/// hetero::power::cpufreq_actuator cpu(table);
/// @endcode
template <class PowerOf>
requires std::invocable<PowerOf&, double> && std::convertible_to < std::invoke_result_t<PowerOf&, double>,
double >
    frequency_table cpufreq_frequency_table(PowerOf power_of, int cpu = 0, double step_ghz = 0.1,
                                            const std::filesystem::path& sysfs_root = "/sys/devices/system/cpu") {
  HETERO_EXPECTS(cpu >= 0, "cpufreq_frequency_table of CPU ", cpu, "; CPU numbers are >= 0");
  HETERO_EXPECTS(std::isfinite(step_ghz) && step_ghz > 0, "cpufreq_frequency_table with a step of ", step_ghz,
                 " GHz; the step must be positive");
  const auto dir = sysfs_root / ("cpu" + std::to_string(cpu)) / "cpufreq";
  std::vector<long long> khz;
  if (const auto available = dir / "scaling_available_frequencies"; std::filesystem::exists(available)) {
    std::istringstream list(detail::read_sysfs(available, "the CPU's frequencies (cpufreq)"));
    for (long long k; list >> k;) khz.push_back(k);
    if (!list.eof())
      ::hetero::detail::raise<backend_error>(available.string(), " holds \"", list.str(),
                                             "\", not a list of frequencies in kHz");
  } else {
    const long long low = detail::read_sysfs_integer(dir / "cpuinfo_min_freq", "the CPU's frequencies (cpufreq)");
    const long long high = detail::read_sysfs_integer(dir / "cpuinfo_max_freq", "the CPU's frequencies (cpufreq)");
    const auto step = std::max(1LL, std::llround(step_ghz * 1e6));
    // Stops a step short of the top when the top is closer than a step: the top comes last.
    for (long long k = low; k < high; k += step) khz.push_back(k);
    khz.push_back(high);
  }
  std::sort(khz.begin(), khz.end());
  khz.erase(std::unique(khz.begin(), khz.end()), khz.end());
  std::vector<double> ghz, watts;
  for (long long k : khz) {
    ghz.push_back(static_cast<double>(k) / 1e6);
    watts.push_back(static_cast<double>(power_of(ghz.back())));
  }
  return frequency_table(std::move(ghz), std::move(watts));
}

/// Sets the frequency of this rank's CPUs to the steps of a table, through
/// `<root>/cpu<N>/cpufreq/scaling_max_freq` (or `scaling_setspeed`), in kHz. Checks at
/// construction that the files exist and may be written, that the table lies within
/// `cpuinfo_min_freq`..`cpuinfo_max_freq` and, where the driver lists them, within
/// `scaling_available_frequencies`; refuses settings outside the table.
/// <!-- snippet: fragment -->
/// @code
/// hetero::power::frequency_table table({1.2, 1.6, 2.0}, {70.0, 80.0, 95.0});  // the CPU's steps, P(f)
/// hetero::power::cpufreq_actuator cpu(table);
/// cpu.apply(table.setting(1));  // every CPU of this rank capped at 1.6 GHz
/// @endcode
class cpufreq_actuator final : public actuator {
 public:
  /// Checks the files of every CPU (see the class); throws `hetero::backend_error` naming the
  /// first that is missing or not writable, `hetero::invalid_argument` for a table the CPU cannot run.
  cpufreq_actuator(frequency_table table, cpufreq_options options = {})
      : m_table(std::move(table)), m_options(std::move(options)) {
    if (m_options.cpus.empty()) m_options.cpus = allowed_cpus();
    const char* file = m_options.mode == cpufreq_mode::scaling_max_freq ? "scaling_max_freq" : "scaling_setspeed";
    for (int cpu : m_options.cpus) {
      HETERO_EXPECTS(cpu >= 0, "cpufreq_options::cpus holds CPU ", cpu, "; CPU numbers are >= 0");
      const auto dir = m_options.sysfs_root / ("cpu" + std::to_string(cpu)) / "cpufreq";
      const auto target = dir / file;
      m_original.push_back(detail::read_sysfs(target, "CPU frequency control (cpufreq)"));
      detail::check_writable(target, "CPU frequencies");
      if (m_options.mode == cpufreq_mode::scaling_setspeed) check_userspace_governor(dir, cpu);
      check_hardware_range(dir, cpu);
      m_files.push_back(target);
    }
  }

  ~cpufreq_actuator() override {
    if (!m_options.restore) return;
    for (std::size_t i = 0; i < m_files.size(); ++i) {
      try {
        detail::write_sysfs(m_files[i], m_original[i], "CPU frequencies");
      } catch (...) {  // nothing to do about it at destruction; the next owner may reset it
      }
    }
  }
  cpufreq_actuator(const cpufreq_actuator&) = delete;
  cpufreq_actuator& operator=(const cpufreq_actuator&) = delete;

  /// Writes the setting's frequency (kHz) to every CPU's file.
  void apply(const power_setting& setting) override {
    detail::check_setting(setting, m_table, describe());
    const std::string khz = std::to_string(std::llround(setting.frequency_ghz * 1e6));
    for (const auto& f : m_files) detail::write_sysfs(f, khz, "CPU frequencies");
  }
  [[nodiscard]] const frequency_table& table() const noexcept override { return m_table; }
  [[nodiscard]] std::string describe() const override {
    std::ostringstream text;
    text << "cpufreq "
         << (m_options.mode == cpufreq_mode::scaling_max_freq ? "scaling_max_freq" : "scaling_setspeed")
         << " of CPU(s)";
    for (int cpu : m_options.cpus) text << ' ' << cpu;
    text << " under " << m_options.sysfs_root.string();
    return text.str();
  }
  /// The CPUs set.
  [[nodiscard]] const std::vector<int>& cpus() const noexcept { return m_options.cpus; }

 private:
  static std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
      ::hetero::detail::raise<backend_error>("sched_getaffinity failed; name the CPUs in cpufreq_options::cpus");
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
  }

  static void check_userspace_governor(const std::filesystem::path& dir, int cpu) {
    const std::string governor = detail::read_sysfs(dir / "scaling_governor", "the cpufreq governor");
    if (governor != "userspace")
      ::hetero::detail::raise<backend_error>(
          "CPU ", cpu, " runs the cpufreq governor \"", governor,
          "\"; scaling_setspeed works only under \"userspace\" (as root: echo userspace > ",
          (dir / "scaling_governor").string(),
          "), or use cpufreq_mode::scaling_max_freq, which works under any governor");
  }

  // The table must lie within what the CPU reports it can do.
  void check_hardware_range(const std::filesystem::path& dir, int cpu) const {
    const auto min_file = dir / "cpuinfo_min_freq", max_file = dir / "cpuinfo_max_freq";
    if (std::filesystem::exists(min_file) && std::filesystem::exists(max_file)) {
      const double low = static_cast<double>(detail::read_sysfs_integer(min_file, "cpufreq")) / 1e6;
      const double high = static_cast<double>(detail::read_sysfs_integer(max_file, "cpufreq")) / 1e6;
      HETERO_EXPECTS(m_table.min_frequency() >= low - 0.5e-6 && m_table.max_frequency() <= high + 0.5e-6,
                     "the frequency table spans ", m_table.min_frequency(), " to ", m_table.max_frequency(),
                     " GHz but CPU ", cpu, " can run only from ", low, " to ", high,
                     " GHz (cpuinfo_min_freq, cpuinfo_max_freq)");
    }
    const auto available = dir / "scaling_available_frequencies";
    if (!std::filesystem::exists(available)) return;
    std::istringstream list(detail::read_sysfs(available, "cpufreq"));
    std::vector<long long> khz;
    for (long long k; list >> k;) khz.push_back(k);
    for (double f : m_table.frequencies()) {
      const long long want = std::llround(f * 1e6);
      bool listed = false;
      for (long long k : khz) listed = listed || k == want;
      HETERO_EXPECTS(listed, "frequency ", f, " GHz of the table is not one CPU ", cpu, " offers (",
                     available.string(), ": ", detail::read_sysfs(available, "cpufreq"), " kHz)");
    }
  }

  frequency_table m_table;
  cpufreq_options m_options;
  std::vector<std::filesystem::path> m_files;
  std::vector<std::string> m_original;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_ACTUATORS_CPUFREQ_HPP

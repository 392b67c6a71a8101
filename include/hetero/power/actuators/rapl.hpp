/// @file
/// `hetero::power::rapl_actuator`: caps a CPU package's power through Linux's powercap (RAPL)
/// sysfs files.
#ifndef HETERO_POWER_ACTUATORS_RAPL_HPP
#define HETERO_POWER_ACTUATORS_RAPL_HPP

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/power/actuators/actuator.hpp"
#include "hetero/power/actuators/detail/sysfs.hpp"

namespace hetero::power {

/// Which RAPL zone a `rapl_actuator` writes.
struct rapl_options {
  /// The powercap zone of this rank's package (its `constraint_0` is the long-term limit).
  std::filesystem::path zone = "/sys/class/powercap/intel-rapl:0";
  bool restore = true;  ///< write the original limit back on destruction
};

/// Sets the package's long-term power limit (`constraint_0_power_limit_uw`, in microwatts) to the
/// power budget of each setting, so the hardware picks the frequency that fits (the
/// allocator's f_P(P), done by the CPU). The table's P(f) must then be package power as RAPL counts it. A
/// budget above the table's P(f_max) is capped there; settings outside the table, and a table
/// above the zone's `constraint_0_max_power_uw`, are refused.
/// <!-- snippet: fragment
/// hetero::power::frequency_table package_table({1.2, 2.0}, {60.0, 95.0});
/// -->
/// @code
/// hetero::power::rapl_actuator package(package_table, {.zone = "/sys/class/powercap/intel-rapl:1"});
/// @endcode
class rapl_actuator final : public actuator {
 public:
  /// Checks the zone's limit file; throws `hetero::backend_error` naming it when it is missing or
  /// not writable, `hetero::invalid_argument` for a table above the zone's maximum.
  rapl_actuator(frequency_table table, rapl_options options = {})
      : m_table(std::move(table)), m_options(std::move(options)) {
    m_limit_file = m_options.zone / "constraint_0_power_limit_uw";
    m_original = detail::read_sysfs(m_limit_file, "power limits (powercap/RAPL)");
    detail::check_writable(m_limit_file, "package power limits (RAPL)");
    const auto max_file = m_options.zone / "constraint_0_max_power_uw";
    if (std::filesystem::exists(max_file)) {
      const long long max_uw = detail::read_sysfs_integer(max_file, "RAPL");
      HETERO_EXPECTS(max_uw <= 0 || m_table.max_power() * 1e6 <= static_cast<double>(max_uw),
                     "the power table reaches ", m_table.max_power(), " W but ", max_file.string(),
                     " allows at most ", static_cast<double>(max_uw) / 1e6, " W");
    }
  }

  ~rapl_actuator() override {
    if (!m_options.restore) return;
    try {
      detail::write_sysfs(m_limit_file, m_original, "package power limits (RAPL)");
    } catch (...) {  // nothing to do about it at destruction
    }
  }
  rapl_actuator(const rapl_actuator&) = delete;
  rapl_actuator& operator=(const rapl_actuator&) = delete;

  /// Writes the setting's power budget, capped at P(f_max), in microwatts.
  void apply(const power_setting& setting) override {
    detail::check_setting(setting, m_table, describe());
    const double watts = std::min(setting.power_watts, m_table.max_power());
    detail::write_sysfs(m_limit_file, std::to_string(std::llround(watts * 1e6)), "package power limits (RAPL)");
  }
  [[nodiscard]] const frequency_table& table() const noexcept override { return m_table; }
  [[nodiscard]] std::string describe() const override { return "RAPL power limit of " + m_options.zone.string(); }

 private:
  frequency_table m_table;
  rapl_options m_options;
  std::filesystem::path m_limit_file;
  std::string m_original;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_ACTUATORS_RAPL_HPP

/// @file
/// `hetero::power::actuator`: what applies a power setting to this rank's hardware (cpufreq,
/// RAPL, NVML), emulates it (`emulated_actuator`) or only logs it (`dry_run_actuator`).
#ifndef HETERO_POWER_ACTUATORS_ACTUATOR_HPP
#define HETERO_POWER_ACTUATORS_ACTUATOR_HPP

#include <cmath>
#include <string>

#include "hetero/core/error.hpp"
#include "hetero/power/frequency_table.hpp"

namespace hetero::power {

/// Applies settings of one frequency table to one device of this rank. The controller calls
/// `apply` from its helper thread, once per phase at most; implementations throw a
/// `hetero::error` (`backend_error` for the hardware or its interface, `invalid_argument` for
/// a setting outside the table).
class actuator {
 public:
  virtual ~actuator() = default;
  /// Applies `setting`, a step of `table()` with its granted power budget.
  virtual void apply(const power_setting& setting) = 0;
  /// The table whose settings this actuator accepts.
  [[nodiscard]] virtual const frequency_table& table() const noexcept = 0;
  /// What this actuator controls, for logs and messages (e.g. "cpufreq scaling_max_freq of
  /// CPUs 0 1").
  [[nodiscard]] virtual std::string describe() const = 0;
};

namespace detail {

/// Refuses a setting that is not a step of `table`, or whose power budget is below that step's
/// P(f): the message names the actuator, the value seen and what the table allows.
inline void check_setting(const power_setting& s, const frequency_table& table, const std::string& who) {
  HETERO_EXPECTS(s.step < table.size(), who, ": step ", s.step, " is outside the frequency table (steps 0 to ",
                 table.size() - 1, ": ", table.describe(), ")");
  HETERO_EXPECTS(std::abs(s.frequency_ghz - table.frequency(s.step)) < 0.5e-3, who, ": frequency ",
                 s.frequency_ghz, " GHz is not step ", s.step, " of the frequency table (",
                 table.frequency(s.step), " GHz); allowed: ", table.describe());
  HETERO_EXPECTS(std::isfinite(s.power_watts) && s.power_watts >= table.power(s.step) * (1 - 1e-12), who,
                 ": power budget ", s.power_watts, " W is below P(", table.frequency(s.step),
                 " GHz) = ", table.power(s.step), " W");
}

/// What to use where the hardware cannot be controlled.
inline constexpr const char* no_hardware_hint =
    "to run the control loop without hardware control use hetero::power::emulated_actuator (slows "
    "instrumented compute by f_max / f) or hetero::power::dry_run_actuator (only logs the settings)";

}  // namespace detail
}  // namespace hetero::power

#endif  // HETERO_POWER_ACTUATORS_ACTUATOR_HPP

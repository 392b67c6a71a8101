/// @file
/// `hetero::power::dry_run_actuator`: logs the settings it is given and changes nothing.
#ifndef HETERO_POWER_ACTUATORS_DRY_RUN_HPP
#define HETERO_POWER_ACTUATORS_DRY_RUN_HPP

#include <cstdio>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "hetero/core/timer.hpp"
#include "hetero/power/actuators/actuator.hpp"

namespace hetero::power {

/// An actuator that applies nothing: it checks each setting against its table, keeps it in a
/// history and, when given a stream, writes one line per setting. Use it to see what the
/// controller would do on a machine where frequencies cannot be set.
/// <!-- snippet: fragment -->
/// @code
/// #include <iostream>
///
/// hetero::power::frequency_table table({1.2, 1.6, 2.0}, {73.0, 83.0, 95.0});
/// hetero::power::dry_run_actuator log(table, &std::cout, "rank 0");
/// @endcode
class dry_run_actuator final : public actuator {
 public:
  /// One applied setting and when (`hetero::wall_seconds()`).
  struct record {
    double seconds;         ///< When it was applied (`hetero::wall_seconds()`).
    power_setting setting;  ///< The setting applied.
  };

  /// Checks settings against `table`; logs to `log` (none: nullptr) with `name` on each line.
  explicit dry_run_actuator(frequency_table table, std::ostream* log = nullptr, std::string name = "dry run")
      : m_table(std::move(table)), m_log(log), m_name(std::move(name)) {}

  void apply(const power_setting& setting) override {
    detail::check_setting(setting, m_table, describe());
    std::lock_guard lock(m_mutex);
    m_history.push_back({wall_seconds(), setting});
    if (m_log) {
      char line[160];
      std::snprintf(line, sizeof line, "[hetero power] %s: step %zu, %.3f GHz, budget %.2f W\n", m_name.c_str(),
                    setting.step, setting.frequency_ghz, setting.power_watts);
      *m_log << line << std::flush;
    }
  }
  [[nodiscard]] const frequency_table& table() const noexcept override { return m_table; }
  [[nodiscard]] std::string describe() const override { return "dry run (" + m_name + ")"; }

  /// Every setting applied so far, oldest first.
  [[nodiscard]] std::vector<record> history() const {
    std::lock_guard lock(m_mutex);
    return m_history;
  }

 private:
  frequency_table m_table;
  std::ostream* m_log;
  std::string m_name;
  mutable std::mutex m_mutex;
  std::vector<record> m_history;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_ACTUATORS_DRY_RUN_HPP

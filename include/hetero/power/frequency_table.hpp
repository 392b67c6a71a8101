/// @file
/// `hetero::power::frequency_table`: the frequencies a CPU (or GPU) can run at and the power
/// P(f) it draws at each, fully active. Give the table as two lists, as an evenly spaced range
/// with a power model, or read the frequencies a CPU offers from cpufreq
/// (`cpufreq_frequency_table` in `hetero/power/actuators/cpufreq.hpp`); P(f) comes from the
/// hardware's datasheet or from a calibration run (each step at full load, power measured).
#ifndef HETERO_POWER_FREQUENCY_TABLE_HPP
#define HETERO_POWER_FREQUENCY_TABLE_HPP

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero::power {

/// One setting of one device: its step in a `frequency_table`, the frequency and the power
/// budget granted (P(f) plus any share of the leftover budget).
struct power_setting {
  std::size_t step = 0;        ///< index into the frequency table
  double frequency_ghz = 0.0;  ///< the frequency of that step
  double power_watts = 0.0;    ///< the power budget granted to the device (>= P(f))
};

/// The discrete frequencies of one kind of device, ascending, with the power P(f) drawn at each
/// (fully active). Steps need not be evenly spaced; P(f) must not decrease as f grows.
/// <!-- snippet: fragment -->
/// @code
/// hetero::power::frequency_table table({1.2, 1.6, 2.0}, {70.0, 80.0, 95.0});
/// std::size_t s = table.highest_step_within(85.0);  // step 1: 1.6 GHz
/// @endcode
class frequency_table {
 public:
  /// Builds a table from frequencies (GHz, strictly increasing, positive) and the power (W,
  /// positive, never decreasing) at each; throws `hetero::invalid_argument` otherwise.
  frequency_table(std::vector<double> frequencies_ghz, std::vector<double> power_watts)
      : m_frequency(std::move(frequencies_ghz)), m_power(std::move(power_watts)) {
    HETERO_EXPECTS(!m_frequency.empty(), "frequency table is empty; give at least one frequency");
    HETERO_EXPECTS(m_frequency.size() == m_power.size(), "frequency table has ", m_frequency.size(),
                   " frequencies but ", m_power.size(), " power values; give one power per frequency");
    for (std::size_t i = 0; i < m_frequency.size(); ++i) {
      HETERO_EXPECTS(std::isfinite(m_frequency[i]) && m_frequency[i] > 0, "frequency table entry ", i, " is ",
                     m_frequency[i], " GHz; frequencies must be finite and positive");
      HETERO_EXPECTS(std::isfinite(m_power[i]) && m_power[i] > 0, "power table entry ", i, " is ", m_power[i],
                     " W; power values must be finite and positive");
      if (i == 0) continue;
      HETERO_EXPECTS(m_frequency[i] > m_frequency[i - 1], "frequency table is not increasing: entry ", i, " is ",
                     m_frequency[i], " GHz after ", m_frequency[i - 1],
                     " GHz; list frequencies in strictly increasing order");
      HETERO_EXPECTS(m_power[i] >= m_power[i - 1], "power table is not monotone: P(", m_frequency[i],
                     " GHz) = ", m_power[i], " W is below P(", m_frequency[i - 1], " GHz) = ", m_power[i - 1],
                     " W; power must not decrease as frequency grows");
    }
  }

  /// Evenly spaced frequencies from `min_ghz` to `max_ghz` (inclusive) by `step_ghz`, with the
  /// power given by `power_of(f)`.
  template <class PowerOf>
  static frequency_table evenly_spaced(double min_ghz, double max_ghz, double step_ghz, PowerOf power_of) {
    HETERO_EXPECTS(std::isfinite(min_ghz) && std::isfinite(max_ghz) && std::isfinite(step_ghz) && step_ghz > 0 &&
                       max_ghz >= min_ghz,
                   "evenly spaced table from ", min_ghz, " to ", max_ghz, " GHz by ", step_ghz,
                   " GHz; need finite values, step > 0 and max >= min");
    constexpr std::size_t most_entries = 1000000;
    const double steps = std::floor((max_ghz - min_ghz) / step_ghz + 1e-9);  // +inf where max - min overflows
    HETERO_EXPECTS(steps < static_cast<double>(most_entries), "evenly spaced table from ", min_ghz, " to ",
                   max_ghz, " GHz by ", step_ghz, " GHz would have more than ", most_entries,
                   " entries, the most allowed (take a larger step)");
    std::vector<double> f, p;
    for (std::size_t i = 0; i <= static_cast<std::size_t>(steps); ++i) {
      // Rounded to 1 kHz so that 1.2 + 3 * 0.1 prints and compares as 1.5.
      f.push_back(std::round((min_ghz + static_cast<double>(i) * step_ghz) * 1e6) / 1e6);
      p.push_back(power_of(f.back()));
    }
    return frequency_table(std::move(f), std::move(p));
  }

  /// Number of steps.
  [[nodiscard]] std::size_t size() const noexcept { return m_frequency.size(); }
  /// The frequency of `step` in GHz.
  [[nodiscard]] double frequency(std::size_t step) const { return m_frequency.at(step); }
  /// The power P(f) of `step` in W.
  [[nodiscard]] double power(std::size_t step) const { return m_power.at(step); }
  /// The lowest frequency (step 0).
  [[nodiscard]] double min_frequency() const noexcept { return m_frequency.front(); }
  /// The highest frequency (last step).
  [[nodiscard]] double max_frequency() const noexcept { return m_frequency.back(); }
  /// P(f_min).
  [[nodiscard]] double min_power() const noexcept { return m_power.front(); }
  /// P(f_max).
  [[nodiscard]] double max_power() const noexcept { return m_power.back(); }
  /// All frequencies, ascending.
  [[nodiscard]] const std::vector<double>& frequencies() const noexcept { return m_frequency; }
  /// All power values, by step.
  [[nodiscard]] const std::vector<double>& powers() const noexcept { return m_power; }

  /// The step whose frequency is `ghz` (within 0.5 MHz); throws `hetero::invalid_argument`
  /// naming the table's frequencies when there is none.
  [[nodiscard]] std::size_t step_of(double ghz) const {
    for (std::size_t i = 0; i < size(); ++i)
      if (std::abs(m_frequency[i] - ghz) < 0.5e-3) return i;
    ::hetero::detail::raise<invalid_argument>("frequency ", ghz, " GHz is not in the frequency table (",
                                              describe(), "); only the table's frequencies may be set");
  }

  /// f_P(P): the highest step whose P(f) fits in `watts`; throws `hetero::invalid_argument`
  /// when even f_min does not fit.
  [[nodiscard]] std::size_t highest_step_within(double watts) const {
    HETERO_EXPECTS(watts >= min_power(), "power ", watts, " W is below P(f_min) = ", min_power(), " W at ",
                   min_frequency(), " GHz; no step of the table fits");
    std::size_t step = 0;
    while (step + 1 < size() && m_power[step + 1] <= watts) ++step;
    return step;
  }

  /// The setting for `step` with the power budget P(f).
  [[nodiscard]] power_setting setting(std::size_t step) const { return {step, frequency(step), power(step)}; }

  /// The least total budget for `count` devices: count * P(f_min).
  [[nodiscard]] double minimum_budget(std::size_t count) const noexcept {
    return static_cast<double>(count) * min_power();
  }

  /// Checks that `budget_watts` can run `count` devices at f_min at least; the message states
  /// the minimum.
  void check_budget(double budget_watts, std::size_t count) const {
    HETERO_EXPECTS(count > 0, "power budget for 0 devices; need at least one");
    HETERO_EXPECTS(std::isfinite(budget_watts) && budget_watts >= minimum_budget(count) * (1 - 1e-12),
                   "power budget ", budget_watts, " W is below the minimum for ", count, " device(s): ", count,
                   " * P(f_min) = ", count, " * ", min_power(), " W = ", minimum_budget(count), " W");
  }

  /// The even allocation: every one of `count` devices at the highest step with
  /// count * P(f) <= budget (what runs without power shifting).
  [[nodiscard]] std::size_t even_step(double budget_watts, std::size_t count) const {
    check_budget(budget_watts, count);
    std::size_t step = 0;
    while (step + 1 < size() && static_cast<double>(count) * m_power[step + 1] <= budget_watts) ++step;
    return step;
  }

  /// "1.2, 1.3, ... GHz" for messages.
  [[nodiscard]] std::string describe() const {
    std::string text;
    for (std::size_t i = 0; i < size(); ++i) text += (i ? ", " : "") + ::hetero::detail::message(m_frequency[i]);
    return text + " GHz";
  }

 private:
  std::vector<double> m_frequency;
  std::vector<double> m_power;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_FREQUENCY_TABLE_HPP

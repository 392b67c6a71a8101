/// @file
/// `hetero::power::emulated_actuator`: a CPU whose frequency is emulated by stretching the
/// compute the program marks, so the whole control loop can be run and measured anywhere.
#ifndef HETERO_POWER_ACTUATORS_EMULATED_HPP
#define HETERO_POWER_ACTUATORS_EMULATED_HPP

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "hetero/core/timer.hpp"
#include "hetero/power/actuators/actuator.hpp"

namespace hetero::power {

/// Emulates DVFS: compute run through `compute(fn)` (or inside a `slowed` scope) takes f_max / f
/// times as long as it really does. The machine runs at full speed, so f_max stands for the real
/// speed; the power drawn is the table's P(f). The extra time is compute to the monitor (it is
/// no wait), as the slower core's would be.
/// <!-- snippet: fragment
/// auto kernel = [] {};
/// -->
/// @code
/// hetero::power::emulated_actuator cpu(hetero::power::frequency_table({1.2, 1.6, 2.0}, {73.0, 83.0, 95.0}));
/// cpu.apply(cpu.table().setting(0));   // 1.2 GHz: compute now takes 2.0 / 1.2 times as long
/// cpu.compute([&] { kernel(); });
/// @endcode
class emulated_actuator final : public actuator {
 public:
  /// Starts at f_max (no slow-down).
  explicit emulated_actuator(frequency_table table)
      : m_table(std::move(table)), m_frequency(m_table.max_frequency()) {}

  void apply(const power_setting& setting) override {
    detail::check_setting(setting, m_table, describe());
    m_frequency.store(setting.frequency_ghz, std::memory_order_relaxed);
  }
  [[nodiscard]] const frequency_table& table() const noexcept override { return m_table; }
  [[nodiscard]] std::string describe() const override { return "emulated DVFS (compute stretched by f_max / f)"; }

  /// The emulated frequency.
  [[nodiscard]] double frequency() const noexcept { return m_frequency.load(std::memory_order_relaxed); }
  /// How much longer compute takes than at f_max: f_max / f.
  [[nodiscard]] double slowdown() const noexcept { return m_table.max_frequency() / frequency(); }

  /// Marks compute: on destruction, stretches the time since construction by the slow-down in
  /// effect when the scope began.
  class slowed {
   public:
    /// Starts timing compute at `cpu`'s present slow-down.
    explicit slowed(const emulated_actuator& cpu) noexcept : m_factor(cpu.slowdown()) {}
    ~slowed() { stretch(m_watch.seconds() * (m_factor - 1.0)); }
    slowed(const slowed&) = delete;
    slowed& operator=(const slowed&) = delete;

   private:
    double m_factor;
    stopwatch m_watch;
  };

  /// Runs `fn()` as if at the emulated frequency and returns its result.
  template <class Fn>
  decltype(auto) compute(Fn&& fn) const {
    slowed scope(*this);
    return std::forward<Fn>(fn)();
  }

  /// Spends `seconds`: sleeps most of it (so the stretch costs no core time) and
  /// spins the last 0.2 ms, so that it ends on time rather than at the scheduler's wake-up.
  static void stretch(double seconds) noexcept {
    if (seconds <= 0) return;
    const double end = wall_seconds() + seconds;
    constexpr double spin = 200e-6;
    if (seconds > spin) std::this_thread::sleep_for(std::chrono::duration<double>(seconds - spin));
    while (wall_seconds() < end) {
    }
  }

 private:
  frequency_table m_table;
  std::atomic<double> m_frequency;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_ACTUATORS_EMULATED_HPP

/// @file
/// `hetero::power::nvml_actuator`: sets a GPU's power limit (or locks its clocks) through NVML,
/// loaded at run time.
#ifndef HETERO_POWER_ACTUATORS_NVML_HPP
#define HETERO_POWER_ACTUATORS_NVML_HPP

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/power/actuators/actuator.hpp"
#include "hetero/power/actuators/detail/nvml_library.hpp"

namespace hetero::power {

/// What an `nvml_actuator` sets.
enum class nvml_control {
  power_limit,   ///< the power management limit: the setting's budget (the GPU picks its clocks)
  locked_clocks  ///< the graphics clock, locked to the setting's frequency
};

/// Which GPU and how.
struct nvml_options {
  unsigned device = 0;                               ///< NVML device index (e.g. `runtime::device_id()`)
  std::string library = "libnvidia-ml.so.1";         ///< what dlopen opens
  nvml_control control = nvml_control::power_limit;  ///< power limit or locked clocks
  bool restore = true;  ///< put back the original limit, or unlock clocks, on destruction
};

/// What NVML reports of a GPU at one moment: its board power, its power limit and the limits it
/// accepts, and its clocks.
struct nvml_reading {
  double power_watts = 0;             ///< board power now
  double limit_watts = 0;             ///< the power management limit in force
  double min_limit_watts = 0;         ///< the lowest limit the device accepts
  double max_limit_watts = 0;         ///< the highest limit the device accepts
  double graphics_clock_ghz = 0;      ///< graphics clock now
  double max_graphics_clock_ghz = 0;  ///< the graphics clock's maximum
  double memory_clock_ghz = 0;        ///< memory clock now
};

namespace detail {

/// Reads `device` through an opened NVML; throws `hetero::backend_error` naming the call that
/// failed.
inline nvml_reading read_nvml_device(const nvml_library& nvml, nvml_device device) {
  unsigned power = 0, limit = 0, low = 0, high = 0, graphics = 0, top = 0, memory = 0;
  nvml.check(nvml.power_usage(device, &power), "nvmlDeviceGetPowerUsage");
  nvml.check(nvml.get_limit(device, &limit), "nvmlDeviceGetPowerManagementLimit");
  nvml.check(nvml.limit_constraints(device, &low, &high), "nvmlDeviceGetPowerManagementLimitConstraints");
  nvml.check(nvml.clock_info(device, nvml_clock_graphics, &graphics), "nvmlDeviceGetClockInfo");
  nvml.check(nvml.max_clock_info(device, nvml_clock_graphics, &top), "nvmlDeviceGetMaxClockInfo");
  nvml.check(nvml.clock_info(device, nvml_clock_memory, &memory), "nvmlDeviceGetClockInfo");
  return {power / 1e3, limit / 1e3, low / 1e3, high / 1e3, graphics / 1e3, top / 1e3, memory / 1e3};
}

}  // namespace detail

/// Reads the power and clocks of the GPU `options.device` without changing anything (no table
/// needed: use it to build one within the limits the device accepts). Throws
/// `hetero::backend_error` where NVML or the device is missing.
inline nvml_reading read_nvml(const nvml_options& options = {}) {
  detail::nvml_library nvml(options.library);
  nvml.check(nvml.init(), "nvmlInit_v2");
  try {
    detail::nvml_device device = nullptr;
    nvml.check(nvml.device_by_index(options.device, &device), "nvmlDeviceGetHandleByIndex_v2");
    const nvml_reading reading = detail::read_nvml_device(nvml, device);
    nvml.shutdown();
    return reading;
  } catch (...) {
    nvml.shutdown();
    throw;
  }
}

/// A GPU's power through NVML, opened with dlopen at construction: nothing links against NVML,
/// and a machine without the NVIDIA driver gets a `hetero::backend_error` that says so. The
/// table is the GPU's: graphics clocks (GHz) and the board power at each (W). The power limit
/// written is the setting's budget capped at the table's top, in milliwatts; the table must lie
/// within the limits NVML reports for the device.
/// <!-- snippet: fragment
/// hetero::runtime rt;
/// hetero::power::frequency_table gpu_table({1.0, 1.5}, {200.0, 300.0});
/// -->
/// @code
/// hetero::power::nvml_actuator gpu(gpu_table, {.device = static_cast<unsigned>(rt.device_id())});
/// @endcode
class nvml_actuator final : public actuator {
 public:
  /// Opens NVML and the device; throws `hetero::backend_error` when NVML or the device is not
  /// there, `hetero::invalid_argument` for a table outside the device's limits.
  nvml_actuator(frequency_table table, nvml_options options = {})
      : m_table(std::move(table)),
        m_options(std::move(options)),
        m_nvml(std::make_unique<detail::nvml_library>(m_options.library)) {
    m_nvml->check(m_nvml->init(), "nvmlInit_v2");
    try {
      m_nvml->check(m_nvml->device_by_index(m_options.device, &m_device), "nvmlDeviceGetHandleByIndex_v2");
      unsigned low = 0, high = 0;
      m_nvml->check(m_nvml->limit_constraints(m_device, &low, &high),
                    "nvmlDeviceGetPowerManagementLimitConstraints");
      HETERO_EXPECTS(m_table.min_power() * 1e3 >= low && m_table.max_power() * 1e3 <= high,
                     "the GPU power table spans ", m_table.min_power(), " to ", m_table.max_power(),
                     " W but NVML device ", m_options.device, " accepts limits from ", low / 1e3, " to ",
                     high / 1e3, " W");
      m_nvml->check(m_nvml->get_limit(m_device, &m_original_limit), "nvmlDeviceGetPowerManagementLimit");
    } catch (...) {
      m_nvml->shutdown();
      throw;
    }
  }

  ~nvml_actuator() override {
    if (m_options.restore) {
      if (m_options.control == nvml_control::power_limit)
        m_nvml->set_limit(m_device, m_original_limit);
      else
        m_nvml->reset_clocks(m_device);
    }
    m_nvml->shutdown();
  }
  nvml_actuator(const nvml_actuator&) = delete;
  nvml_actuator& operator=(const nvml_actuator&) = delete;

  /// Sets the power limit to the setting's budget (or locks the clock at its frequency).
  void apply(const power_setting& setting) override {
    detail::check_setting(setting, m_table, describe());
    if (m_options.control == nvml_control::power_limit) {
      const double watts = std::min(setting.power_watts, m_table.max_power());
      m_nvml->check(m_nvml->set_limit(m_device, static_cast<unsigned>(std::lround(watts * 1e3))),
                    "nvmlDeviceSetPowerManagementLimit");
    } else {
      const auto mhz = static_cast<unsigned>(std::lround(setting.frequency_ghz * 1e3));
      m_nvml->check(m_nvml->lock_clocks(m_device, mhz, mhz), "nvmlDeviceSetGpuLockedClocks");
    }
  }
  /// The device's power, limits and clocks now (changes nothing).
  [[nodiscard]] nvml_reading read() const { return detail::read_nvml_device(*m_nvml, m_device); }
  [[nodiscard]] const frequency_table& table() const noexcept override { return m_table; }
  [[nodiscard]] std::string describe() const override {
    return std::string("NVML ") +
           (m_options.control == nvml_control::power_limit ? "power limit" : "locked clocks") + " of GPU " +
           std::to_string(m_options.device);
  }

 private:
  frequency_table m_table;
  nvml_options m_options;
  std::unique_ptr<detail::nvml_library> m_nvml;
  detail::nvml_device m_device = nullptr;
  unsigned m_original_limit = 0;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_ACTUATORS_NVML_HPP

/// @file
/// NVML loaded at run time with dlopen: no header and no link dependency, so programs build and
/// run where there is no NVIDIA driver and say so clearly when NVML is asked for.
#ifndef HETERO_POWER_ACTUATORS_DETAIL_NVML_LIBRARY_HPP
#define HETERO_POWER_ACTUATORS_DETAIL_NVML_LIBRARY_HPP

#include <dlfcn.h>

#include <string>

#include "hetero/core/error.hpp"
#include "hetero/power/actuators/actuator.hpp"

namespace hetero::power::detail {

// The few NVML types used, ABI-compatible with nvml.h (an enum of int size, an opaque handle).
using nvml_return = int;
struct nvml_device_st;
using nvml_device = nvml_device_st*;
inline constexpr nvml_return nvml_success = 0;
// nvmlClockType_t's values for the clocks read.
inline constexpr int nvml_clock_graphics = 0;
inline constexpr int nvml_clock_memory = 2;

/// The NVML functions the actuator calls, resolved from a library opened with dlopen.
class nvml_library {
 public:
  /// Opens `path` (e.g. "libnvidia-ml.so.1") and resolves the functions; throws
  /// `hetero::backend_error` saying which step failed and what to use instead.
  explicit nvml_library(const std::string& path) {
    m_handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
      const char* why = ::dlerror();
      ::hetero::detail::raise<backend_error>(
          "NVML is not available: dlopen(\"", path, "\") failed: ", why ? why : "unknown reason",
          ". NVML comes with the NVIDIA driver, which is not installed here (or it is not on "
          "the library path); ",
          no_hardware_hint);
    }
    try {
      resolve(init, "nvmlInit_v2");
      resolve(shutdown, "nvmlShutdown");
      resolve(error_string, "nvmlErrorString");
      resolve(device_by_index, "nvmlDeviceGetHandleByIndex_v2");
      resolve(limit_constraints, "nvmlDeviceGetPowerManagementLimitConstraints");
      resolve(get_limit, "nvmlDeviceGetPowerManagementLimit");
      resolve(set_limit, "nvmlDeviceSetPowerManagementLimit");
      resolve(lock_clocks, "nvmlDeviceSetGpuLockedClocks");
      resolve(reset_clocks, "nvmlDeviceResetGpuLockedClocks");
      resolve(power_usage, "nvmlDeviceGetPowerUsage");
      resolve(clock_info, "nvmlDeviceGetClockInfo");
      resolve(max_clock_info, "nvmlDeviceGetMaxClockInfo");
    } catch (...) {
      ::dlclose(m_handle);
      throw;
    }
  }
  ~nvml_library() { ::dlclose(m_handle); }
  nvml_library(const nvml_library&) = delete;
  nvml_library& operator=(const nvml_library&) = delete;

  /// Throws `hetero::backend_error` naming `call` and NVML's reason unless `code` is success.
  void check(nvml_return code, const char* call) const {
    if (code == nvml_success) return;
    const char* why = error_string ? error_string(code) : nullptr;
    ::hetero::detail::raise<backend_error>(call, " failed: ", why ? why : "unknown NVML error", " (NVML code ",
                                           code,
                                           code == 4 ? "; changing GPU power limits or clocks needs root)" : ")");
  }

  nvml_return (*init)() = nullptr;
  nvml_return (*shutdown)() = nullptr;
  const char* (*error_string)(nvml_return) = nullptr;
  nvml_return (*device_by_index)(unsigned, nvml_device*) = nullptr;
  nvml_return (*limit_constraints)(nvml_device, unsigned*, unsigned*) = nullptr;
  nvml_return (*get_limit)(nvml_device, unsigned*) = nullptr;
  nvml_return (*set_limit)(nvml_device, unsigned) = nullptr;
  nvml_return (*lock_clocks)(nvml_device, unsigned, unsigned) = nullptr;
  nvml_return (*reset_clocks)(nvml_device) = nullptr;
  nvml_return (*power_usage)(nvml_device, unsigned*) = nullptr;          // milliwatts
  nvml_return (*clock_info)(nvml_device, int, unsigned*) = nullptr;      // MHz, by nvml_clock
  nvml_return (*max_clock_info)(nvml_device, int, unsigned*) = nullptr;  // MHz, by nvml_clock

 private:
  template <class Fn>
  void resolve(Fn& fn, const char* name) {
    void* symbol = ::dlsym(m_handle, name);
    if (!symbol)
      ::hetero::detail::raise<backend_error>("the NVML library lacks ", name, " (a driver older than NVML 10?); ",
                                             no_hardware_hint);
    fn = reinterpret_cast<Fn>(symbol);
  }

  void* m_handle = nullptr;
};

}  // namespace hetero::power::detail

#endif  // HETERO_POWER_ACTUATORS_DETAIL_NVML_LIBRARY_HPP

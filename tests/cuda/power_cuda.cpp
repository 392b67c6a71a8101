// power in a CUDA build: the NVML actuator (NVML opened with dlopen, nothing linked), built with
// a table within the limits the device reports; it changes nothing (no setting applied, nothing
// to restore).
#include <hetero/power.hpp>

#include "instantiate.hpp"

void cuda_check::power() {
  const auto now = hetero::power::read_nvml();
  hetero::power::nvml_actuator gpu(
      hetero::power::frequency_table({0.9, 1.5}, {now.min_limit_watts, now.max_limit_watts}), {.restore = false});
  (void)gpu.read();
}

// power in a CUDA build: the NVML actuator (NVML opened with dlopen, nothing linked) and the
// GPU/CPU power shift inside a node.
#include <hetero/power.hpp>

#include "instantiate.hpp"

void cuda_check::power() {
  hetero::power::nvml_actuator gpu(hetero::power::frequency_table({0.9, 1.5}, {143.0, 300.0}));
  (void)gpu;
}

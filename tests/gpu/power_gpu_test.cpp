// power on a GPU node: the NVML actuator reads the real device's power, power limit and clocks
// through the driver's libnvidia-ml, and a table within the limits NVML reports is accepted.
// Nothing is set: the lent GPU machines' rules forbid changing clocks or power limits (setting,
// and the named error without privileges, are tested against a stand-in NVML in
// tests/power/nvml_actuator_test.cpp).
#include <Kokkos_Core.hpp>
#include <hetero/power.hpp>

#include <catch2/catch_test_macros.hpp>

#include <cstdio>

TEST_CASE("NVML reads the GPU's power, limit and clocks, and accepts a table within its limits", "[gpu][power]") {
  // The CUDA device Kokkos runs on (NVML numbers devices as CUDA does when nothing reorders them).
  // restore = false: nothing is applied, so the destructor must not write the limit back either.
  const hetero::power::nvml_options options{.device = static_cast<unsigned>(Kokkos::Cuda().cuda_device()),
                                            .restore = false};
  const auto r = hetero::power::read_nvml(options);
  std::printf(
      "kit: NVML device %u: %.1f W (limit %.0f W, accepted %.0f-%.0f W), graphics clock %.3f GHz (max %.3f), "
      "memory clock %.3f GHz\n",
      options.device, r.power_watts, r.limit_watts, r.min_limit_watts, r.max_limit_watts, r.graphics_clock_ghz,
      r.max_graphics_clock_ghz, r.memory_clock_ghz);
  CHECK(r.power_watts > 0);
  CHECK(r.min_limit_watts > 0);
  CHECK(r.min_limit_watts <= r.limit_watts);
  CHECK(r.limit_watts <= r.max_limit_watts);
  CHECK(r.graphics_clock_ghz > 0);
  CHECK(r.graphics_clock_ghz <= r.max_graphics_clock_ghz);
  CHECK(r.memory_clock_ghz > 0);

  // A two-step table spanning the accepted limits: the actuator opens, reads and closes.
  const hetero::power::frequency_table table({r.max_graphics_clock_ghz / 2, r.max_graphics_clock_ghz},
                                             {r.min_limit_watts, r.max_limit_watts});
  {
    const hetero::power::nvml_actuator gpu(table, options);
    const auto again = gpu.read();
    CHECK(again.limit_watts == r.limit_watts);  // nothing was changed
    CHECK(again.max_limit_watts == r.max_limit_watts);
  }
  CHECK(hetero::power::read_nvml(options).limit_watts == r.limit_watts);
}

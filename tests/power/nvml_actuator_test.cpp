#include <hetero/power/actuators/nvml.hpp>

#include <dlfcn.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

using Catch::Matchers::ContainsSubstring;
using hetero::power::frequency_table;
using hetero::power::nvml_actuator;
using hetero::power::nvml_control;
using hetero::power::nvml_options;

namespace {

// A GPU: graphics clocks and board power at each.
const frequency_table gpu({0.9, 1.2, 1.5}, {150.0, 200.0, 280.0});

// The fake library, held open by the test so that its state outlives each actuator's dlclose.
void* fake_library() {
  static void* handle = ::dlopen(HETERO_FAKE_NVML, RTLD_NOW);
  REQUIRE(handle != nullptr);
  return handle;
}

// Reads the fake library's state (the same library instance the actuator opens).
unsigned fake_state(const char* name) {
  auto fn = reinterpret_cast<unsigned (*)()>(::dlsym(fake_library(), name));
  REQUIRE(fn != nullptr);
  return fn();
}

nvml_options fake(unsigned device = 0, nvml_control control = nvml_control::power_limit) {
  (void)fake_library();
  return {.device = device, .library = HETERO_FAKE_NVML, .control = control, .restore = true};
}

}  // namespace

TEST_CASE("NVML absent: a clear backend_error that names the library and the alternatives", "[power][nvml]") {
  if (void* present = ::dlopen("libnvidia-ml.so.1", RTLD_NOW)) {
    ::dlclose(present);
    SKIP("this machine has libnvidia-ml.so.1; the missing-library case cannot be exercised");
  }
  CHECK_THROWS_AS(nvml_actuator(gpu), hetero::backend_error);
  CHECK_THROWS_WITH(nvml_actuator(gpu),
                    ContainsSubstring("NVML is not available: dlopen(\"libnvidia-ml.so.1\") failed") &&
                        ContainsSubstring("NVIDIA driver") && ContainsSubstring("emulated_actuator") &&
                        ContainsSubstring("dry_run_actuator"));
  CHECK_THROWS_WITH(nvml_actuator(gpu, {.library = "libm.so.6"}), ContainsSubstring("lacks nvmlInit_v2"));
}

TEST_CASE("NVML: power limits in milliwatts, capped at the table's top, restored", "[power][nvml]") {
  {
    nvml_actuator actuator(gpu, fake());
    CHECK(actuator.describe() == "NVML power limit of GPU 0");
    actuator.apply(gpu.setting(1));
    CHECK(fake_state("fake_nvml_limit_mw") == 200000);
    actuator.apply({0, 0.9, 162.5});
    CHECK(fake_state("fake_nvml_limit_mw") == 162500);
    actuator.apply({2, 1.5, 300.0});
    CHECK(fake_state("fake_nvml_limit_mw") == 280000);
    CHECK_THROWS_WITH(actuator.apply({1, 1.3, 250.0}), ContainsSubstring("frequency 1.3 GHz is not step 1"));
    CHECK_THROWS_WITH(actuator.apply({4, 1.5, 250.0}), ContainsSubstring("step 4 is outside"));
  }
  CHECK(fake_state("fake_nvml_limit_mw") == 250000);
  CHECK(fake_state("fake_nvml_open") == 0);
}

TEST_CASE("NVML: locked clocks in MHz, unlocked at the end", "[power][nvml]") {
  {
    nvml_actuator actuator(gpu, fake(0, nvml_control::locked_clocks));
    actuator.apply(gpu.setting(2));
    CHECK(fake_state("fake_nvml_locked_mhz") == 1500);
  }
  CHECK(fake_state("fake_nvml_locked_mhz") == 0);
}

TEST_CASE("NVML: its refusals are reported with the call and the reason", "[power][nvml]") {
  nvml_actuator no_root(gpu, fake(1));
  CHECK_THROWS_WITH(no_root.apply(gpu.setting(0)),
                    ContainsSubstring("nvmlDeviceSetPowerManagementLimit failed: Insufficient Permissions") &&
                        ContainsSubstring("needs root"));
  CHECK_THROWS_WITH(nvml_actuator(gpu, fake(5)), ContainsSubstring("nvmlDeviceGetHandleByIndex_v2 failed"));
  const frequency_table beyond({0.9, 1.5}, {50.0, 350.0});
  CHECK_THROWS_WITH(nvml_actuator(beyond, fake()), ContainsSubstring("spans 50 to 350 W") &&
                                                       ContainsSubstring("accepts limits from 100 to 300 W"));
}

TEST_CASE("NVML: power, limits and clocks are read without changing anything", "[power][nvml]") {
  const auto before = hetero::power::read_nvml(fake());
  CHECK(before.power_watts == 87.5);
  CHECK(before.limit_watts == 250.0);
  CHECK(before.min_limit_watts == 100.0);
  CHECK(before.max_limit_watts == 300.0);
  CHECK(before.graphics_clock_ghz == 1.41);
  CHECK(before.max_graphics_clock_ghz == 1.98);
  CHECK(before.memory_clock_ghz == 2.619);
  CHECK(fake_state("fake_nvml_open") == 0);
  {
    nvml_actuator actuator(gpu, fake(0, nvml_control::locked_clocks));
    actuator.apply(gpu.setting(0));
    CHECK(actuator.read().graphics_clock_ghz == 0.9);  // the clock it locked
    CHECK(actuator.read().limit_watts == 250.0);
  }
  CHECK(hetero::power::read_nvml(fake()).graphics_clock_ghz == 1.41);
  CHECK_THROWS_WITH(hetero::power::read_nvml(fake(5)), ContainsSubstring("nvmlDeviceGetHandleByIndex_v2 failed"));
  CHECK(fake_state("fake_nvml_open") == 0);
}

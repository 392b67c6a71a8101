#include <hetero/power/cpufreq_actuator.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cerrno>
#include <filesystem>
#include <string>

#include "fake_sysfs.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::power::cpufreq_actuator;
using hetero::power::cpufreq_mode;
using hetero::power::cpufreq_options;
using hetero::power::frequency_table;

namespace {

// Two CPUs of the seed's Xeon E5-2630L as acpi-cpufreq shows them.
void add_cpus(const hetero::testing::fake_sysfs& sys, const std::string& governor) {
  for (int cpu : {0, 1}) {
    const std::string dir = "cpu" + std::to_string(cpu) + "/cpufreq/";
    sys.write(dir + "scaling_max_freq", "2000000");
    sys.write(dir + "scaling_setspeed", "<unsupported>");
    sys.write(dir + "scaling_governor", governor);
    sys.write(dir + "cpuinfo_min_freq", "1200000");
    sys.write(dir + "cpuinfo_max_freq", "2000000");
    sys.write(dir + "scaling_available_frequencies",
              "2000000 1900000 1800000 1700000 1600000 1500000 1400000 1300000 1200000");
  }
}

cpufreq_options on(const hetero::testing::fake_sysfs& sys, cpufreq_mode mode = cpufreq_mode::scaling_max_freq) {
  cpufreq_options options;
  options.sysfs_root = sys.root();
  options.cpus = {0, 1};
  options.mode = mode;
  return options;
}

}  // namespace

TEST_CASE("cpufreq: scaling_max_freq gets each step in kHz, and the original back", "[power][cpufreq]") {
  hetero::testing::fake_sysfs sys;
  add_cpus(sys, "ondemand");
  const auto table = frequency_table::xeon_e5_2630l();
  {
    cpufreq_actuator cpu(table, on(sys));
    CHECK_THAT(cpu.describe(), ContainsSubstring("scaling_max_freq of CPU(s) 0 1"));
    for (std::size_t step = 0; step < table.size(); ++step) {
      cpu.apply(table.setting(step));
      const std::string khz = std::to_string(1200000 + 100000 * step);
      CHECK(sys.read("cpu0/cpufreq/scaling_max_freq") == khz);
      CHECK(sys.read("cpu1/cpufreq/scaling_max_freq") == khz);
    }
  }
  CHECK(sys.read("cpu0/cpufreq/scaling_max_freq") == "2000000");  // restored
}

TEST_CASE("cpufreq: scaling_setspeed needs the userspace governor", "[power][cpufreq]") {
  const auto table = frequency_table::xeon_e5_2630l();
  hetero::testing::fake_sysfs ondemand;
  add_cpus(ondemand, "ondemand");
  CHECK_THROWS_WITH(cpufreq_actuator(table, on(ondemand, cpufreq_mode::scaling_setspeed)),
                    ContainsSubstring("CPU 0 runs the cpufreq governor \"ondemand\"") &&
                        ContainsSubstring("echo userspace >") &&
                        ContainsSubstring("cpufreq_mode::scaling_max_freq"));
  hetero::testing::fake_sysfs userspace;
  add_cpus(userspace, "userspace");
  cpufreq_actuator cpu(table, on(userspace, cpufreq_mode::scaling_setspeed));
  cpu.apply(table.setting(4));
  CHECK(userspace.read("cpu1/cpufreq/scaling_setspeed") == "1600000");
}

TEST_CASE("cpufreq: values outside the table are refused and nothing is written", "[power][cpufreq]") {
  hetero::testing::fake_sysfs sys;
  add_cpus(sys, "ondemand");
  const auto table = frequency_table::xeon_e5_2630l();
  cpufreq_actuator cpu(table, on(sys));
  CHECK_THROWS_WITH(cpu.apply({9, 2.1, 100.0}), ContainsSubstring("step 9 is outside the frequency table") &&
                                                    ContainsSubstring("1.2, 1.3, 1.4"));
  CHECK_THROWS_WITH(cpu.apply({3, 1.55, 100.0}), ContainsSubstring("frequency 1.55 GHz is not step 3"));
  CHECK_THROWS_WITH(cpu.apply({3, 1.5, 10.0}), ContainsSubstring("power budget 10 W is below P(1.5 GHz)"));
  CHECK(sys.read("cpu0/cpufreq/scaling_max_freq") == "2000000");

  // A table the CPU cannot run is refused at construction.
  const frequency_table too_fast({1.2, 2.2}, {70.0, 99.0});
  CHECK_THROWS_WITH(cpufreq_actuator(too_fast, on(sys)),
                    ContainsSubstring("spans 1.2 to 2.2 GHz") && ContainsSubstring("from 1.2 to 2 GHz"));
  const frequency_table unlisted({1.2, 1.25}, {70.0, 71.0});
  CHECK_THROWS_WITH(cpufreq_actuator(unlisted, on(sys)),
                    ContainsSubstring("1.25 GHz of the table is not one CPU 0 offers"));
}

TEST_CASE("cpufreq: a missing file is named, with what to use instead", "[power][cpufreq]") {
  hetero::testing::fake_sysfs sys;
  add_cpus(sys, "ondemand");
  auto options = on(sys);
  options.cpus = {0, 5};
  CHECK_THROWS_WITH(cpufreq_actuator(frequency_table::xeon_e5_2630l(), options),
                    ContainsSubstring((sys.root() / "cpu5/cpufreq/scaling_max_freq").string()) &&
                        ContainsSubstring("does not exist") && ContainsSubstring("emulated_actuator") &&
                        ContainsSubstring("dry_run_actuator"));
  // This machine's own sysfs, when it has no cpufreq (a virtual machine): the same clear error.
  const std::filesystem::path real = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq";
  if (std::filesystem::exists(real)) SKIP("this machine has cpufreq; the missing-file case is covered above");
  cpufreq_options defaults;
  defaults.cpus = {0};
  CHECK_THROWS_AS(cpufreq_actuator(frequency_table::xeon_e5_2630l(), defaults), hetero::backend_error);
}

TEST_CASE("cpufreq: a file it may not write is refused with the reason", "[power][cpufreq]") {
  const auto message =
      hetero::power::detail::sysfs_error("/sys/x/scaling_max_freq", "write", EACCES, "CPU frequencies");
  CHECK_THAT(message, ContainsSubstring("cannot write /sys/x/scaling_max_freq: permission denied") &&
                          ContainsSubstring("needs root") && ContainsSubstring("emulated_actuator"));
  if (::geteuid() == 0) SKIP("running as root, which may write any file: the permission path cannot be exercised");
  hetero::testing::fake_sysfs sys;
  add_cpus(sys, "ondemand");
  ::chmod((sys.root() / "cpu1/cpufreq/scaling_max_freq").c_str(), 0444);
  CHECK_THROWS_WITH(cpufreq_actuator(frequency_table::xeon_e5_2630l(), on(sys)),
                    ContainsSubstring("cpu1/cpufreq/scaling_max_freq: permission denied"));
}

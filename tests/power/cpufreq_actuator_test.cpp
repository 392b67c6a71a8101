#include <hetero/power/actuators/cpufreq.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fake_sysfs.hpp"
#include "modelled_table.hpp"
#include "random.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::power::cpufreq_actuator;
using hetero::power::cpufreq_frequency_table;
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
  const auto table = hetero::testing::modelled_cpu_table();
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
  const auto table = hetero::testing::modelled_cpu_table();
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
  const auto table = hetero::testing::modelled_cpu_table();
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
  CHECK_THROWS_WITH(cpufreq_actuator(hetero::testing::modelled_cpu_table(), options),
                    ContainsSubstring((sys.root() / "cpu5/cpufreq/scaling_max_freq").string()) &&
                        ContainsSubstring("does not exist") && ContainsSubstring("emulated_actuator") &&
                        ContainsSubstring("dry_run_actuator"));
  // This machine's own sysfs, when it has no cpufreq (a virtual machine): the same clear error.
  const std::filesystem::path real = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq";
  if (std::filesystem::exists(real)) SKIP("this machine has cpufreq; the missing-file case is covered above");
  cpufreq_options defaults;
  defaults.cpus = {0};
  CHECK_THROWS_AS(cpufreq_actuator(hetero::testing::modelled_cpu_table(), defaults), hetero::backend_error);
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
  CHECK_THROWS_WITH(cpufreq_actuator(hetero::testing::modelled_cpu_table(), on(sys)),
                    ContainsSubstring("cpu1/cpufreq/scaling_max_freq: permission denied"));
}

TEST_CASE("cpufreq table: the driver's list of frequencies, ascending, with P(f) at each", "[power][cpufreq]") {
  auto rng = hetero::testing::rng(1);
  const auto power_of = [](double ghz) { return 40.0 + 10.0 * ghz * ghz; };
  for (int round = 0; round < 20; ++round) {
    // Random distinct frequencies (kHz, multiples of 1 MHz), listed in random order with a
    // duplicate, as drivers list them (descending, sometimes repeated).
    std::vector<long long> khz;
    for (std::size_t n = std::uniform_int_distribution<std::size_t>(1, 12)(rng); khz.size() < n;) {
      const long long k = 1000 * std::uniform_int_distribution<long long>(400, 4000)(rng);
      if (std::find(khz.begin(), khz.end(), k) == khz.end()) khz.push_back(k);
    }
    std::vector<long long> listed = khz;
    listed.push_back(khz.front());
    std::shuffle(listed.begin(), listed.end(), rng);
    std::string text;
    for (long long k : listed) text += std::to_string(k) + ' ';
    hetero::testing::fake_sysfs sys;
    const int cpu = std::uniform_int_distribution<int>(0, 7)(rng);
    sys.write("cpu" + std::to_string(cpu) + "/cpufreq/scaling_available_frequencies", text);
    const auto table = cpufreq_frequency_table(power_of, cpu, 0.1, sys.root());
    std::sort(khz.begin(), khz.end());
    REQUIRE(table.size() == khz.size());
    for (std::size_t i = 0; i < khz.size(); ++i) {
      CHECK(table.frequency(i) == static_cast<double>(khz[i]) / 1e6);
      CHECK(table.power(i) == power_of(static_cast<double>(khz[i]) / 1e6));
    }
  }
}

TEST_CASE("cpufreq table: without a list, cpuinfo_min_freq by the step, cpuinfo_max_freq last",
          "[power][cpufreq]") {
  auto rng = hetero::testing::rng(2);
  const auto power_of = [](double ghz) { return 30.0 + 20.0 * ghz; };
  for (int round = 0; round < 20; ++round) {
    const long long low = 1000 * std::uniform_int_distribution<long long>(400, 2000)(rng);
    const long long high = low + 1000 * std::uniform_int_distribution<long long>(0, 3000)(rng);
    const long long step = 1000 * std::uniform_int_distribution<long long>(25, 500)(rng);
    hetero::testing::fake_sysfs sys;
    sys.write("cpu0/cpufreq/cpuinfo_min_freq", std::to_string(low));
    sys.write("cpu0/cpufreq/cpuinfo_max_freq", std::to_string(high));
    const auto table = cpufreq_frequency_table(power_of, 0, static_cast<double>(step) / 1e6, sys.root());
    std::vector<long long> expected;
    for (long long k = low; k < high; k += step) expected.push_back(k);
    expected.push_back(high);
    REQUIRE(table.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      CHECK(table.frequency(i) == static_cast<double>(expected[i]) / 1e6);
      CHECK(table.power(i) == power_of(static_cast<double>(expected[i]) / 1e6));
    }
  }
}

TEST_CASE("cpufreq table: missing files, bad contents and bad arguments are named", "[power][cpufreq]") {
  const auto power_of = [](double ghz) { return 50.0 * ghz; };
  hetero::testing::fake_sysfs sys;
  CHECK_THROWS_WITH(cpufreq_frequency_table(power_of, 3, 0.1, sys.root()),
                    ContainsSubstring((sys.root() / "cpu3/cpufreq/cpuinfo_min_freq").string()) &&
                        ContainsSubstring("does not exist"));
  sys.write("cpu0/cpufreq/scaling_available_frequencies", "1200000 fast");
  CHECK_THROWS_WITH(cpufreq_frequency_table(power_of, 0, 0.1, sys.root()),
                    ContainsSubstring("holds \"1200000 fast\", not a list of frequencies in kHz"));
  sys.write("cpu1/cpufreq/scaling_available_frequencies", "");
  CHECK_THROWS_WITH(cpufreq_frequency_table(power_of, 1, 0.1, sys.root()),
                    ContainsSubstring("frequency table is empty"));
  CHECK_THROWS_WITH(cpufreq_frequency_table(power_of, -1, 0.1, sys.root()),
                    ContainsSubstring("CPU -1; CPU numbers are >= 0"));
  CHECK_THROWS_WITH(cpufreq_frequency_table(power_of, 0, 0.0, sys.root()),
                    ContainsSubstring("a step of 0 GHz; the step must be positive"));
}

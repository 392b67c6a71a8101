#include <hetero/power/actuators/rapl.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <string>

#include "fake_sysfs.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::power::frequency_table;
using hetero::power::rapl_actuator;
using hetero::power::rapl_options;

namespace {

// A package whose power at each frequency is what RAPL counts (package power, not node power).
const frequency_table package({1.2, 1.6, 2.0}, {20.0, 30.0, 45.0});

rapl_options zone_of(const hetero::testing::fake_sysfs& sys) {
  sys.write("intel-rapl:0/constraint_0_power_limit_uw", "60000000");
  sys.write("intel-rapl:0/constraint_0_max_power_uw", "60000000");
  return {.zone = sys.root() / "intel-rapl:0", .restore = true};
}

}  // namespace

TEST_CASE("RAPL: each setting's budget becomes the package limit in microwatts", "[power][rapl]") {
  hetero::testing::fake_sysfs sys;
  {
    rapl_actuator rapl(package, zone_of(sys));
    CHECK_THAT(rapl.describe(), ContainsSubstring("intel-rapl:0"));
    rapl.apply(package.setting(1));
    CHECK(sys.read("intel-rapl:0/constraint_0_power_limit_uw") == "30000000");
    rapl.apply({0, 1.2, 21.25});  // P(f) plus a share of the leftover
    CHECK(sys.read("intel-rapl:0/constraint_0_power_limit_uw") == "21250000");
    rapl.apply({2, 2.0, 52.0});  // above P(f_max): capped, the package cannot use more
    CHECK(sys.read("intel-rapl:0/constraint_0_power_limit_uw") == "45000000");
  }
  CHECK(sys.read("intel-rapl:0/constraint_0_power_limit_uw") == "60000000");  // restored
}

TEST_CASE("RAPL: values outside the table are refused", "[power][rapl]") {
  hetero::testing::fake_sysfs sys;
  rapl_actuator rapl(package, zone_of(sys));
  CHECK_THROWS_WITH(rapl.apply({3, 2.4, 50.0}), ContainsSubstring("step 3 is outside the frequency table"));
  CHECK_THROWS_WITH(rapl.apply({1, 1.6, 25.0}), ContainsSubstring("power budget 25 W is below P(1.6 GHz) = 30 W"));
  CHECK(sys.read("intel-rapl:0/constraint_0_power_limit_uw") == "60000000");
  sys.write("intel-rapl:1/constraint_0_power_limit_uw", "40000000");
  sys.write("intel-rapl:1/constraint_0_max_power_uw", "40000000");
  CHECK_THROWS_WITH(rapl_actuator(package, {.zone = sys.root() / "intel-rapl:1"}),
                    ContainsSubstring("reaches 45 W") && ContainsSubstring("allows at most 40 W"));
}

TEST_CASE("RAPL: a missing zone is named, with what to use instead", "[power][rapl]") {
  hetero::testing::fake_sysfs sys;
  CHECK_THROWS_WITH(rapl_actuator(package, {.zone = sys.root() / "intel-rapl:7"}),
                    ContainsSubstring((sys.root() / "intel-rapl:7/constraint_0_power_limit_uw").string()) &&
                        ContainsSubstring("does not exist") && ContainsSubstring("emulated_actuator"));
  if (std::filesystem::exists("/sys/class/powercap/intel-rapl:0"))
    SKIP("this machine has RAPL; the missing-zone case is covered above");
  CHECK_THROWS_AS(rapl_actuator(package), hetero::backend_error);
}

#include <hetero/power/actuators/dry_run.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sstream>

using Catch::Matchers::ContainsSubstring;
using hetero::power::frequency_table;

TEST_CASE("the dry-run actuator logs and keeps every setting, and checks them", "[power][dry_run]") {
  const frequency_table table({1.0, 2.0}, {10.0, 20.0});
  std::ostringstream log;
  hetero::power::dry_run_actuator dry(table, &log, "rank 3");
  dry.apply(table.setting(1));
  dry.apply({0, 1.0, 12.5});
  CHECK_THROWS_WITH(dry.apply({2, 3.0, 40.0}), ContainsSubstring("dry run (rank 3): step 2 is outside"));
  const auto history = dry.history();
  REQUIRE(history.size() == 2);
  CHECK(history[0].setting.step == 1);
  CHECK(history[1].setting.power_watts == 12.5);
  CHECK(history[1].seconds >= history[0].seconds);
  CHECK(log.str() ==
        "[hetero power] rank 3: step 1, 2.000 GHz, budget 20.00 W\n"
        "[hetero power] rank 3: step 0, 1.000 GHz, budget 12.50 W\n");
}

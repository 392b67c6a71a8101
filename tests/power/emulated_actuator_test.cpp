#include <hetero/core/timer.hpp>
#include <hetero/power/dry_run_actuator.hpp>
#include <hetero/power/emulated_actuator.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sstream>

using Catch::Matchers::ContainsSubstring;
using hetero::power::frequency_table;

namespace {

void busy_for(double seconds) {
  const double end = hetero::wall_seconds() + seconds;
  while (hetero::wall_seconds() < end) {
  }
}

}  // namespace

TEST_CASE("emulated DVFS stretches marked compute by f_max / f", "[power][emulated]") {
  hetero::power::emulated_actuator cpu(frequency_table::xeon_e5_2630l());
  CHECK(cpu.frequency() == 2.0);
  CHECK(cpu.slowdown() == 1.0);
  cpu.apply(cpu.table().setting(0));
  CHECK(cpu.frequency() == Catch::Approx(1.2));
  CHECK(cpu.slowdown() == Catch::Approx(2.0 / 1.2));
  // The stretch is measured against the compute's own duration, so the ratio holds under load.
  double inside = 0;
  hetero::stopwatch outer;
  const int answer = cpu.compute([&] {
    hetero::stopwatch watch;
    busy_for(0.02);
    inside = watch.seconds();
    return 42;
  });
  const double total = outer.seconds();
  CHECK(answer == 42);
  CHECK(total / inside == Catch::Approx(2.0 / 1.2).margin(0.1));
  CHECK_THROWS_WITH(cpu.apply({0, 1.25, 80.0}),
                    ContainsSubstring("emulated DVFS") && ContainsSubstring("1.25 GHz is not step 0"));
  CHECK(cpu.frequency() == Catch::Approx(1.2));
}

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

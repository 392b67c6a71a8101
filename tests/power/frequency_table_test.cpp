#include <hetero/power/frequency_table.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <limits>
#include <vector>

using Catch::Matchers::ContainsSubstring;
using hetero::power::frequency_table;

TEST_CASE("steps are found by frequency and by power", "[power][table]") {
  const frequency_table table({1.0, 1.5, 1.6, 2.4}, {10.0, 15.0, 15.0, 31.0});  // uneven, one flat step
  CHECK(table.step_of(1.5) == 1);
  CHECK(table.step_of(2.4) == 3);
  CHECK_THROWS_WITH(table.step_of(1.7), ContainsSubstring("1.7 GHz is not in the frequency table") &&
                                            ContainsSubstring("1, 1.5, 1.6, 2.4 GHz"));
  CHECK(table.highest_step_within(10.0) == 0);
  CHECK(table.highest_step_within(14.99) == 0);
  CHECK(table.highest_step_within(15.0) == 2);  // a step that costs nothing more is taken
  CHECK(table.highest_step_within(100.0) == 3);
  CHECK_THROWS_AS(table.highest_step_within(9.0), hetero::invalid_argument);
  CHECK(table.even_step(4 * 15.0, 4) == 2);
  CHECK(table.even_step(4 * 15.0 - 1e-6, 4) == 0);
  CHECK(table.minimum_budget(3) == Catch::Approx(30.0));
}

TEST_CASE("evenly spaced tables round their frequencies", "[power][table]") {
  const auto table = frequency_table::evenly_spaced(0.8, 1.4, 0.2, [](double f) { return 100.0 * f; });
  REQUIRE(table.size() == 4);
  CHECK(table.frequency(3) == 1.4);
  CHECK(table.power(2) == Catch::Approx(120.0));
  CHECK_THROWS_AS(frequency_table::evenly_spaced(1.0, 0.5, 0.1, [](double) { return 1.0; }),
                  hetero::invalid_argument);
}

TEST_CASE("evenly spaced tables refuse infinite bounds and steps and too many steps", "[power][table]") {
  // An infinite bound made the number of steps infinite, converted to an integer (undefined: a
  // one-entry table here, a loop until memory ran out where the conversion saturates).
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto flat = [](double) { return 1.0; };
  CHECK_THROWS_WITH(frequency_table::evenly_spaced(1.0, inf, 0.1, flat), ContainsSubstring("need finite values"));
  CHECK_THROWS_WITH(frequency_table::evenly_spaced(-inf, 2.0, 0.1, flat), ContainsSubstring("need finite values"));
  CHECK_THROWS_WITH(frequency_table::evenly_spaced(1.0, 2.0, inf, flat), ContainsSubstring("need finite values"));
  for (const double value : {1.0, 2.0, 0.1}) {  // each argument NaN in turn
    CHECK_THROWS_AS(frequency_table::evenly_spaced(value == 1.0 ? nan : 1.0, value == 2.0 ? nan : 2.0,
                                                   value == 0.1 ? nan : 0.1, flat),
                    hetero::invalid_argument);
  }
  CHECK_THROWS_WITH(frequency_table::evenly_spaced(-1e308, 1e308, 1.0, flat),  // max - min overflows
                    ContainsSubstring("would have more than 1000000 entries, the most allowed"));
  const double step = 1.0 / 1024;  // exact in binary: 999999 steps exactly
  CHECK(frequency_table::evenly_spaced(1.0, 1.0 + 999999 * step, step, flat).size() == 1000000);  // the most
  CHECK_THROWS_WITH(frequency_table::evenly_spaced(1.0, 1.0 + 1000000 * step, step, flat),
                    ContainsSubstring("more than 1000000 entries"));
}

TEST_CASE("bad tables and budgets are refused with the value seen and the value allowed", "[power][table]") {
  using V = std::vector<double>;
  CHECK_THROWS_WITH(frequency_table(V{}, V{}), ContainsSubstring("empty"));
  CHECK_THROWS_WITH(frequency_table(V{1.0, 2.0}, V{1.0}), ContainsSubstring("2 frequencies but 1 power"));
  CHECK_THROWS_WITH(frequency_table(V{1.0, 2.0, 1.5}, V{1.0, 2.0, 3.0}),
                    ContainsSubstring("frequency table is not increasing: entry 2 is 1.5 GHz after 2 GHz"));
  CHECK_THROWS_WITH(frequency_table(V{1.0, 1.0}, V{1.0, 2.0}), ContainsSubstring("not increasing"));
  CHECK_THROWS_WITH(frequency_table(V{1.0, 2.0, 3.0}, V{10.0, 30.0, 20.0}),
                    ContainsSubstring("power table is not monotone: P(3 GHz) = 20 W is below P(2 GHz) = 30 W"));
  CHECK_THROWS_WITH(frequency_table(V{-1.0}, V{1.0}), ContainsSubstring("finite and positive"));
  CHECK_THROWS_WITH(frequency_table(V{1.0}, V{std::numeric_limits<double>::quiet_NaN()}),
                    ContainsSubstring("finite and positive"));
  CHECK_THROWS_AS(frequency_table(V{1.0, 2.0}, V{2.0, 1.0}), hetero::invalid_argument);

  const frequency_table table({1.0, 2.0}, {10.0, 20.0});
  CHECK_THROWS_WITH(table.check_budget(29.0, 3),
                    ContainsSubstring("29 W is below the minimum for 3 device(s)") && ContainsSubstring("= 30 W"));
  CHECK_NOTHROW(table.check_budget(30.0, 3));
  CHECK_THROWS_WITH(table.check_budget(30.0, 0), ContainsSubstring("0 devices"));
}

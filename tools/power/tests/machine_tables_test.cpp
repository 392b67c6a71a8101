#include <hetero_tools/power/machine_tables.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>

using namespace hetero_tools::power;

TEST_CASE("the Xeon E5-2630L table: 1.2 to 2.0 GHz by 0.1, the modelled node power", "[power][tables]") {
  const auto table = xeon_e5_2630l();
  REQUIRE(table.size() == 9);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const double f = 1.2 + 0.1 * static_cast<double>(i);
    CHECK(table.frequency(i) == Catch::Approx(f));
    const double volts = 0.90 + (f - 1.2) * 0.15 / 0.8;
    CHECK(table.power(i) == Catch::Approx(55.0 + 40.0 * (f / 2.0) * std::pow(volts / 1.05, 2)));
    if (i > 0) CHECK(table.power(i) > table.power(i - 1));
  }
  CHECK(table.min_frequency() == Catch::Approx(1.2));
  CHECK(table.max_frequency() == Catch::Approx(2.0));
  CHECK(table.max_power() == Catch::Approx(95.0));  // 55 W static + 40 W dynamic at 2.0 GHz
}

TEST_CASE("the package and GPU models: the node table without its static power, a cubic GPU curve",
          "[power][tables]") {
  const auto node = xeon_e5_2630l(), package = cpu_package_model(), gpu = gpu_board_model();
  REQUIRE(package.size() == node.size());
  for (std::size_t i = 0; i < node.size(); ++i) {
    CHECK(package.frequency(i) == node.frequency(i));
    CHECK(package.power(i) == Catch::Approx(node.power(i) - xeon_node_static_watts + 20.0));
  }
  CHECK(package.max_power() == Catch::Approx(60.0));
  REQUIRE(gpu.size() == 7);
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    const double f = 0.9 + 0.1 * static_cast<double>(i);
    CHECK(gpu.frequency(i) == Catch::Approx(f));
    CHECK(gpu.power(i) == Catch::Approx(100.0 + 200.0 * std::pow(f / 1.5, 3)));
  }
  CHECK(gpu.min_power() == Catch::Approx(143.2));
  CHECK(gpu.max_power() == Catch::Approx(300.0));
}

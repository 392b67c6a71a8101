#include <hetero_tools/power/simulator.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>

using Catch::Matchers::ContainsSubstring;
using namespace hetero_tools::power;

TEST_CASE("simulated node: shifting never loses to the fixed split, and wins in between", "[power][node]") {
  const auto g = gpu_board_model(), c = cpu_package_model();
  const auto pattern = alternating_node_pattern(25);
  double best = 0;
  for (double b = g.min_power() + c.min_power(); b <= g.max_power() + c.max_power(); b += 10) {
    const auto r = simulate_node_shift(pattern, b, 200);
    CHECK(r.shifted_seconds <= r.fixed_seconds * (1 + 1e-12));
    best = std::max(best, 1 - r.shifted_seconds / r.fixed_seconds);
  }
  CHECK(best > 0.15);
  // At the top budget both run everything at f_max: 100 steps of 20 ms and 100 of 20 ms.
  const auto top = simulate_node_shift(pattern, g.max_power() + c.max_power(), 200);
  CHECK(top.fixed_seconds == Catch::Approx(4.0));
  CHECK(top.shifted_seconds == Catch::Approx(4.0));
}

TEST_CASE("simulated node: a budget below both minimums and an empty period are refused", "[power][node]") {
  const auto g = gpu_board_model(), c = cpu_package_model();
  CHECK_THROWS_WITH(simulate_node_shift(alternating_node_pattern(), g.min_power() + c.min_power() - 1.0),
                    ContainsSubstring("is below the minimum: P_gpu(f_min) + P_cpu(f_min)"));
  CHECK_THROWS_WITH(alternating_node_pattern(0), ContainsSubstring("alternating node pattern with a period of 0"));
}

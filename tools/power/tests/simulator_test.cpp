#include <hetero_tools/power/simulator.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <vector>

using Catch::Matchers::ContainsSubstring;
using namespace hetero::power;
using namespace hetero_tools::power;

namespace {

// A run's time by the plain formula: every iteration lasts as long as its slowest rank at the
// given frequencies, plus the collective.
double bulk_synchronous_time(const imbalance_pattern& p, const std::vector<double>& ghz,
                             const simulation_options& o) {
  std::vector<double> work(p.ranks);
  double seconds = 0;
  for (std::size_t it = 0; it < o.iterations; ++it) {
    p.work(it, work);
    double slowest = 0;
    for (std::size_t r = 0; r < p.ranks; ++r) slowest = std::max(slowest, work[r] / ghz[r]);
    seconds += slowest + o.sync_seconds;
  }
  return seconds;
}

}  // namespace

TEST_CASE("even and static runs match the bulk-synchronous formula", "[power][simulator]") {
  simulation_options options;
  options.iterations = 60;
  const auto& t = options.table;
  const auto synthetic = synthetic_imbalance(5, {.reshuffle_every = 7});
  const double budget = 5 * t.power(3) + 2.0;
  const auto even = simulate(synthetic, budget, simulated_policy::even, options);
  CHECK(even.seconds == Catch::Approx(bulk_synchronous_time(synthetic, std::vector<double>(5, 1.5), options)));
  CHECK(even.max_power_watts == Catch::Approx(5 * t.power(3)));
  CHECK(even.energy_joules == Catch::Approx(5 * t.power(3) * even.seconds));
  CHECK(even.allocations == 0);

  const auto btmz = btmz_like_imbalance(6);
  const auto a = allocate(whole_run_work(btmz, options.iterations), t, 6 * t.power(4));
  std::vector<double> ghz;
  for (const auto& s : a.settings) ghz.push_back(s.frequency_ghz);
  const auto fixed = simulate(btmz, 6 * t.power(4), simulated_policy::static_criticality, options);
  CHECK(fixed.seconds == Catch::Approx(bulk_synchronous_time(btmz, ghz, options)));
  CHECK(fixed.max_power_watts <= 6 * t.power(4));
  CHECK(fixed.allocations == 1);
}

TEST_CASE("16 ranks, synthetic pattern: the dynamic policy beats even by 13 % or more", "[power][simulator]") {
  // The seed measured 14.1 % (groups of 8) and 13.3 % (one group) on its 16 nodes.
  const simulation_options options;
  const auto& t = options.table;
  const auto pattern = synthetic_imbalance(16);
  double best = 0;
  for (std::size_t step = 1; step + 1 < t.size(); ++step) {
    const double budget = 16 * t.power(step);  // budgets the even allocation uses in full
    const auto even = simulate(pattern, budget, simulated_policy::even, options);
    const auto dynamic = simulate(pattern, budget, simulated_policy::dynamic, options);
    CHECK(dynamic.max_power_watts <= budget * (1 + 1e-12));
    CHECK(dynamic.seconds <= even.seconds);
    best = std::max(best, 1 - dynamic.seconds / even.seconds);
  }
  CHECK(best >= 0.13);
}

TEST_CASE("16 ranks, BT-MZ-like static imbalance: dynamic near static, both well ahead", "[power][simulator]") {
  // The seed: 22.3 % static, 21.3 % dynamic (one group), 19.8 % (groups of 8) on BT-MZ class C.
  const simulation_options options;
  const auto& t = options.table;
  const auto pattern = btmz_like_imbalance(16);
  const double budget = 16 * t.power(2);
  const double even = simulate(pattern, budget, simulated_policy::even, options).seconds;
  const double fixed = simulate(pattern, budget, simulated_policy::static_criticality, options).seconds;
  const double dynamic = simulate(pattern, budget, simulated_policy::dynamic, options).seconds;
  CHECK(1 - dynamic / even > 0.18);
  CHECK(std::abs(dynamic - fixed) / fixed < 0.03);
}

TEST_CASE("the dynamic policy learns the loop's period online", "[power][simulator]") {
  simulation_options options;
  options.iterations = 200;
  const auto& t = options.table;
  const auto pattern = synthetic_imbalance(8);
  // At the even 1.6 GHz an iteration takes 0.096 / 1.6 s + 50 us: 15.01 frames; phases of at
  // least 24 frames are two iterations.
  const auto run = simulate(pattern, 8 * t.power(4), simulated_policy::dynamic, options);
  CHECK(run.period_frames == Catch::Approx(15.0).margin(1.0));
  CHECK(run.phase_frames == 30);
  CHECK(run.allocations > 10);
  auto grouped = options;
  grouped.group_size = 4;
  const auto groups = simulate(pattern, 8 * t.power(4), simulated_policy::dynamic, grouped);
  CHECK(groups.max_power_watts <= 8 * t.power(4) * (1 + 1e-12));
  CHECK(groups.seconds != run.seconds);
}

TEST_CASE("the simulator refuses bad input", "[power][simulator]") {
  const auto pattern = synthetic_imbalance(4);
  const simulation_options defaults;
  CHECK_THROWS_WITH(simulate(pattern, 100.0, simulated_policy::even),
                    ContainsSubstring("100 W is below the minimum for 4 device(s)"));
  auto zero = defaults;
  zero.frame_seconds = 0;
  CHECK_THROWS_WITH(simulate(pattern, 1000.0, simulated_policy::dynamic, zero),
                    ContainsSubstring("frame length is 0 s"));
  CHECK_THROWS_WITH(simulate_node_shift(alternating_node_pattern(), 10.0), ContainsSubstring("node budget 10 W"));
}

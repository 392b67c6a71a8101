#include <hetero_tools/power/imbalance_patterns.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

using namespace hetero_tools::power;

TEST_CASE("synthetic pattern: up to 2x between ranks, dealt anew every period", "[power][patterns]") {
  const auto pattern = synthetic_imbalance(16, {.reshuffle_every = 10});
  REQUIRE(pattern.ranks == 16);
  std::vector<double> levels(16), work(16), first(16);
  for (std::size_t r = 0; r < 16; ++r) levels[r] = 0.048 * (1.0 + static_cast<double>(r) / 15.0);
  std::size_t changes = 0;
  for (std::size_t it = 0; it < 200; ++it) {
    pattern.work(it, work);
    std::vector<double> sorted = work;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t r = 0; r < 16; ++r) CHECK(sorted[r] == Catch::Approx(levels[r]));
    if (it % 10 == 0) {
      changes += work != first ? 1 : 0;
      first = work;
    } else {
      CHECK(work == first);  // the same deal within a period
    }
  }
  CHECK(changes >= 18);  // 20 periods; a deal may repeat by chance, not often
  std::vector<double> again(16);
  pattern.work(123, work);
  synthetic_imbalance(16, {.reshuffle_every = 10}).work(123, again);
  CHECK(work == again);  // deterministic
}

TEST_CASE("BT-MZ-like pattern: zones packed onto processes, a node as slow as its slowest", "[power][patterns]") {
  const auto pattern = btmz_like_imbalance(16);
  std::vector<double> work(16), later(16);
  pattern.work(0, work);
  pattern.work(99, later);
  CHECK(work == later);  // static
  CHECK(*std::max_element(work.begin(), work.end()) == Catch::Approx(0.336));
  CHECK(work[0] == *std::max_element(work.begin(), work.end()));  // the largest zone lands on node 0
  const double mean = std::accumulate(work.begin(), work.end(), 0.0) / 16;
  CHECK(mean / work[0] > 0.6);
  CHECK(mean / work[0] < 0.9);
  for (double w : work) CHECK(w > 0);
  // One process per rank and as many zones as processes: each rank holds one zone.
  const auto one = btmz_like_imbalance(
      4, {.zones_x = 2, .zones_y = 2, .ratio = 4.0, .processes_per_rank = 1, .max_gigacycles = 16.0});
  std::vector<double> zones(4);
  one.work(0, zones);
  std::sort(zones.begin(), zones.end());
  CHECK(zones == std::vector<double>{1.0, 4.0, 4.0, 16.0});
}

TEST_CASE("patterns refuse what they cannot build", "[power][patterns]") {
  using Catch::Matchers::ContainsSubstring;
  CHECK_THROWS_WITH(synthetic_imbalance(4, {.max_ratio = 0.5}), ContainsSubstring("max_ratio 0.5"));
  CHECK_THROWS_WITH(synthetic_imbalance(4, {.reshuffle_every = 0}), ContainsSubstring("reshuffle_every 0"));
  CHECK_THROWS_AS(synthetic_imbalance(0), hetero::invalid_argument);
  CHECK_THROWS_WITH(btmz_like_imbalance(4, {.zones_x = 1}), ContainsSubstring("1 x 16 zones"));
}

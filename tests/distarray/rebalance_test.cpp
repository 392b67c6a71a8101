// Rebalancing: gen-block sizes proportional to rates (sums, minimums, rounding), balanced
// index spaces from every rank's measured rate, and redistribution that keeps every element.
#include <hetero/distarray/rebalance.hpp>
#include <hetero/distarray/reflect.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <limits>
#include <numeric>

#include "distarray_support.hpp"

using Catch::Matchers::ContainsSubstring;

using dist_test::world_rank;
using dist_test::world_size;

TEST_CASE("gen-block sizes follow the rates and sum to the extent", "[dist][rebalance]") {
  CHECK(hetero::gen_block_sizes(1000, {3.0, 1.0}) == std::vector<std::int64_t>{750, 250});
  CHECK(hetero::gen_block_sizes(10, {1.0, 1.0, 1.0}) == std::vector<std::int64_t>{4, 3, 3});
  CHECK(hetero::gen_block_sizes(10, {0.0, 1.0}, 2) == std::vector<std::int64_t>{2, 8});
  auto rng = hetero::testing::rng(91);
  dist_test::mismatches wrong;
  for (int trial = 0; trial < 500; ++trial) {
    const auto parts = static_cast<std::size_t>(dist_test::uniform(rng, 1, 9));
    std::vector<double> rates(parts);
    for (auto& r : rates) r = std::uniform_real_distribution<double>(0.0, 10.0)(rng);
    const std::int64_t minimum = dist_test::uniform(rng, 0, 3);
    const std::int64_t extent = minimum * static_cast<std::int64_t>(parts) + dist_test::uniform(rng, 0, 5000);
    const auto sizes = hetero::gen_block_sizes(extent, rates, minimum);
    wrong.expect(std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) == extent, "sum, trial ", trial);
    const double total = std::accumulate(rates.begin(), rates.end(), 0.0);
    for (std::size_t p = 0; p < parts; ++p) {
      const double ideal =
          static_cast<double>(minimum) +
          static_cast<double>(extent - minimum * static_cast<std::int64_t>(parts)) * rates[p] / total;
      wrong.expect(sizes[p] >= minimum && std::abs(static_cast<double>(sizes[p]) - ideal) < 1.0 + 1e-9,
                   "size of part ", p, " in trial ", trial, ": ", sizes[p], " for an ideal of ", ideal);
    }
  }
  DIST_CHECK_NO_MISMATCH(wrong);
}

TEST_CASE("gen-block sizes refuse rates and minimums that cannot work", "[dist][rebalance]") {
  CHECK_THROWS_WITH(hetero::gen_block_sizes(10, {1.0, -2.0}),
                    ContainsSubstring("the rate of part 1 is -2; rates must be finite and >= 0"));
  CHECK_THROWS_WITH(hetero::gen_block_sizes(10, {std::numeric_limits<double>::quiet_NaN()}),
                    ContainsSubstring("the rate of part 0 is nan"));
  CHECK_THROWS_WITH(hetero::gen_block_sizes(10, {0.0, 0.0}), ContainsSubstring("every rate is 0"));
  CHECK_THROWS_WITH(
      hetero::gen_block_sizes(10, {1.0, 1.0}, 6),
      ContainsSubstring("a minimum of 6 indices for each of 2 parts needs 12 indices but the extent is 10"));
  CHECK_THROWS_WITH(hetero::gen_block_sizes(10, {}), ContainsSubstring("no rates given"));
}

TEST_CASE("a balanced space gives faster ranks more indices", "[dist][rebalance]") {
  const int p = world_size(), me = world_rank();
  const std::int64_t n = 600;
  hetero::process_grid<2> grid({p, 1});
  hetero::index_space<2> space({n, 8}, grid);
  const double rate = 1000.0 * (me + 1);  // elements per second: rank r is r+1 times as fast
  const auto balanced = hetero::balanced_space(space, 0, rate);
  std::vector<double> expected_rates;
  for (int r = 0; r < p; ++r)
    expected_rates.push_back((r + 1) * 1000.0 / (static_cast<double>(space.local_extents(r)[1])));
  const auto expected = hetero::gen_block_sizes(n, expected_rates);
  CHECK(balanced.axis(0).kind() == hetero::distribution_kind::gen_block);
  CHECK(balanced.axis(0).format().sizes() == expected);
  CHECK(balanced.axis(1).kind() == hetero::distribution_kind::block);
  // A bad rate on one rank is reported on every rank (no rank is left waiting).
  CHECK_THROWS_WITH(hetero::balanced_space(space, 0, me == p - 1 ? -1.0 : 1.0),
                    ContainsSubstring("balanced_space: rank " + std::to_string(p - 1) + " measured a rate of -1"));
  CHECK_THROWS_WITH(hetero::balanced_space(space, 2, 1.0), ContainsSubstring("balanced_space: axis 2 is outside"));
}

TEST_CASE("rebalancing redistributes every element onto the measured gen-block", "[dist][rebalance]") {
  const int p = world_size(), me = world_rank();
  const std::int64_t n = 40 * p + 7;
  hetero::process_grid<2> grid({p, 1});
  hetero::index_space<2> space({n, 5}, grid);
  const auto shadow = hetero::shadow_width<2>::on_axis(0, 1, 2);
  for (auto mode : {hetero::device_buffer_path::automatic, hetero::device_buffer_path::staged}) {
    hetero::distributed_array<double, 2, Kokkos::HostSpace> a(space, {.shadow = shadow, .device_path = mode});
    dist_test::fill(a, 93);
    const double rate = 100.0 * (p - me);  // rank 0 the fastest
    const auto b = hetero::rebalance(a, 0, rate);
    CHECK(b.shadow() == shadow);
    CHECK(b.staged() == a.staged());
    const auto& axis = b.space().axis(0);
    REQUIRE(axis.kind() == hetero::distribution_kind::gen_block);
    for (int r = 0; r < p; ++r) CHECK(axis.local_size(r) >= 2);  // the shadow width stays possible
    if (p > 1) CHECK(axis.local_size(0) > axis.local_size(p - 1));
    dist_test::mismatches wrong;
    dist_test::for_each_owned_element(b, [&](const auto& g, double v) {
      wrong.expect(v == dist_test::value_at<double>(g, 93), "element ", hetero::detail::format_array(g));
    });
    DIST_CHECK_NO_MISMATCH(wrong);
    CHECK_NOTHROW(hetero::reflect(b));
  }
  hetero::index_space<2> other({n + 1, 5}, grid);
  hetero::distributed_array<double, 2, Kokkos::HostSpace> a(space);
  CHECK_THROWS_WITH(hetero::redistribute(a, other),
                    ContainsSubstring("redistribute: the new index space has extents [" + std::to_string(n + 1) +
                                      ", 5] but the array has [" + std::to_string(n) + ", 5]"));
}

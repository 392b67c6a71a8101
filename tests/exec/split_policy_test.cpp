// split_policy: range checks, the cut of a range by a weight into a device chunk and host
// chunks, and the host chunk count from the configuration.
#include <hetero/exec/split_policy.hpp>
#include <hetero/exec/work_sharing.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <limits>
#include <random>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("a split policy refuses negative, reversed and overflowing ranges, naming the value", "[exec][policy]") {
  using policy = hetero::split_policy<>;
  CHECK_THROWS_WITH(policy(5, 3), ContainsSubstring("[5, 3)") && ContainsSubstring("begin > end"));
  CHECK_THROWS_WITH(policy(-2, 3), ContainsSubstring("begin is -2"));
  CHECK_THROWS_AS(policy(-2, 3), hetero::invalid_argument);
  CHECK_THROWS_WITH(policy(0u, std::numeric_limits<std::uint64_t>::max()),
                    ContainsSubstring("18446744073709551615") && ContainsSubstring("64-bit"));
  CHECK_THROWS_WITH(hetero::detail::to_split_policy(-7), ContainsSubstring("iteration count is -7"));
  CHECK_THROWS_WITH(policy(0, 4).host_chunks(-1), ContainsSubstring("host_chunks(-1)"));
  CHECK_THROWS_WITH(policy(0, 4).weight(1.5), ContainsSubstring("1.5") && ContainsSubstring("[0, 1]"));
  CHECK_THROWS_AS(policy(0, 4).weight(std::numeric_limits<double>::quiet_NaN()), hetero::invalid_argument);
  const auto p = policy(3, 11);
  CHECK(p.begin() == 3);
  CHECK(p.end() == 11);
  CHECK(p.size() == 8);
  CHECK_FALSE(p.weight().has_value());
  CHECK(hetero::detail::to_split_policy(std::int64_t{0}).size() == 0);
}

TEST_CASE("a weight cuts the range into one device chunk and balanced host chunks covering it once",
          "[exec][policy]") {
  auto gen = hetero::testing::rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t begin = std::uniform_int_distribution<std::int64_t>(0, 1000)(gen);
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(0, 5000)(gen);
    const double weights[] = {0.0, 1.0, std::uniform_real_distribution<double>(0, 1)(gen)};
    const double w = weights[trial % 3];
    const int chunks = std::uniform_int_distribution<int>(1, 9)(gen);
    const auto plan = hetero::detail::make_split_plan(begin, begin + n, w, chunks);
    INFO("begin " << begin << " n " << n << " w " << w << " chunks " << chunks);
    CHECK(plan.device_begin == begin);
    CHECK(plan.device_end == plan.host_begin);
    CHECK(plan.host_end == begin + n);
    CHECK(plan.host_items() == std::llround(w * static_cast<double>(n)));
    CHECK(plan.host_chunks >= 1);
    CHECK(plan.host_chunks <= std::max<std::int64_t>(1, std::min<std::int64_t>(chunks, plan.host_items())));
    std::int64_t next = plan.host_begin, smallest = n, largest = 0;
    for (int c = 0; c < plan.host_chunks; ++c) {
      const auto [b, e] = plan.host_chunk(c);
      CHECK(b == next);
      next = e;
      smallest = std::min(smallest, e - b);
      largest = std::max(largest, e - b);
    }
    CHECK(next == plan.host_end);
    if (plan.host_items() > 0) CHECK(largest - smallest <= 1);
  }
  const auto all_device = hetero::detail::make_split_plan(0, 10, 0.0, 4);
  CHECK(all_device.device_items() == 10);
  CHECK(all_device.host_items() == 0);
  const auto all_host = hetero::detail::make_split_plan(0, 10, 1.0, 4);
  CHECK(all_host.device_items() == 0);
  CHECK(all_host.host_chunks == 4);
}

TEST_CASE("the host chunk count follows the policy, the configured cores and the host concurrency",
          "[exec][policy]") {
  const auto saved = hetero::work_sharing_config();
  const int concurrency = Kokkos::DefaultHostExecutionSpace().concurrency();
  hetero::split_policy<> p(0, 100);
  CHECK(hetero::detail::host_chunk_count(p, hetero::split_config{}) == concurrency);
  CHECK(hetero::detail::host_chunk_count(p, hetero::split_config{1, true, 0.2}) == 1);
  CHECK(hetero::detail::host_chunk_count(p, hetero::split_config{concurrency + 5, true, 0.2}) == concurrency);
  p.host_chunks(1);
  CHECK(hetero::detail::host_chunk_count(p, hetero::split_config{}) == 1);
#if HETERO_HAS_SERIAL()
  hetero::split_policy<Kokkos::Serial, Kokkos::Serial> serial(0, 100);
  CHECK(hetero::detail::host_chunk_count(serial, hetero::split_config{8, false, 0.2}) == 1);
#endif
  CHECK_THROWS_WITH(hetero::set_work_sharing_config(hetero::split_config{-1, true, 0.2}),
                    ContainsSubstring("host_cores is -1"));
  CHECK_THROWS_WITH(hetero::set_work_sharing_config(hetero::split_config{0, true, 1.25}),
                    ContainsSubstring("initial_weight is 1.25"));
  hetero::set_work_sharing_config(hetero::split_config{1, false, 0.4});
  CHECK(hetero::work_sharing_config().initial_weight == 0.4);
  hetero::set_work_sharing_config(saved);
}

TEST_CASE("a policy on one space keeps one instance: its host is its device", "[exec][policy]") {
  using space = hetero::default_host_space;
  auto gen = hetero::testing::rng(71);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(0, 1'000'000)(gen);
  const hetero::split_policy<space, space> counted(0, n);
  CHECK(&counted.host() == &counted.device());
  CHECK(counted.size() == n);
  const hetero::split_policy<space, space> given(space(), space(), 3, n + 3);
  CHECK(&given.host() == &given.device());
  CHECK(given.begin() == 3);
  CHECK(given.end() == n + 3);
  using one_space = hetero::split_policy<space, space>;
  CHECK_THROWS_AS(one_space(space(), space(), 5, 4), hetero::invalid_argument);
}

// mirrored_array: per-range bookkeeping of the current copy, moves of only the missing rows
// (counted in bytes), one allocation where the spaces share memory, and size checks.
#include <hetero/exec/mirrored_array.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using device_space = hetero::split_spaces::device;
using host_space = hetero::split_spaces::host;
using rows3 = hetero::mirrored_array<double* [3], device_space, host_space>;

}  // namespace

TEST_CASE("the interval set adds, removes and reports missing ranges", "[exec][mirror]") {
  hetero::detail::interval_set set;
  set.add(10, 20);
  set.add(30, 40);
  set.add(20, 25);  // touches [10, 20): merged
  REQUIRE(set.ranges().size() == 2);
  CHECK(set.ranges()[0] == std::pair<std::int64_t, std::int64_t>(10, 25));
  CHECK(set.missing(0, 50) == std::vector<hetero::detail::interval_set::range>{{0, 10}, {25, 30}, {40, 50}});
  set.remove(12, 35);
  CHECK(set.ranges() == std::vector<hetero::detail::interval_set::range>{{10, 12}, {35, 40}});
  CHECK(set.contains(36, 40));
  CHECK_FALSE(set.contains(11, 13));
  set.add(0, 100);
  CHECK(set.ranges().size() == 1);
  CHECK(set.missing(0, 100).empty());
}

TEST_CASE("separate copies move only the rows a side lacks and count the bytes", "[exec][mirror]") {
  auto gen = hetero::testing::rng(21);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(50, 400)(gen);
  rows3 a(hetero::mirror_mode::separate, "a", n);
  REQUIRE_FALSE(a.shares_memory());
  CHECK(a.rows() == n);
  CHECK(a.row_bytes() == 3 * sizeof(double));
  CHECK(a.device_current());  // both zero-filled
  CHECK(a.host_current());

  std::vector<double> values(static_cast<std::size_t>(3 * n));
  std::iota(values.begin(), values.end(), 1.0);
  a.assign_host(values);
  CHECK_FALSE(a.device_current(0, 1));
  CHECK(a.bytes_to_device() == 0);

  const std::int64_t lo = std::uniform_int_distribution<std::int64_t>(0, n / 2)(gen);
  const std::int64_t hi = std::uniform_int_distribution<std::int64_t>(lo, n)(gen);
  a.sync_device(lo, hi);
  CHECK(a.bytes_to_device() == static_cast<std::uint64_t>(hi - lo) * a.row_bytes());
  CHECK(a.device_current(lo, hi));
  a.sync_device(lo, hi);  // nothing lacking: nothing moves
  CHECK(a.bytes_to_device() == static_cast<std::uint64_t>(hi - lo) * a.row_bytes());
  a.sync_device();  // the rest
  CHECK(a.bytes_to_device() == static_cast<std::uint64_t>(n) * a.row_bytes());
  for (std::int64_t r = 0; r < n; ++r)
    for (int c = 0; c < 3; ++c) REQUIRE(a.device_view()(r, c) == values[static_cast<std::size_t>(3 * r + c)]);

  // The device writes some rows: only those go back to the host.
  const std::int64_t w0 = n / 3, w1 = n / 3 + n / 4;
  for (std::int64_t r = w0; r < w1; ++r) a.device_view()(r, 1) = -1.0 * static_cast<double>(r);
  a.modify_device(w0, w1);
  CHECK_FALSE(a.host_current());
  CHECK(a.host_current(0, w0));
  a.sync_host();
  CHECK(a.bytes_to_host() == static_cast<std::uint64_t>(w1 - w0) * a.row_bytes());
  for (std::int64_t r = 0; r < n; ++r)
    REQUIRE(a.host_view()(r, 1) ==
            (r >= w0 && r < w1 ? -1.0 * static_cast<double>(r) : values[static_cast<std::size_t>(3 * r + 1)]));
  a.reset_transfer_counters();
  CHECK(a.bytes_to_host() == 0);
  CHECK(a.bytes_to_device() == 0);
}

TEST_CASE("one allocation where the spaces share memory: nothing moves", "[exec][mirror]") {
  rows3 a("shared", 64);
  REQUIRE(a.shares_memory());
  CHECK(a.device_view().data() == a.host_view().data());
  a.modify_host();
  CHECK(a.device_current());
  a.sync_device();
  a.sync_host();
  CHECK(a.bytes_to_device() + a.bytes_to_host() == 0);
  hetero::mirrored_array<double**, device_space, host_space> copy =
      hetero::mirrored_array<double**, device_space, host_space>("m", 4, 5);
  CHECK(copy.extent(1) == 5);
  auto handle = copy;  // a handle: copies share data and bookkeeping
  CHECK(handle.device_view().data() == copy.device_view().data());
}

TEST_CASE("mirrored arrays refuse mismatched sizes and rows outside them, naming the values", "[exec][mirror]") {
  rows3 a(hetero::mirror_mode::separate, "pos", 10);
  std::vector<double> wrong(29);
  CHECK_THROWS_WITH(a.assign_host(wrong),
                    ContainsSubstring("'pos' holds 30 values") && ContainsSubstring("has 29"));
  CHECK_THROWS_AS(a.assign_host(wrong), hetero::invalid_argument);
  CHECK_THROWS_WITH(a.sync_device(4, 12), ContainsSubstring("rows [4, 12)") && ContainsSubstring("10 rows"));
  CHECK_THROWS_WITH(a.modify_host(-1, 3), ContainsSubstring("rows [-1, 3)"));
  // Only -1 means "to the last row": another negative end is outside the array.
  CHECK_THROWS_WITH(a.sync_host(0, -5), ContainsSubstring("rows [0, -5)"));
  CHECK_THROWS_WITH(a.modify_device(3, -2), ContainsSubstring("rows [3, -2)"));
  CHECK_THROWS_WITH(rows3("neg", -3), ContainsSubstring("extent is -3"));
}

#include <hetero/power/allocator.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <limits>
#include <random>
#include <vector>

#include "modelled_table.hpp"
#include "random.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::power::allocate;
using hetero::power::frequency_table;

namespace {

// Algorithm 1 written the plain way: scan for the largest predicted time every time (O(M N^2)).
std::vector<std::size_t> reference_steps(const std::vector<double>& c, const frequency_table& t, double budget) {
  const std::size_t n = c.size();
  std::vector<std::size_t> step(n, 0);
  std::vector<bool> queued(n, t.size() > 1);
  double used = static_cast<double>(n) * t.min_power();
  for (;;) {
    std::size_t best = n;
    double best_time = 0, best_f = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!queued[i]) continue;
      const double f = t.frequency(step[i]);
      const double time = c[i] * t.min_frequency() / f;
      if (best == n || time > best_time || (time == best_time && f < best_f)) {
        best = i;
        best_time = time;
        best_f = f;
      }
    }
    if (best == n) return step;
    const double with_next = used - t.power(step[best]) + t.power(step[best] + 1);
    if (with_next > budget * (1 + 1e-12)) {  // exact up to rounding, as the library
      queued[best] = false;
      continue;
    }
    used = with_next;
    if (++step[best] + 1 == t.size()) queued[best] = false;
  }
}

std::vector<double> frequencies(const hetero::power::allocation& a) {
  std::vector<double> f;
  for (const auto& s : a.settings) f.push_back(s.frequency_ghz);
  return f;
}

const frequency_table small({1.0, 2.0, 3.0}, {10.0, 20.0, 40.0});

}  // namespace

TEST_CASE("Algorithm 1: a budget exactly at the minimum keeps every CPU at f_min", "[power][allocator]") {
  const std::vector<double> c = {3.0, 1.0, 2.0};
  const auto a = allocate(c, small, 30.0);
  CHECK(frequencies(a) == std::vector<double>{1.0, 1.0, 1.0});
  for (const auto& s : a.settings) CHECK(s.power_watts == 10.0);
  CHECK(a.used_watts == 30.0);
  CHECK(a.leftover_watts() == 0.0);
  // The modelled table's minimum, computed as N * P(f_min), is accepted despite rounding.
  const auto modelled = hetero::testing::modelled_cpu_table();
  const std::vector<double> many(16, 1.0);
  const auto b = allocate(many, modelled, modelled.minimum_budget(16));
  for (const auto& s : b.settings) CHECK(s.step == 0);
}

TEST_CASE("Algorithm 1: a budget of N * P(f_max) takes every CPU to f_max despite rounding",
          "[power][allocator]") {
  const auto modelled = hetero::testing::modelled_cpu_table();  // powers that are not exact in binary
  for (std::size_t n : {1, 7, 16, 1000}) {
    std::vector<double> c(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = 1.0 + static_cast<double>(i % 5) / 3;
    const auto a = allocate(c, modelled, static_cast<double>(n) * modelled.max_power());
    for (const auto& s : a.settings) CHECK(s.step == modelled.size() - 1);
    const auto g =
        hetero::power::allocate_in_groups(c, modelled, static_cast<double>(n) * modelled.max_power(), 8);
    for (const auto& s : g.settings) CHECK(s.step == modelled.size() - 1);
  }
}

TEST_CASE("Algorithm 1: equal predicted times go to the lower frequency", "[power][allocator]") {
  // B (C = 4) is raised to 2 GHz first and then predicts 4 * 1 / 2 = 2 s, tying A (C = 2 at
  // 1 GHz). A goes first (lower frequency): A to 2 GHz (40 W used), then B's step to 3 GHz
  // (60 W) does not fit 50 W. Had B gone first, B would sit at 3 GHz and A at 1 GHz.
  const std::vector<double> c = {2.0, 4.0};
  const auto a = allocate(c, small, 50.0);
  CHECK(frequencies(a) == std::vector<double>{2.0, 2.0});
  CHECK(a.used_watts == 40.0);
  CHECK(a.settings[0].power_watts == 25.0);  // 20 W + half of the 10 W left
  CHECK(a.settings[1].power_watts == 25.0);

  // Equal times and equal frequencies: the lower CPU number goes first.
  const std::vector<double> same = {1.0, 1.0};
  CHECK(frequencies(allocate(same, small, 30.0)) == std::vector<double>{2.0, 1.0});
}

TEST_CASE("Algorithm 1: uneven steps use the table's next frequency and its real power", "[power][allocator]") {
  // A: 1.0 -> 1.2 GHz (21 W), predicts 3 / 1.2 = 2.5 s -> 2.0 GHz (40 W), predicts 1.5 s -> 2.1
  // GHz (41 W, f_max, leaves). B: 1.0 -> 1.2 GHz (42 W) -> 2.0 GHz would need 61 W: leaves.
  const frequency_table uneven({1.0, 1.2, 2.0, 2.1}, {10.0, 11.0, 30.0, 31.0});
  const std::vector<double> c = {3.0, 1.2};
  const auto a = allocate(c, uneven, 45.0);
  CHECK(a.settings[0].step == 3);
  CHECK(a.settings[1].step == 1);
  CHECK(a.used_watts == 42.0);
  CHECK(a.settings[0].power_watts == 32.5);
  CHECK(a.settings[1].power_watts == 12.5);
}

TEST_CASE("Algorithm 1: what is left is spread evenly and never lifts a step", "[power][allocator]") {
  // A: 1 -> 2 GHz (30 W); its step to 3 GHz needs 50 W > 45 W, so A leaves the queue; B still
  // takes its cheaper step to 2 GHz (40 W). 5 W are left: 2.5 W more for each.
  const std::vector<double> c = {4.0, 1.0};
  const auto a = allocate(c, small, 45.0);
  CHECK(frequencies(a) == std::vector<double>{2.0, 2.0});
  CHECK(a.leftover_watts() == 5.0);
  CHECK(a.settings[0].power_watts == 22.5);
  CHECK(a.settings[1].power_watts == 22.5);
  CHECK(a.granted_watts() == Catch::Approx(45.0));
}

TEST_CASE("Algorithm 1 matches a plain reference on random tables and criticalities", "[power][allocator]") {
  auto rng = hetero::testing::rng(7);
  std::uniform_int_distribution<std::size_t> steps_of(1, 12), cpus_of(1, 200);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int round = 0; round < 200; ++round) {
    std::vector<double> f = {0.5 + unit(rng)}, p = {5.0 + 50.0 * unit(rng)};
    const std::size_t m = steps_of(rng);
    for (std::size_t i = 1; i < m; ++i) {
      f.push_back(f.back() + 0.01 + unit(rng));                           // uneven steps
      p.push_back(p.back() + (round % 5 == 0 ? 0.0 : 20.0) * unit(rng));  // sometimes flat
    }
    const frequency_table table(f, p);
    std::vector<double> c(cpus_of(rng));
    for (auto& x : c) x = round % 3 == 0 ? std::floor(4 * unit(rng)) : 10 * unit(rng);  // ties when integers
    const double minimum = table.minimum_budget(c.size());
    const double budget =
        minimum + unit(rng) * (static_cast<double>(c.size()) * (table.max_power() - table.min_power()) + 1.0);
    const auto a = allocate(c, table, budget);
    const auto expected = reference_steps(c, table, budget);
    REQUIRE(a.size() == c.size());
    double used = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      CHECK(a.settings[i].step == expected[i]);
      CHECK(a.settings[i].frequency_ghz == table.frequency(expected[i]));
      used += table.power(expected[i]);
    }
    CHECK(a.used_watts == Catch::Approx(used));
    // The seed's queue, one table per device (used for a node's GPU and CPU), agrees too.
    std::vector<std::size_t> queued;
    hetero::power::detail::greedy_steps(
        c, [one = &table](std::size_t) -> const frequency_table& { return *one; }, budget, queued);
    CHECK(queued == expected);
    CHECK(a.used_watts <= budget * (1 + 1e-12));
    const double share = (budget - used) / static_cast<double>(c.size());
    for (std::size_t i = 0; i < c.size(); ++i)
      CHECK(a.settings[i].power_watts == Catch::Approx(table.power(expected[i]) + share));
  }
}

TEST_CASE("even and grouped allocations", "[power][allocator]") {
  const auto table = hetero::testing::modelled_cpu_table();
  const double budget = 4 * table.power(4) + 1.0;  // 1.6 GHz each, 1 W spare
  const auto even = hetero::power::allocate_evenly(4, table, budget);
  for (const auto& s : even.settings) {
    CHECK(s.frequency_ghz == Catch::Approx(1.6));
    CHECK(s.power_watts == Catch::Approx(table.power(4) + 0.25));
  }
  auto rng = hetero::testing::rng(8);
  std::uniform_real_distribution<double> unit(0.5, 2.0);
  std::vector<double> c(19);
  for (auto& x : c) x = unit(rng);
  const double total = 19 * table.power(5);
  const auto grouped = hetero::power::allocate_in_groups(c, table, total, 8);
  REQUIRE(grouped.size() == 19);
  for (std::size_t first = 0; first < 19; first += 8) {
    const std::size_t count = std::min<std::size_t>(8, 19 - first);
    const auto alone =
        allocate(std::span<const double>(c).subspan(first, count), table, total * static_cast<double>(count) / 19);
    for (std::size_t i = 0; i < count; ++i) CHECK(grouped.settings[first + i].step == alone.settings[i].step);
  }
  CHECK(grouped.used_watts <= total);
  const auto one_group = hetero::power::allocate_in_groups(c, table, total, 0);
  CHECK(frequencies(one_group) == frequencies(allocate(c, table, total)));
}

TEST_CASE("Algorithm 1 refuses bad input with what was wrong", "[power][allocator]") {
  const std::vector<double> c = {1.0, 2.0, 3.0};
  CHECK_THROWS_WITH(allocate(c, small, 29.5), ContainsSubstring("29.5 W is below the minimum for 3 device(s)") &&
                                                  ContainsSubstring("3 * 10 W = 30 W"));
  const std::vector<double> negative = {1.0, -1.0};
  CHECK_THROWS_WITH(allocate(negative, small, 100.0), ContainsSubstring("criticality of device 1 is -1"));
  const std::vector<double> nan = {std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_AS(allocate(nan, small, 100.0), hetero::invalid_argument);
  CHECK_THROWS_WITH(allocate(std::vector<double>{}, small, 100.0), ContainsSubstring("no CPUs"));
}

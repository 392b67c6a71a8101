// Work sharing on a CPU-only node: OpenMP stands in for the device and Serial is the host, both
// on the rank's cores. In a split the device part runs on the cores the host part leaves (its
// kernels see P - 1 threads of the rank's P), alone on all P; with one core per rank the tuner
// does not split, and says why. Every element is checked.
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_for.hpp>
#include <hetero/exec/split_stats.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include "random.hpp"

#if !HETERO_HAS_DEVICE() && HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
#include <omp.h>

using Catch::Matchers::ContainsSubstring;

namespace {

using spaces = hetero::split_spaces;
using policy = hetero::split_policy<spaces::device, spaces::host>;
static_assert(std::is_same_v<spaces::device, Kokkos::OpenMP> && std::is_same_v<spaces::host, Kokkos::Serial>);

// Writes, for each index, the size of the OpenMP team that ran it (1 outside any region).
struct record_team {
  Kokkos::View<int*, Kokkos::HostSpace> team;
  void operator()(std::int64_t i) const { team(i) = omp_in_parallel() ? omp_get_num_threads() : 1; }
};

int pool() { return static_cast<int>(Kokkos::OpenMP().concurrency()); }

}  // namespace

TEST_CASE("in a split the device part keeps the cores the host part leaves; alone it has all", "[exec][cores]") {
  const int p = pool();
  auto gen = hetero::testing::rng(5);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1000, 20000)(gen);
  const double w = std::uniform_real_distribution<double>(0.1, 0.9)(gen);
  Kokkos::View<int*, Kokkos::HostSpace> team("team", n);
  hetero::parallel_for("cores split", policy(0, n).weight(w), record_team{team});
  const auto host_items = static_cast<std::int64_t>(std::llround(w * static_cast<double>(n)));
  // One core per rank: a forced weight is obeyed, and the device part keeps its whole pool.
  const int device_team = p > 1 ? p - 1 : 1;
  for (std::int64_t i = 0; i < n; ++i) {
    INFO("index " << i << " of " << n << ", weight " << w << ", pool " << p);
    REQUIRE(team(i) == (i < n - host_items ? device_team : 1));
  }

  Kokkos::deep_copy(team, 0);
  hetero::parallel_for("cores alone", policy(0, n).weight(0.0), record_team{team});
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(team(i) == p);

  // The chunk form: the device chunk's space launches on P - 1 threads too.
  Kokkos::deep_copy(team, 0);
  hetero::split_for(
      "cores chunks", policy(0, n).weight(w), [&](const auto& space, std::int64_t b, std::int64_t e) {
        using space_t = std::remove_cvref_t<decltype(space)>;
        Kokkos::parallel_for(Kokkos::RangePolicy<space_t, Kokkos::IndexType<std::int64_t>>(space, b, e),
                             record_team{team});
      });
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(team(i) == (i < n - host_items ? device_team : 1));
}

TEST_CASE("the tuner measures the device alone on all cores, or does not split on one core", "[exec][cores]") {
  const int p = pool();
  const std::int64_t n = 50000;
  Kokkos::View<double*, Kokkos::HostSpace> x("x", n);
  auto body = [=](std::int64_t i) { x(i) += 1.0; };
  hetero::reset_weight("cores tuned", 0.3);
  hetero::parallel_for("cores tuned", policy(0, n), body);
  auto stats = hetero::split_statistics("cores tuned");
  if (p > 1) {
    CHECK(stats.last_weight == 0.3);
    // Both sides measured in the split; the next run measures the device alone on all cores.
    CHECK(stats.weight == 0.0);
    CHECK_THAT(stats.decision, ContainsSubstring("all of the rank's cores"));
    hetero::parallel_for("cores tuned", policy(0, n), body);
    stats = hetero::split_statistics("cores tuned");
    CHECK(stats.host_items == 0);
    CHECK(stats.device_items == n);
    CHECK_FALSE(stats.decision.empty());
  } else {
    // The user's weight is obeyed for the run it was set for (both sides share the one core);
    // after it, nothing is left for the device beside the host part's core: no split, and it
    // says why.
    CHECK(stats.last_weight == 0.3);
    CHECK(stats.host_items > 0);
    hetero::parallel_for("cores tuned", policy(0, n), body);
    stats = hetero::split_statistics("cores tuned");
    CHECK(stats.last_weight == 0.0);
    CHECK(stats.host_items == 0);
    CHECK(stats.weight == 0.0);
    CHECK_THAT(stats.decision, ContainsSubstring("not split"));
  }
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(x(i) == 2.0);
}

// Before, with the manual tuner every run used weight 0 where the host part took all of the
// rank's cores, and the stored weight was overwritten with 0.
TEST_CASE("a manual weight is obeyed on a CPU-only node and never overwritten", "[exec][cores]") {
  hetero::work_sharing sharing(hetero::split_config{.host_cores = 1});  // nothing left beside the host part
  auto gen = hetero::testing::rng(6);
  const double w = std::uniform_real_distribution<double>(0.55, 0.85)(gen);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(5000, 40000)(gen);
  Kokkos::View<double*, Kokkos::HostSpace> x("x", n);
  sharing.set_tuner("manual cores", hetero::tuner_kind::manual);
  sharing.reset_weight("manual cores", w);
  for (int run = 1; run <= 3; ++run) {
    hetero::parallel_for(sharing, "manual cores", policy(0, n), [=](std::int64_t i) { x(i) += 1.0; });
    const auto stats = sharing.statistics("manual cores");
    INFO("run " << run << ", weight " << w);
    CHECK(stats.last_weight == w);
    CHECK(stats.host_items == static_cast<std::int64_t>(std::llround(w * static_cast<double>(n))));
    CHECK(sharing.cpu_weight("manual cores") == w);
  }
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(x(i) == 3.0);
}

// Before, the run that used reset_weight's weight marked it used before running: when that run
// threw, the next one took the weight for the tuner's, found no core beside the host part, ran
// unsplit and overwrote the user's weight with 0. And a run whose policy carried its own weight
// left the mark on the tuner's next weight, which the run after then obeyed as the user's.
TEST_CASE("a reset weight holds until a run is recorded: not used up by a run that threw", "[exec][cores]") {
  hetero::work_sharing sharing(hetero::split_config{.host_cores = 1});  // nothing left beside the host part
  auto gen = hetero::testing::rng(7);
  const double w = std::uniform_real_distribution<double>(0.3, 0.7)(gen);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(5000, 40000)(gen);
  Kokkos::View<double*, Kokkos::HostSpace> x("x", n);
  sharing.reset_weight("throws first", w);
  CHECK_THROWS_WITH(hetero::parallel_for(sharing, "throws first", policy(0, n),
                                         [=](std::int64_t i) {
                                           if (i == n - 1) throw std::runtime_error("the last element failed");
                                           x(i) += 1.0;
                                         }),
                    ContainsSubstring("the last element failed"));
  CHECK(sharing.cpu_weight("throws first") == w);
  hetero::parallel_for(sharing, "throws first", policy(0, n), [=](std::int64_t i) { x(i) += 1.0; });
  const auto stats = sharing.statistics("throws first");
  CHECK(stats.last_weight == w);  // before: 0
  CHECK(stats.host_items == static_cast<std::int64_t>(std::llround(w * static_cast<double>(n))));
  CHECK_THAT(stats.decision, !ContainsSubstring("not split"));

  // A run with its own weight is recorded: reset_weight's mark is gone, and the next plain run
  // is the tuner's, which does not split here.
  sharing.reset_weight("own weight", w);
  hetero::parallel_for(sharing, "own weight", policy(0, n).weight(0.6), [=](std::int64_t i) { x(i) += 1.0; });
  hetero::parallel_for(sharing, "own weight", policy(0, n), [=](std::int64_t i) { x(i) += 1.0; });
  CHECK_THAT(sharing.statistics("own weight").decision, ContainsSubstring("not split"));
}

// Before, the device side's threads were its OpenMP pool less the host part's cores: a rank of 2
// cores whose pool has 1 thread (one for the device side, one core left for the host part)
// never split. Now the rank's cores decide.
TEST_CASE("a rank with a core beside its OpenMP pool splits onto it", "[exec][cores]") {
  const int p = pool();
  hetero::work_sharing sharing(hetero::split_config{.host_cores = p + 1});  // one core more than the pool
  const std::int64_t n = 30000;
  Kokkos::View<int*, Kokkos::HostSpace> team("team", n);
  sharing.reset_weight("beside the pool", 0.25);
  hetero::parallel_for(sharing, "beside the pool", policy(0, n), record_team{team});
  auto stats = sharing.statistics("beside the pool");
  CHECK(stats.host_items == n / 4);
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(team(i) == (i < n - n / 4 ? p : 1));  // the whole pool, untouched
  // The tuner goes on splitting: no run falls back to "not split".
  for (int run = 0; run < 4; ++run) {
    hetero::parallel_for(sharing, "beside the pool", policy(0, n), record_team{team});
    stats = sharing.statistics("beside the pool");
    CHECK_THAT(stats.decision, !ContainsSubstring("not split"));
  }
}

#else
TEST_CASE("disjoint cores are a CPU-only OpenMP + Serial matter", "[exec][cores]") {
  SKIP("this build has a device or lacks OpenMP/Serial: the device side does not share the host's cores");
}
#endif

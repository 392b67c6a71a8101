// Work sharing on a CPU-only node: OpenMP stands in for the device and Serial is the host, both
// on the rank's cores. In a split the device part runs on the cores the host part leaves (its
// kernels see P - 1 threads of the rank's P), alone on all P; with one core per rank the tuner
// does not split, and says why. Every element is checked.
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_for.hpp>
#include <hetero/exec/split_stats.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <random>
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
    // Nothing is left for the device beside the host part's core: no split, and it says why.
    CHECK(stats.last_weight == 0.0);
    CHECK(stats.host_items == 0);
    CHECK(stats.weight == 0.0);
    CHECK_THAT(stats.decision, ContainsSubstring("not split"));
  }
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(x(i) == (p > 1 ? 2.0 : 1.0));
}

#else
TEST_CASE("disjoint cores are a CPU-only OpenMP + Serial matter", "[exec][cores]") {
  SKIP("this build has a device or lacks OpenMP/Serial: the device side does not share the host's cores");
}
#endif

// Owner-computes loops: every owned index of a random box visited exactly once with its
// global index, on every host execution space and through a user executor; reductions.
#include <hetero/config.hpp>
#include <hetero/distarray/distributed_array.hpp>
#include <hetero/distarray/loop.hpp>
#include <hetero/distarray/split_executor.hpp>
#include <hetero/exec/split_stats.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <atomic>
#include <tuple>
#include <utility>

#include "distarray_support.hpp"
#include "exec_spaces.hpp"

using Catch::Matchers::ContainsSubstring;

// Not in the unnamed namespace: nvcc warns of its for_each instantiated only by the concept check.
namespace loop_test {

// A user executor: runs the owned box serially on the calling thread and counts its calls
// (what a GPU/CPU work-sharing executor would split between its two sides).
struct counting_executor {
  using device_space = Kokkos::DefaultHostExecutionSpace;  // runs on the host: plain bodies are fine
  std::atomic<int>* calls;
  template <int Rank, class F>
  void for_each(const std::string&, const hetero::index_box<Rank>& box, const F& f) const {
    ++*calls;
    std::array<std::int64_t, Rank> l = box.begin;
    if (box.empty()) return;
    while (true) {
      if constexpr (Rank == 1) f(l[0]);
      if constexpr (Rank == 2) f(l[0], l[1]);
      if constexpr (Rank == 3) f(l[0], l[1], l[2]);
      int d = Rank - 1;
      for (; d >= 0; --d) {
        if (++l[d] < box.end[d]) break;
        l[d] = box.begin[d];
      }
      if (d < 0) break;
    }
  }
};
}  // namespace loop_test

namespace {

using loop_test::counting_executor;
static_assert(hetero::owned_loop_executor<counting_executor, 2>);
static_assert(!hetero::owned_loop_executor<int, 2>);

// Adds x at the global indices (all arguments but the last) to the accumulator (the last).
template <class X, class... A>
void reduce_into(const X& x, A&&... args) {
  auto tuple = std::forward_as_tuple(args...);
  constexpr std::size_t n = sizeof...(A);
  auto& acc = std::get<n - 1>(tuple);
  [&]<std::size_t... I>(std::index_sequence<I...>) { acc += x(std::get<I>(tuple)...); }
  (std::make_index_sequence<n - 1>());
}

// The loop bodies of check_loops (host executors only), as functors generic in the rank.
template <int R, class V, class X>
struct visit_body {
  V v;
  X x;
  template <class... G>
  void operator()(G... g) const {
    Kokkos::atomic_add(&v(g...), 1);
    x(g...) = dist_test::value_at<double>(std::array<std::int64_t, R>{g...}, 3);
  }
};

template <class X>
struct sum_body {
  X x;
  template <class... A>
  void operator()(A&&... args) const {
    reduce_into(x, args...);
  }
};

template <class E>
constexpr bool is_split_executor = false;
template <class D, class H>
constexpr bool is_split_executor<hetero::split_executor<D, H>> = true;

template <int R, class Exec>
void check_loops(const Exec& exec, std::uint64_t stream) {
  auto rng = hetero::testing::rng(stream);
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int trial = 0; trial < 6; ++trial) {
    const auto shape = dist_test::random_grid<R>(rng, p);
    std::array<std::int64_t, R> extents{};
    std::array<hetero::distribution, R> formats{};
    hetero::index_box<R> box;
    for (int d = 0; d < R; ++d) {
      extents[d] = dist_test::uniform(rng, 1, R == 1 ? 50 : 9);
      formats[d] = dist_test::random_distribution(rng, extents[d], shape[d]);
      box.begin[d] = dist_test::uniform(rng, 0, extents[d]);
      box.end[d] = dist_test::uniform(rng, box.begin[d], extents[d]);
    }
    hetero::index_space<R> space(extents, dist_test::grid_of<R>(shape), formats);
    hetero::distributed_array<int, R, Kokkos::HostSpace> visits(space);
    hetero::distributed_array<double, R, Kokkos::HostSpace> values(space);
    auto v = visits.global_view();
    auto x = values.global_view();
    hetero::for_each_owned(exec, "visit", space, box, visit_body<R, decltype(v), decltype(x)>{v, x});
    double expected_sum = 0;
    dist_test::mismatches wrong;
    dist_test::for_each_owned_element(visits, [&](const auto& g, int count) {
      bool inside = true;
      for (int d = 0; d < R; ++d) inside = inside && g[d] >= box.begin[d] && g[d] < box.end[d];
      wrong.expect(count == (inside ? 1 : 0), "index ", hetero::detail::format_array(g), " visited ", count,
                   " times");
      if (inside) expected_sum += dist_test::value_at<double>(g, 3);
    });
    dist_test::for_each_owned_element(values, [&](const auto& g, double value) {
      wrong.expect(value == 0 || value == dist_test::value_at<double>(g, 3), "body got the wrong global index at ",
                   hetero::detail::format_array(g));
    });
    DIST_CHECK_NO_MISMATCH(wrong);
    if constexpr (Kokkos::is_execution_space<Exec>::value || is_split_executor<Exec>) {
      double sum = -1;
      hetero::reduce_owned(exec, "sum", space, box, sum_body<decltype(x)>{x}, sum);
      CHECK(sum == Catch::Approx(expected_sum));
    }
  }
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("owner loops visit each owned index of the box once", "[dist][loop]",
                        dist_test::host_exec_spaces) {
  check_loops<1>(TestType(), 31);
  check_loops<2>(TestType(), 32);
  check_loops<3>(TestType(), 33);
}

TEST_CASE("owner loops run on a user executor", "[dist][loop]") {
  std::atomic<int> calls{0};
  counting_executor exec{&calls};
  check_loops<2>(exec, 34);
  CHECK(calls == 6);
}

TEST_CASE("owner loops split between a device and the host (exec's parallel_for)", "[dist][loop][exec]") {
#if HETERO_HAS_OPENMP()
  static_assert(hetero::owned_loop_executor<hetero::split_executor<Kokkos::OpenMP, Kokkos::Serial>, 3>);
  const hetero::split_executor<Kokkos::OpenMP, Kokkos::Serial> split;
  // Host weights 0 (device only), 1 (host only) and a real split; the tuner moves the weight
  // between trials, so later trials run other splits too.
  for (const double w : {0.0, 1.0, 0.37}) {
    INFO("starting CPU weight " << w);
    hetero::reset_weight("visit", w);
    hetero::reset_weight("sum", w);
    check_loops<1>(split, 35);
    check_loops<2>(split, 36);
    check_loops<3>(split, 37);
  }
  double largest = -1;
  auto space = hetero::block_space(1000);
  hetero::reduce_owned(
      split, "split max", space, space.box(),
      KOKKOS_LAMBDA(std::int64_t i, double& m) { m = i > m ? double(i) : m; }, Kokkos::Max<double>(largest));
  const auto [begin, end] = space.axis(0).block_range(space.grid().rank());
  CHECK(largest == static_cast<double>(end - 1));
  CHECK(hetero::split_statistics("split max").runs == 1);
#else
  SKIP("needs Kokkos::OpenMP to emulate a device beside Kokkos::Serial");
#endif
}

TEST_CASE("a split executor on a work_sharing handle of its own keeps its loops there", "[dist][loop][exec]") {
#if HETERO_HAS_OPENMP()
  const hetero::work_sharing solver;
  const hetero::split_executor<Kokkos::OpenMP, Kokkos::Serial> split(solver);
  solver.reset_weight("own visit", 0.5);
  auto space = hetero::block_space(300);
  hetero::distributed_array<int, 1, Kokkos::HostSpace> visits(space);
  auto v = visits.global_view();
  for (int run = 0; run < 3; ++run)
    hetero::for_each_owned(
        split, "own visit", space, space.box(), KOKKOS_LAMBDA(std::int64_t i) { v(i) += 1; });
  const auto [begin, end] = space.axis(0).block_range(space.grid().rank());
  for (std::int64_t i = begin; i < end; ++i) REQUIRE(v(i) == 3);
  CHECK(solver.statistics("own visit").runs == 3);
  CHECK(solver.statistics("own visit").device_items + solver.statistics("own visit").host_items == end - begin);
  const auto defaults = hetero::default_work_sharing().labels();
  CHECK(std::find(defaults.begin(), defaults.end(), "own visit") == defaults.end());  // not on the default handle
#else
  SKIP("needs Kokkos::OpenMP to emulate a device beside Kokkos::Serial");
#endif
}

TEST_CASE("max reduction and the default execution space", "[dist][loop]") {
  auto space = hetero::block_space(100);
  double largest = -1;
  hetero::reduce_owned(
      "max", space, space.box(), KOKKOS_LAMBDA(std::int64_t i, double& m) { m = i > m ? double(i) : m; },
      Kokkos::Max<double>(largest));
  const auto [begin, end] = space.axis(0).block_range(space.grid().rank());
  CHECK(largest == static_cast<double>(end - 1));
  std::atomic<std::int64_t> seen{0};
  hetero::for_each_owned(Kokkos::DefaultHostExecutionSpace(), "count", space, space.box(),
                         [&](std::int64_t) { ++seen; });
  CHECK(seen == end - begin);
}

TEST_CASE("owner loop ranges outside the index space are refused", "[dist][loop]") {
  auto space = hetero::block_space(10);
  CHECK_THROWS_AS(hetero::for_each_owned("bad", space, {{0}, {11}}, KOKKOS_LAMBDA(std::int64_t){}),
                  hetero::invalid_argument);
  CHECK_THROWS_WITH(hetero::for_each_owned("bad", space, {{3}, {11}}, KOKKOS_LAMBDA(std::int64_t){}),
                    ContainsSubstring("owner loop range [3, 11) on axis 0 is outside the index space [0, 10)"));
  CHECK_THROWS_WITH(hetero::for_each_owned("bad", space, {{4}, {2}}, KOKKOS_LAMBDA(std::int64_t){}),
                    ContainsSubstring("[4, 2)"));
}

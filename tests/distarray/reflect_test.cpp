// reflect: every shadow element of random 1-D, 2-D and 3-D arrays checked after blocking and
// asynchronous reflects, periodic or not, with and without corners, staged or not; waits
// reported to the observer; the error for a second reflect in flight.
#include <hetero/distarray/reflect.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "distarray_support.hpp"
#include "reflect_check.hpp"

using Catch::Matchers::ContainsSubstring;
using dist_test::particle;

namespace {

using dist_test::world_size;

template <class T, int R>
void check_random_reflects(std::uint64_t stream, int trials) {
  auto rng = hetero::testing::rng(stream);
  const int p = world_size();
  for (int trial = 0; trial < trials; ++trial) {
    const auto shape = dist_test::random_grid<R>(rng, p);
    std::array<std::int64_t, R> extents{};
    std::array<hetero::distribution, R> formats{};
    hetero::shadow_width<R> shadow;
    hetero::reflect_options<R> options;
    for (int d = 0; d < R; ++d) {
      extents[d] = dist_test::uniform(rng, 2 * shape[d], 2 * shape[d] + (R == 1 ? 20 : 6));
      formats[d] = dist_test::random_distribution(rng, extents[d], shape[d], true, 2);
      shadow.lower[d] = dist_test::uniform(rng, 0, 2);
      shadow.upper[d] = dist_test::uniform(rng, 0, 2);
      options.periodic[d] = dist_test::uniform(rng, 0, 1) == 1;
    }
    options.corners = dist_test::uniform(rng, 0, 1) == 1;
    const auto mode =
        dist_test::uniform(rng, 0, 1) ? hetero::device_buffer_path::staged : hetero::device_buffer_path::automatic;
    const int how = static_cast<int>(dist_test::uniform(rng, 0, 2));
    INFO("trial " << trial << ": grid " << hetero::detail::format_array(shape) << ", extents "
                  << hetero::detail::format_array(extents) << ", corners " << options.corners << ", staging "
                  << hetero::to_string(mode) << ", form " << how);
    hetero::index_space<R> space(extents, dist_test::grid_of<R>(shape), formats);
    hetero::distributed_array<T, R, Kokkos::HostSpace> a(space, {.shadow = shadow, .device_path = mode});
    const T sentinel = dist_test::value_at<T>(std::array<std::int64_t, 1>{-1}, 99);
    Kokkos::deep_copy(a.local_with_shadow(), sentinel);
    dist_test::fill(a, 17);
    if (how == 0) {
      hetero::reflect(a, options);
    } else if (how == 1) {
      auto handle = hetero::reflect_async(a, options);
      handle.wait();
      CHECK(handle.done());
    } else {
      auto handle = hetero::reflect_async(a, options);
      while (!handle.test()) {
      }
      handle.wait();
    }
    dist_test::check_reflected(a, options, 17, sentinel);
    // The second reflect reuses the plan kept with the array.
    const auto builds = hetero::detail::plan_builds().load();
    dist_test::fill(a, 18);
    hetero::reflect(a, options);
    CHECK(hetero::detail::plan_builds().load() == builds);
    dist_test::check_reflected(a, options, 18, sentinel);
  }
}

struct recording_observer : hetero::observer {
  std::mutex mutex;
  std::vector<std::string> waits;
  void wait_begin(hetero::wait_kind kind, std::string_view label) noexcept override {
    std::lock_guard lock(mutex);
    if (kind == hetero::wait_kind::halo) waits.emplace_back(label);
  }
  void wait_end(hetero::wait_kind, std::string_view) noexcept override {}
};

}  // namespace

TEST_CASE("reflect refreshes every shadow element of random arrays", "[dist][reflect]") {
  check_random_reflects<double, 1>(41, 12);
  check_random_reflects<double, 2>(42, 12);
  check_random_reflects<double, 3>(43, 8);
}

TEST_CASE("reflect moves integers and structs", "[dist][reflect]") {
  check_random_reflects<int, 2>(44, 4);
  check_random_reflects<particle, 2>(45, 4);
  check_random_reflects<particle, 1>(46, 4);
}

TEST_CASE("reflect reports its waits as halo waits", "[dist][reflect]") {
  const int p = world_size();
  hetero::process_grid<1> grid;
  hetero::distributed_array<double, 1, Kokkos::HostSpace> a(hetero::index_space<1>({4 * p}, grid),
                                                            {.shadow = hetero::shadow_width<1>::uniform(1)});
  recording_observer observer;
  auto* previous = hetero::set_observer(&observer);
  hetero::reflect(a, {.periodic = {true}});
  hetero::set_observer(previous);
  if (p > 1) {
    CHECK(observer.waits == std::vector<std::string>{"reflect"});
  } else {
    CHECK(observer.waits.empty());  // one rank: periodic shadows are copied locally
  }
}

TEST_CASE("a second reflect of an array in flight is refused", "[dist][reflect]") {
  const int p = world_size();
  hetero::distributed_array<double, 1, Kokkos::HostSpace> a(
      hetero::index_space<1>({4 * p}, hetero::process_grid<1>()),
      {.shadow = hetero::shadow_width<1>::uniform(1), .label = "u"});
  auto first = hetero::reflect_async(a);
  CHECK_THROWS_AS(hetero::reflect_async(a), hetero::runtime_error);
  CHECK_THROWS_WITH(hetero::reflect_async(a),
                    ContainsSubstring("reflect: a reflect of array 'u' is still in flight"));
  first.wait();
  CHECK_NOTHROW(hetero::reflect(a));
  {
    auto abandoned = hetero::reflect_async(a);  // its destructor completes it
  }
  CHECK_NOTHROW(hetero::reflect(a));
}

// One-sided gmove (get from / put to the owners) on random distributed arrays with RMA
// windows, staged or not, every element checked; the errors.
#include <hetero/distarray/one_sided.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "distarray_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using dist_test::for_each_index;
using dist_test::world_size;

template <int R>
using host_view =
    Kokkos::View<typename hetero::detail::view_data<double, R>::type, Kokkos::LayoutRight, Kokkos::HostSpace>;

template <int R>
double& at(const host_view<R>& v, const std::array<std::int64_t, R>& g) {
  if constexpr (R == 1) return v(g[0]);
  if constexpr (R == 2) return v(g[0], g[1]);
  if constexpr (R == 3) return v(g[0], g[1], g[2]);
}

template <int R>
host_view<R> make_view(const std::array<std::int64_t, R>& e) {
  if constexpr (R == 1) return host_view<R>("local", e[0]);
  if constexpr (R == 2) return host_view<R>("local", e[0], e[1]);
  if constexpr (R == 3) return host_view<R>("local", e[0], e[1], e[2]);
}

// Where position g of `local_section` maps in `array_section` (or nothing: false).
template <int R>
bool maps_to(const hetero::section_spec<R>& local_section, const hetero::section_spec<R>& array_section,
             const std::array<std::int64_t, R>& g, std::array<std::int64_t, R>& out) {
  for (int d = 0; d < R; ++d) {
    const auto& s = local_section[d];
    if (g[d] < s.begin || g[d] >= s.end || (g[d] - s.begin) % s.step != 0) return false;
    out[d] = array_section[d].begin + (g[d] - s.begin) / s.step * array_section[d].step;
  }
  return true;
}

template <int R>
void random_one_sided(std::uint64_t stream, int trials) {
  auto rng = hetero::testing::rng(stream);
  const int p = world_size();
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  for (int trial = 0; trial < trials; ++trial) {
    const auto shape = dist_test::random_grid<R>(rng, p);
    std::array<std::int64_t, R> extents{}, local_extents{};
    std::array<hetero::distribution, R> formats{};
    hetero::section_spec<R> array_section{}, local_section{};
    for (int d = 0; d < R; ++d) {
      const std::int64_t count = dist_test::uniform(rng, 1, R == 1 ? 25 : 5);
      const std::int64_t step = dist_test::uniform(rng, 1, 3), begin = dist_test::uniform(rng, 0, 3);
      array_section[d] = {begin, begin + (count - 1) * step + 1, step};
      extents[d] = array_section[d].end + dist_test::uniform(rng, 0, 3);
      const std::int64_t local_step = dist_test::uniform(rng, 1, 2), local_begin = dist_test::uniform(rng, 0, 2);
      local_section[d] = {local_begin, local_begin + (count - 1) * local_step + 1, local_step};
      local_extents[d] = local_section[d].end + dist_test::uniform(rng, 0, 2);
      formats[d] = dist_test::random_distribution(rng, extents[d], shape[d]);
    }
    const auto mode =
        dist_test::uniform(rng, 0, 1) ? hetero::device_buffer_path::staged : hetero::device_buffer_path::automatic;
    const int putter = static_cast<int>(dist_test::uniform(rng, 0, p - 1));
    INFO("trial " << trial << ", staging " << hetero::to_string(mode) << ", putter " << putter);
    hetero::index_space<R> space(extents, dist_test::grid_of<R>(shape), formats);
    hetero::distributed_array<double, R, Kokkos::HostSpace> a(space, {.device_path = mode, .one_sided = true});
    CHECK(a.one_sided());
    dist_test::fill(a, 61);
    a.sync_all();

    // Every rank gets the section into its own local array.
    auto local = make_view<R>(local_extents);
    for_each_index<R>(local_extents, [&](const auto& g) { at<R>(local, g) = -1.0; });
    hetero::gmove_get(hetero::section(local, local_section), a.section(array_section));
    dist_test::mismatches wrong;
    std::array<std::int64_t, R> from{};
    for_each_index<R>(local_extents, [&](const auto& g) {
      const double expected =
          maps_to<R>(local_section, array_section, g, from) ? dist_test::value_at<double>(from, 61) : -1.0;
      wrong.expect(at<R>(local, g) == expected, "got element ", hetero::detail::format_array(g));
    });

    a.sync_all();  // every get is done before the section is overwritten

    // One rank puts its own values into the section; the owners see them after sync_all.
    for_each_index<R>(local_extents, [&](const auto& g) { at<R>(local, g) = dist_test::value_at<double>(g, 62); });
    if (me == putter) hetero::gmove_put(a.section(array_section), hetero::section(local, local_section));
    a.sync_all();
    dist_test::for_each_owned_element(a, [&](const auto& g, double v) {
      std::array<std::int64_t, R> local_index{};
      bool inside = true;
      for (int d = 0; d < R; ++d) {
        const auto& s = array_section[d];
        inside = inside && g[d] >= s.begin && g[d] < s.end && (g[d] - s.begin) % s.step == 0;
        if (inside) local_index[d] = local_section[d].begin + (g[d] - s.begin) / s.step * local_section[d].step;
      }
      const double expected =
          inside ? dist_test::value_at<double>(local_index, 62) : dist_test::value_at<double>(g, 61);
      wrong.expect(v == expected, "put element ", hetero::detail::format_array(g));
    });
    DIST_CHECK_NO_MISMATCH(wrong);
  }
}

}  // namespace

TEST_CASE("one-sided gmove gets and puts random sections of random arrays", "[dist][one_sided]") {
  random_one_sided<1>(71, 10);
  random_one_sided<2>(72, 10);
  random_one_sided<3>(73, 6);
}

TEST_CASE("one-sided gmove needs a window and equal shapes", "[dist][one_sided]") {
  const int p = world_size();
  hetero::distributed_array<double, 1, Kokkos::HostSpace> plain(hetero::block_space(4 * p),
                                                                {.label = "no window"});
  Kokkos::View<double*, Kokkos::HostSpace> b("b", 4);
  using hetero::slice;
  CHECK_THROWS_WITH(hetero::gmove_get(b, plain.section({slice{0, 4}})),
                    ContainsSubstring("gmove_get: array 'no window' has no RMA window; create it with "
                                      "array_options::one_sided = true"));
  hetero::distributed_array<double, 1, Kokkos::HostSpace> a(hetero::block_space(4 * p), {.one_sided = true});
  CHECK_THROWS_WITH(
      hetero::gmove_put(a.section({slice{0, 3}}), b),
      ContainsSubstring("gmove_put: the local section has shape [4] but the array section has shape [3]"));
  CHECK_THROWS_WITH(hetero::gmove_get(b, a.section({slice{0, 4 * p + 1}})),
                    ContainsSubstring("gmove_get source: section [0, " + std::to_string(4 * p + 1) + ")"));
  a.sync_all();
  plain.sync_all();  // a barrier without a window
}

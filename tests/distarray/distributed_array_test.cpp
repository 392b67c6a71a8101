// Distributed arrays: blocks and shadows of random 1-D, 2-D and 3-D arrays of arithmetic
// types and a struct, the local views and global-index access; the errors.
#include <hetero/distarray/distributed_array.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "distarray_support.hpp"

using Catch::Matchers::ContainsSubstring;
using dist_test::particle;

namespace {

using dist_test::world_size;

template <class T, int R>
void check_random_arrays(std::uint64_t stream) {
  auto rng = hetero::testing::rng(stream);
  const int p = world_size();
  for (int trial = 0; trial < 8; ++trial) {
    const auto shape = dist_test::random_grid<R>(rng, p);
    std::array<std::int64_t, R> extents{};
    std::array<hetero::distribution, R> formats{};
    hetero::shadow_width<R> shadow;
    for (int d = 0; d < R; ++d) {
      extents[d] = dist_test::uniform(rng, 2 * shape[d], 2 * shape[d] + 9);
      const bool halo = dist_test::uniform(rng, 0, 1) == 1;
      formats[d] = dist_test::random_distribution(rng, extents[d], shape[d], halo, 2);
      if (halo) {
        shadow.lower[d] = dist_test::uniform(rng, 0, 2);
        shadow.upper[d] = dist_test::uniform(rng, 0, 2);
      }
    }
    hetero::index_space<R> space(extents, dist_test::grid_of<R>(shape), formats);
    const auto mode =
        dist_test::uniform(rng, 0, 1) ? hetero::device_buffer_path::staged : hetero::device_buffer_path::automatic;
    hetero::distributed_array<T, R, Kokkos::HostSpace> a(space,
                                                         {.shadow = shadow, .device_path = mode, .label = "a"});
    CHECK(a.staged() == (mode == hetero::device_buffer_path::staged));
    CHECK(a.shadow() == shadow);
    CHECK(hetero::detail::congruent(a.mpi_comm(), space.grid().mpi_comm()));
    CHECK(a.mpi_comm() != space.grid().mpi_comm());
    CHECK(a.comm().mpi_comm() == space.grid().mpi_comm());
    const auto n = a.local_extents();
    const auto local = a.local();
    const auto storage = a.local_with_shadow();
    for (int d = 0; d < R; ++d) {
      CHECK(static_cast<std::int64_t>(local.extent(d)) == n[d]);
      CHECK(static_cast<std::int64_t>(storage.extent(d)) == n[d] + shadow.lower[d] + shadow.upper[d]);
    }
    std::int64_t nonzero = 0;
    for (std::size_t i = 0; i < storage.span(); ++i) nonzero += storage.data()[i] == T{} ? 0 : 1;
    CHECK(nonzero == 0);
    dist_test::fill(a, 5);
    // The owned block holds the values by global index, read through local() and global_view().
    const auto g_view = a.global_view();
    dist_test::mismatches wrong;
    dist_test::for_each_owned_element(a, [&](const auto& g, const T& stored) {
      const auto l = space.to_local(g);
      const auto at = hetero::detail::format_array(g);
      wrong.expect(stored == dist_test::value_at<T>(g, 5), "stored value at ", at);
      if constexpr (R == 1) wrong.expect(g_view(g[0]) == stored && local(l[0]) == stored, "views at ", at);
      if constexpr (R == 2)
        wrong.expect(g_view(g[0], g[1]) == stored && local(l[0], l[1]) == stored, "views at ", at);
      if constexpr (R == 3)
        wrong.expect(g_view(g[0], g[1], g[2]) == stored && local(l[0], l[1], l[2]) == stored, "views at ", at);
    });
    // block_view: the same elements, for arrays whose axes are all block or gen-block.
    bool blocks = true;
    for (int d = 0; d < R; ++d) blocks = blocks && space.axis(d).is_contiguous();
    if (blocks) {
      const auto b_view = a.block_view();
      dist_test::for_each_owned_element(a, [&](const auto& g, const T& stored) {
        if constexpr (R == 1) wrong.expect(b_view(g[0]) == stored, "block view at ", g[0]);
        if constexpr (R == 2) wrong.expect(b_view(g[0], g[1]) == stored, "block view at ", g[0], ", ", g[1]);
        if constexpr (R == 3) wrong.expect(b_view(g[0], g[1], g[2]) == stored, "block view at ", g[0], ", ", g[1]);
      });
    } else {
      CHECK_THROWS_AS(a.block_view(), hetero::distribution_error);
    }
    DIST_CHECK_NO_MISMATCH(wrong);
    auto copy = a;  // a handle: copies share the data
    CHECK(copy.local_with_shadow().data() == a.local_with_shadow().data());
  }
}

}  // namespace

TEMPLATE_TEST_CASE("random arrays hold their blocks and shadows, read by local and global index",
                   "[dist][distributed_array]", double, int, particle) {
  check_random_arrays<TestType, 1>(21);
  check_random_arrays<TestType, 2>(22);
  check_random_arrays<TestType, 3>(23);
}

TEST_CASE("shadows wider than a block, or on a cyclic axis, are refused", "[dist][distributed_array]") {
  const int p = world_size();
  hetero::process_grid<1> grid;
  hetero::index_space<1> space({2 * p}, grid);  // blocks of 2
  using array = hetero::distributed_array<double, 1, Kokkos::HostSpace>;
  CHECK_NOTHROW(array(space, {.shadow = hetero::shadow_width<1>::uniform(2)}));
  CHECK_THROWS_AS(array(space, {.shadow = hetero::shadow_width<1>::uniform(3)}), hetero::distribution_error);
  CHECK_THROWS_WITH(array(space, {.shadow = hetero::shadow_width<1>::uniform(3)}),
                    ContainsSubstring("shadow width 3 on axis 0 is wider than the local block of part 0") &&
                        ContainsSubstring("(2 elements)"));
  hetero::index_space<1> cyclic({10}, grid, {hetero::distribution::cyclic()});
  CHECK_THROWS_WITH(array(cyclic, {.shadow = hetero::shadow_width<1>::on_axis(0, 1, 0)}),
                    ContainsSubstring("shadow on axis 0, which is cyclic"));
  CHECK_THROWS_WITH(array(cyclic).block_view(),
                    ContainsSubstring("block_view: axis 0 is cyclic; block_view needs block or gen_block axes"));
  CHECK_THROWS_WITH(array(space, {.shadow = hetero::shadow_width<1>::on_axis(0, -1, 0)}),
                    ContainsSubstring("shadow widths on axis 0 are -1 and 0"));
  if (p > 1) {
    // Widths that differ between the ranks, rank 0's too wide for its block: invalid_argument on
    // every rank (rank 0 alone raised distribution_error, the others waited until the timeout).
    const auto widths = hetero::shadow_width<1>::uniform(hetero::testing::world_rank() == 0 ? 3 : 1);
    CHECK_THROWS_MATCHES(array(space, {.shadow = widths}), hetero::invalid_argument,
                         Catch::Matchers::MessageMatches(ContainsSubstring("the ranks passed different") &&
                                                         ContainsSubstring("shadow widths")));
  }
  CHECK_THROWS_WITH(hetero::shadow_width<2>::on_axis(2, 1, 1),
                    ContainsSubstring("shadow axis 2 is outside [0, 2)"));
  array empty;
  CHECK_FALSE(empty.valid());
  CHECK_THROWS_WITH(empty.local(), ContainsSubstring("the handle is empty"));
}

TEST_CASE("staging follows the memory space unless forced", "[dist][distributed_array]") {
  using hetero::device_buffer_path;
  CHECK_FALSE(hetero::detail::must_stage<Kokkos::HostSpace>(device_buffer_path::automatic, "test"));
  CHECK(hetero::detail::must_stage<Kokkos::HostSpace>(device_buffer_path::staged, "test"));
  CHECK_FALSE(hetero::detail::must_stage<Kokkos::HostSpace>(device_buffer_path::direct, "test"));
  CHECK(std::string(hetero::to_string(device_buffer_path::staged)) == "staged");
}

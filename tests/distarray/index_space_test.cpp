// Index spaces over 1-D, 2-D and 3-D grids: owners, local extents and global <-> local maps
// for every index of random spaces; local ranges of boxes; the errors.
#include <hetero/distarray/index_space.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>

#include "distarray_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

template <int R>
void check_random_spaces(std::uint64_t stream) {
  auto rng = hetero::testing::rng(stream);
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int trial = 0; trial < 12; ++trial) {
    const auto shape = dist_test::random_grid<R>(rng, p);
    hetero::process_grid<R> grid(shape);
    std::array<std::int64_t, R> extents{};
    std::array<hetero::distribution, R> formats{};
    for (int d = 0; d < R; ++d) {
      extents[d] = dist_test::uniform(rng, 0, R == 1 ? 40 : R == 2 ? 11 : 6);
      formats[d] = dist_test::random_distribution(rng, extents[d], shape[d]);
    }
    hetero::index_space<R> space(extents, grid, formats);
    // Every global index: its owner holds it at to_local, and to_global maps back.
    dist_test::mismatches wrong;
    std::int64_t owned_here = 0;
    std::array<std::int64_t, R> g{};
    for (std::int64_t i = 0; i < space.size(); ++i) {
      std::int64_t rest = i;
      for (int d = R - 1; d >= 0; --d) {
        g[d] = rest % extents[d];
        rest /= extents[d];
      }
      const int owner = space.owner_of(g);
      const auto l = space.to_local(g);
      const auto e = space.local_extents(owner);
      for (int d = 0; d < R; ++d)
        wrong.expect(l[d] >= 0 && l[d] < e[d], "local index of ", hetero::detail::format_array(g));
      wrong.expect(space.to_global(owner, l) == g, "round trip of ", hetero::detail::format_array(g));
      if (space.owns(g)) ++owned_here;
    }
    CHECK(owned_here == space.local_size());
    std::int64_t total = 0;
    for (int r = 0; r < p; ++r) total += space.local_size(r);
    CHECK(total == space.size());
    // A random box: its owned part is a local box whose every index maps into it.
    hetero::index_box<R> box;
    for (int d = 0; d < R; ++d) {
      box.begin[d] = dist_test::uniform(rng, 0, extents[d]);
      box.end[d] = dist_test::uniform(rng, box.begin[d], extents[d]);
    }
    const auto local = space.local_range(box);
    std::int64_t inside = 0;
    for (std::int64_t i = 0; i < space.size(); ++i) {
      std::int64_t rest = i;
      bool in = true;
      for (int d = R - 1; d >= 0; --d) {
        g[d] = rest % extents[d];
        rest /= extents[d];
        in = in && g[d] >= box.begin[d] && g[d] < box.end[d];
      }
      if (in && space.owns(g)) {
        ++inside;
        const auto l = space.to_local(g);
        for (int d = 0; d < R; ++d)
          wrong.expect(l[d] >= local.begin[d] && l[d] < local.end[d], "local range misses ",
                       hetero::detail::format_array(g));
      }
    }
    CHECK(local.size() == inside);
    // The kernel maps agree with the host queries.
    const auto maps = space.maps();
    for (int d = 0; d < R; ++d)
      for (std::int64_t l = 0; l < space.local_extents()[d]; ++l)
        wrong.expect(maps[d].to_global(l) == space.axis(d).to_global(space.grid().coords()[d], l), "map of axis ",
                     d);
    DIST_CHECK_NO_MISMATCH(wrong);
  }
}

}  // namespace

TEST_CASE("index spaces map every index to its owner and back", "[dist][index_space]") {
  check_random_spaces<1>(11);
  check_random_spaces<2>(12);
  check_random_spaces<3>(13);
}

TEST_CASE("rows block over a 2-D grid, columns cyclic", "[dist][index_space]") {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  hetero::process_grid<2> grid({p, 1});
  hetero::index_space<2> space({10, 7}, grid, {hetero::distribution::block(), hetero::distribution::cyclic()});
  CHECK(space.local_extents()[1] == 7);
  CHECK(space.owner_of({0, 6}) == 0);
  // Balanced blocks: the last row is the last rank's, or row 9's own rank where ranks outnumber rows.
  CHECK(space.owner_of({9, 0}) == std::min(p, 10) - 1);
  CHECK(space.box() == hetero::index_box<2>{{0, 0}, {10, 7}});
  auto line = hetero::block_space(100);
  CHECK(line.extent(0) == 100);
  CHECK(line.same_layout(hetero::block_space(100)));
  CHECK_FALSE(line.same_layout(hetero::block_space(101)));
  CHECK(line.describe() == hetero::block_space(100).describe());
}

TEST_CASE("index spaces refuse distributions that do not fit", "[dist][index_space]") {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  hetero::process_grid<1> grid;
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(p), 3);
  CHECK_THROWS_AS(hetero::index_space<1>({3 * p + 1}, grid, {hetero::distribution::gen_block(sizes)}),
                  hetero::distribution_error);
  CHECK_THROWS_WITH(hetero::index_space<1>({3 * p + 1}, grid, {hetero::distribution::gen_block(sizes)}),
                    ContainsSubstring("axis 0: gen_block sizes sum to " + std::to_string(3 * p) +
                                      " but the axis has " + std::to_string(3 * p + 1) + " indices"));
  CHECK_THROWS_WITH(hetero::index_space<1>({-1}, grid), ContainsSubstring("index space extent -1 on axis 0"));
  hetero::index_space<1> space({5}, grid);
  CHECK_THROWS_WITH(space.owner_of({5}), ContainsSubstring("global index 5 is outside the axis [0, 5)"));
  CHECK_THROWS_WITH(space.axis(2), ContainsSubstring("axis 2 is outside [0, 1)"));
}

// The per-axis runs under gmove and gmove_get/put: the piece-by-piece walk gives exactly the
// runs of a walk position by position (the reference below), for random distributions of
// every kind on both sides, local sides, random strided sections, every walk and grouping,
// on this rank's part of the grid. Sender and receiver rely on computing the same runs.
#include <hetero/distarray/detail/section_map.hpp>

#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "distarray_support.hpp"

using hetero::detail::axis_runs;
using hetero::detail::group;
using hetero::detail::section_side;
using hetero::detail::walk;

namespace {

// The runs of axis d, visiting every position of the walked side one at a time.
axis_runs reference_runs(int d, const section_side<1>& src, const section_side<1>& dst, walk how, group by) {
  const std::int64_t n = src.section[d].count();
  axis_runs out;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t gs = src.global(d, k), gd = dst.global(d, k);
    if (how == walk::src_owned && src.space->axis(d).owner_of(gs) != src.space->grid().coords()[d]) continue;
    if (how == walk::dst_owned && dst.space->axis(d).owner_of(gd) != dst.space->grid().coords()[d]) continue;
    const std::int64_t ls = src.distributed() ? src.space->axis(d).to_local(gs) : gs;
    const std::int64_t ld = dst.distributed() ? dst.space->axis(d).to_local(gd) : gd;
    int key = 0;
    if (by == group::src_owner) key = src.space->axis(d).owner_of(gs);
    if (by == group::dst_owner) key = dst.space->axis(d).owner_of(gd);
    hetero::detail::extend_runs(out[key], ls, ld);
  }
  return out;
}

// A random side of `count` positions: distributed over every rank (kept in `spaces`), or local.
// One side of `count` positions; a distributed one on `grid` (made once per test case: a grid
// is a communicator, whose collective set-up costs far more than the walk checked here).
template <class Rng>
section_side<1> random_side(Rng& rng, std::int64_t count, bool local, const hetero::process_grid<1>& grid,
                            std::vector<hetero::index_space<1>>& spaces) {
  section_side<1> s;
  const std::int64_t step = dist_test::uniform(rng, 1, 4), begin = dist_test::uniform(rng, 0, 5);
  const std::int64_t end = begin + (count - 1) * step + 1;
  const std::int64_t extent = end + dist_test::uniform(rng, 0, 5);
  s.section[0] = hetero::slice{begin, end, step};
  if (local) {
    s.local_strides[0] = 1;
    return s;
  }
  const int p = dist_test::world_size();
  spaces.emplace_back(std::array<std::int64_t, 1>{extent}, grid,
                      std::array<hetero::distribution, 1>{dist_test::random_distribution(rng, extent, p)});
  s.space = &spaces.back();
  return s;
}

std::string describe(const axis_runs& runs) {
  std::string out;
  for (const auto& [key, list] : runs) {
    out += std::to_string(key) + ":";
    for (const auto& r : list)
      out += " {" + std::to_string(r.src_start) + "+" + std::to_string(r.src_step) + "i, " +
             std::to_string(r.dst_start) + "+" + std::to_string(r.dst_step) + "i, x" + std::to_string(r.count) +
             "}";
    out += "\n";
  }
  return out;
}

bool same_runs(const axis_runs& a, const axis_runs& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i->first != j->first || i->second.size() != j->second.size()) return false;
    for (std::size_t r = 0; r < i->second.size(); ++r) {
      const auto &x = i->second[r], &y = j->second[r];
      if (x.src_start != y.src_start || x.src_step != y.src_step || x.dst_start != y.dst_start ||
          x.dst_step != y.dst_step || x.count != y.count)
        return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("runs_of_axis: the piece-by-piece walk gives the runs of the walk position by position",
          "[dist][section_map]") {
  auto rng = hetero::testing::rng(41);
  const hetero::process_grid<1> grid({dist_test::world_size()});
  int cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<hetero::index_space<1>> spaces;
    spaces.reserve(2);  // the sides point into it
    const std::int64_t count = dist_test::uniform(rng, 1, 80);
    const int locals = static_cast<int>(dist_test::uniform(rng, 0, 5));  // 0: both distributed
    const auto src = random_side(rng, count, locals == 1, grid, spaces);
    const auto dst = random_side(rng, count, locals == 2, grid, spaces);
    for (walk how : {walk::all, walk::src_owned, walk::dst_owned}) {
      if ((how == walk::src_owned && !src.distributed()) || (how == walk::dst_owned && !dst.distributed()))
        continue;
      for (group by : {group::none, group::src_owner, group::dst_owner}) {
        if ((by == group::src_owner && !src.distributed()) || (by == group::dst_owner && !dst.distributed()))
          continue;
        const auto fast = hetero::detail::runs_of_axis(0, src, dst, how, by);
        const auto slow = reference_runs(0, src, dst, how, by);
        INFO("trial " << trial << ", walk " << static_cast<int>(how) << ", group " << static_cast<int>(by)
                      << "\npiece by piece:\n"
                      << describe(fast) << "position by position:\n"
                      << describe(slow));
        REQUIRE(same_runs(fast, slow));
        ++cases;
      }
    }
  }
  CHECK(cases > 1000);
}

TEST_CASE("runs_of_axis: a block-distributed section is a few runs however long it is", "[dist][section_map]") {
  const int p = dist_test::world_size();
  const std::int64_t n = 1 << 20;
  hetero::index_space<1> space({n}, hetero::process_grid<1>({p}));
  section_side<1> array, local;
  array.space = &space;
  array.section[0] = hetero::slice{0, n, 1};
  local.section[0] = hetero::slice{0, n, 1};
  local.local_strides[0] = 1;
  const auto runs = hetero::detail::runs_of_axis(0, array, local, walk::all, group::src_owner);
  REQUIRE(static_cast<int>(runs.size()) == p);
  for (const auto& [owner, list] : runs) {
    REQUIRE(list.size() == 1);
    const auto [b, e] = space.axis(0).block_range(owner);
    CHECK(list[0].src_start == 0);
    CHECK(list[0].src_step == 1);
    CHECK(list[0].dst_start == b);
    CHECK(list[0].dst_step == 1);
    CHECK(list[0].count == e - b);
  }
}

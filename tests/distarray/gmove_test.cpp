// gmove: random pairs of distributions (every kind, random grids and shadows, forced staging)
// and local arrays (row- and column-major), random strided sections, every element of the
// destination checked against a serial reference, made by gmove or by gmove_async completed by
// wait() or test(); plan reuse; asynchronous moves in flight together; overlapping sections;
// a distributed array into a local View on every rank against MPI_Allgatherv; errors.
#include <hetero/distarray/gmove.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "distarray_support.hpp"

using Catch::Matchers::ContainsSubstring;
using dist_test::particle;

namespace {

using dist_test::for_each_index;
using dist_test::world_size;

template <class T, int R>
using local_view =
    Kokkos::View<typename hetero::detail::view_data<T, R>::type, Kokkos::LayoutStride, Kokkos::HostSpace>;

// One side of a random gmove: a distributed array or a local View, and its section.
template <class T, int R>
struct side {
  bool local = false;
  std::array<std::int64_t, R> extents{};
  hetero::distributed_array<T, R, Kokkos::HostSpace> array;
  local_view<T, R> view;
  hetero::section_spec<R> section{};
};

template <class T, int R>
local_view<T, R> make_view(const std::array<std::int64_t, R>& e, bool column_major) {
  auto n = [&](int d) { return static_cast<std::size_t>(e[d]); };
  auto make = [&](auto layout_tag) {
    using layout = decltype(layout_tag);
    using view = Kokkos::View<typename hetero::detail::view_data<T, R>::type, layout, Kokkos::HostSpace>;
    if constexpr (R == 1) return local_view<T, R>(view("local", n(0)));
    if constexpr (R == 2) return local_view<T, R>(view("local", n(0), n(1)));
    if constexpr (R == 3) return local_view<T, R>(view("local", n(0), n(1), n(2)));
  };
  return column_major ? make(Kokkos::LayoutLeft()) : make(Kokkos::LayoutRight());
}

template <class T, int R>
T& at(const local_view<T, R>& v, const std::array<std::int64_t, R>& g) {
  if constexpr (R == 1) return v(g[0]);
  if constexpr (R == 2) return v(g[0], g[1]);
  if constexpr (R == 3) return v(g[0], g[1], g[2]);
}

// A random side whose section has `counts` indices per axis.
template <class T, int R, class Rng>
side<T, R> random_side(Rng& rng, const std::array<std::int64_t, R>& counts, std::uint64_t salt) {
  const int p = world_size();
  side<T, R> s;
  s.local = dist_test::uniform(rng, 0, 4) == 0;
  for (int d = 0; d < R; ++d) {
    const std::int64_t step = dist_test::uniform(rng, 1, 3), begin = dist_test::uniform(rng, 0, 2);
    const std::int64_t end = counts[d] == 0 ? begin : begin + (counts[d] - 1) * step + 1;
    s.extents[d] = end + dist_test::uniform(rng, 0, 3);
    s.section[d] = hetero::slice{begin, dist_test::uniform(rng, 0, 1) ? end : hetero::slice::to_end, step};
    if (s.section[d].end == hetero::slice::to_end && counts[d] != hetero::slice{begin, s.extents[d], step}.count())
      s.section[d].end = end;  // "to the end" only where it gives the same count
  }
  if (s.local) {
    s.view = make_view<T, R>(s.extents, dist_test::uniform(rng, 0, 1) == 1);
    for_each_index<R>(s.extents, [&](const auto& g) { at<T, R>(s.view, g) = dist_test::value_at<T>(g, salt); });
    return s;
  }
  const auto shape = dist_test::random_grid<R>(rng, p);
  std::array<hetero::distribution, R> formats{};
  for (int d = 0; d < R; ++d) formats[d] = dist_test::random_distribution(rng, s.extents[d], shape[d]);
  hetero::index_space<R> space(s.extents, dist_test::grid_of<R>(shape), formats);
  hetero::shadow_width<R> shadow;
  for (int d = 0; d < R; ++d) {
    if (!space.axis(d).is_contiguous()) continue;
    std::int64_t smallest = s.extents[d];
    for (int q = 0; q < shape[d]; ++q) smallest = std::min(smallest, space.axis(d).local_size(q));
    shadow.lower[d] = std::min<std::int64_t>(smallest, dist_test::uniform(rng, 0, 2));
    shadow.upper[d] = std::min<std::int64_t>(smallest, dist_test::uniform(rng, 0, 2));
  }
  const auto mode = dist_test::uniform(rng, 0, 2) == 0 ? hetero::device_buffer_path::staged
                                                       : hetero::device_buffer_path::automatic;
  s.array = hetero::distributed_array<T, R, Kokkos::HostSpace>(space, {.shadow = shadow, .device_path = mode});
  dist_test::fill(s.array, salt);
  return s;
}

// How a move is made: gmove, or gmove_async completed by wait() or by polling test().
enum class completion { blocking, wait, poll };

template <class Dst, class Src>
void move_as(completion how, const Dst& dst, const Src& src) {
  if (how == completion::blocking) {
    hetero::gmove(dst, src);
    return;
  }
  auto handle = hetero::gmove_async(dst, src);
  if (how == completion::wait) {
    handle.wait();
  } else {
    while (!handle.test()) {
    }
  }
  CHECK(handle.done());
}

template <class T, int R>
void move(const side<T, R>& dst, const side<T, R>& src, completion how = completion::blocking) {
  if (dst.local && src.local) {
    move_as(how, hetero::section(dst.view, dst.section), hetero::section(src.view, src.section));
  } else if (dst.local) {
    move_as(how, hetero::section(dst.view, dst.section), src.array.section(src.section));
  } else if (src.local) {
    move_as(how, dst.array.section(dst.section), hetero::section(src.view, src.section));
  } else {
    move_as(how, dst.array.section(dst.section), src.array.section(src.section));
  }
}

// The destination after dst = src: sections mapped position by position, the rest untouched.
template <class T, int R>
void check_destination(const side<T, R>& dst, const side<T, R>& src, std::uint64_t dst_salt,
                       std::uint64_t src_salt) {
  dist_test::mismatches wrong;
  auto expected = [&](const std::array<std::int64_t, R>& g) {
    std::array<std::int64_t, R> from{};
    for (int d = 0; d < R; ++d) {
      const auto& s = dst.section[d];
      const std::int64_t end = s.end == hetero::slice::to_end ? dst.extents[d] : s.end;
      if (g[d] < s.begin || g[d] >= end || (g[d] - s.begin) % s.step != 0)
        return dist_test::value_at<T>(g, dst_salt);
      from[d] = src.section[d].begin + (g[d] - s.begin) / s.step * src.section[d].step;
    }
    return dist_test::value_at<T>(from, src_salt);
  };
  if (dst.local) {
    for_each_index<R>(dst.extents, [&](const auto& g) {
      wrong.expect(at<T, R>(dst.view, g) == expected(g), "local element ", hetero::detail::format_array(g));
    });
  } else {
    dist_test::for_each_owned_element(dst.array, [&](const auto& g, const T& value) {
      wrong.expect(value == expected(g), "owned element ", hetero::detail::format_array(g));
    });
    // Shadows are never written by gmove.
    std::int64_t owned = dst.array.space().local_size(), zeros = 0;
    const auto storage = dst.array.local_with_shadow();
    for (std::size_t i = 0; i < storage.span(); ++i) zeros += storage.data()[i] == T{} ? 1 : 0;
    std::int64_t owned_zeros = 0;
    dist_test::for_each_owned_element(dst.array,
                                      [&](const auto&, const T& v) { owned_zeros += v == T{} ? 1 : 0; });
    wrong.expect(zeros - owned_zeros == static_cast<std::int64_t>(storage.span()) - owned, "a shadow was written");
  }
  DIST_CHECK_NO_MISMATCH(wrong);
}

// Beyond 2 ranks, a third of the trials: each trial makes two arrays, whose set-up is collective,
// and a collective step takes milliseconds when 3 ranks share this machine's 2 cores. The inputs
// are drawn fresh on every run, so the runs still cover new layouts.
template <class T, int R>
void random_gmoves(std::uint64_t stream, int trials) {
  if (world_size() > 2) trials = std::max(3, trials / 3);
  auto rng = hetero::testing::rng(stream);
  for (int trial = 0; trial < trials; ++trial) {
    std::array<std::int64_t, R> counts{};
    for (int d = 0; d < R; ++d) counts[d] = dist_test::uniform(rng, 0, R == 1 ? 30 : R == 2 ? 7 : 4);
    const std::uint64_t src_salt = 1000 + static_cast<std::uint64_t>(trial), dst_salt = 2000 + src_salt;
    const auto src = random_side<T, R>(rng, counts, src_salt);
    const auto dst = random_side<T, R>(rng, counts, dst_salt);
    INFO("trial " << trial << ": counts " << hetero::detail::format_array(counts) << ", src "
                  << (src.local ? "local" : "distributed") << ", dst " << (dst.local ? "local" : "distributed"));
    const auto how = static_cast<completion>(dist_test::uniform(rng, 0, 2));
    INFO("completion " << static_cast<int>(how) << " (0: gmove, 1: gmove_async + wait, 2: + test)");
    move(dst, src, how);
    check_destination(dst, src, dst_salt, src_salt);
  }
}

}  // namespace

TEST_CASE("gmove between random distributions and sections, 1-D", "[dist][gmove]") {
  random_gmoves<double, 1>(51, 40);
}
TEST_CASE("gmove between random distributions and sections, 2-D", "[dist][gmove]") {
  random_gmoves<double, 2>(52, 40);
}
TEST_CASE("gmove between random distributions and sections, 3-D", "[dist][gmove]") {
  random_gmoves<double, 3>(53, 25);
}
TEST_CASE("gmove moves integers and structs", "[dist][gmove]") {
  random_gmoves<int, 2>(54, 10);
  random_gmoves<particle, 1>(55, 10);
  random_gmoves<particle, 3>(56, 6);
}

TEST_CASE("block to cyclic redistribution of whole arrays, plans reused", "[dist][gmove]") {
  const int p = world_size();
  hetero::process_grid<1> grid;
  const std::int64_t n = 1000 + p;
  hetero::distributed_array<double, 1, Kokkos::HostSpace> block(hetero::index_space<1>({n}, grid));
  hetero::distributed_array<double, 1, Kokkos::HostSpace> cyclic(
      hetero::index_space<1>({n}, grid, {hetero::distribution::cyclic()}));
  dist_test::fill(block, 7);
  hetero::gmove(cyclic, block);
  dist_test::mismatches wrong;
  dist_test::for_each_owned_element(cyclic, [&](const auto& g, double v) {
    wrong.expect(v == dist_test::value_at<double>(g, 7), "cyclic element ", g[0]);
  });
  DIST_CHECK_NO_MISMATCH(wrong);
  // The same layouts again, and other arrays with the same layouts: no new plan.
  const auto builds = hetero::detail::plan_builds().load();
  hetero::gmove(cyclic, block);
  hetero::distributed_array<double, 1, Kokkos::HostSpace> other(hetero::index_space<1>({n}, grid));
  hetero::gmove(other, cyclic);  // cyclic -> block: a new pair of layouts
  const auto after_new_pair = hetero::detail::plan_builds().load();
  CHECK(after_new_pair == builds + 1);
  hetero::distributed_array<double, 1, Kokkos::HostSpace> twin(
      hetero::index_space<1>({n}, grid, {hetero::distribution::cyclic()}));
  hetero::gmove(twin, block);  // the block -> cyclic plan of the first pair is shared
  CHECK(hetero::detail::plan_builds().load() == after_new_pair);
  dist_test::for_each_owned_element(other, [&](const auto& g, double v) {
    wrong.expect(v == dist_test::value_at<double>(g, 7), "round trip element ", g[0]);
  });
  dist_test::for_each_owned_element(twin, [&](const auto& g, double v) {
    wrong.expect(v == dist_test::value_at<double>(g, 7), "twin element ", g[0]);
  });
  DIST_CHECK_NO_MISMATCH(wrong);
}

TEST_CASE("asynchronous gmoves of the same layouts in flight together, completed in any order", "[dist][gmove]") {
  const int p = world_size();
  hetero::process_grid<1> grid;
  const std::int64_t n = 700 + 3 * p;
  using array = hetero::distributed_array<double, 1, Kokkos::HostSpace>;
  const hetero::index_space<1> cyclic_space({n}, grid, {hetero::distribution::cyclic()});
  array block(hetero::index_space<1>({n}, grid)), other_block(hetero::index_space<1>({n}, grid));
  dist_test::fill(block, 11);
  dist_test::fill(other_block, 12);
  array first(cyclic_space), second(cyclic_space);
  {
    auto a = hetero::gmove_async(first, block);
    auto b = hetero::gmove_async(second, other_block);  // the same plan is in flight: a private one
    CHECK_FALSE(a.done());                              // complete only by wait() or a test() that said so
    b.wait();
    a.wait();
  }
  dist_test::mismatches wrong;
  dist_test::for_each_owned_element(first, [&](const auto& g, double v) {
    wrong.expect(v == dist_test::value_at<double>(g, 11), "first element ", g[0]);
  });
  dist_test::for_each_owned_element(second, [&](const auto& g, double v) {
    wrong.expect(v == dist_test::value_at<double>(g, 12), "second element ", g[0]);
  });
  // A handle destroyed without wait() completes in its destructor; the arrays it keeps alive
  // may be dropped by the caller first.
  array third(cyclic_space);
  {
    array source(hetero::index_space<1>({n}, grid));
    dist_test::fill(source, 13);
    auto pending = hetero::gmove_async(third, source);
    source = array();
  }
  dist_test::for_each_owned_element(third, [&](const auto& g, double v) {
    wrong.expect(v == dist_test::value_at<double>(g, 13), "third element ", g[0]);
  });
  DIST_CHECK_NO_MISMATCH(wrong);
}

TEST_CASE("gmove within one array reads the values from before the move", "[dist][gmove]") {
  const int p = world_size();
  const std::int64_t n = 10 * p + 3;
  hetero::distributed_array<int, 1, Kokkos::HostSpace> a(hetero::index_space<1>({n}, hetero::process_grid<1>()));
  dist_test::fill(a, 9);
  hetero::gmove(a.section({hetero::slice{1, n}}), a.section({hetero::slice{0, n - 1}}));  // shift right by one
  dist_test::mismatches wrong;
  dist_test::for_each_owned_element(a, [&](const auto& g, int v) {
    const std::array<std::int64_t, 1> from{g[0] == 0 ? 0 : g[0] - 1};
    wrong.expect(v == dist_test::value_at<int>(from, 9), "element ", g[0]);
  });
  DIST_CHECK_NO_MISMATCH(wrong);
}

TEST_CASE("gmove reports its waits as halo waits", "[dist][gmove]") {
  struct recorder : hetero::observer {
    std::mutex mutex;
    std::vector<std::string> labels;
    void wait_begin(hetero::wait_kind kind, std::string_view label) noexcept override {
      std::lock_guard lock(mutex);
      if (kind == hetero::wait_kind::halo) labels.emplace_back(label);
    }
    void wait_end(hetero::wait_kind, std::string_view) noexcept override {}
  } observer;
  const int p = world_size();
  hetero::distributed_array<double, 1, Kokkos::HostSpace> a(hetero::block_space(8 * p));
  Kokkos::View<double*, Kokkos::HostSpace> everything("everything", static_cast<std::size_t>(8 * p));
  auto* previous = hetero::set_observer(&observer);
  hetero::gmove(everything, a);  // every rank receives the whole array
  hetero::set_observer(previous);
  if (p > 1) {
    CHECK(observer.labels == std::vector<std::string>{"gmove"});
  } else {
    CHECK(observer.labels.empty());
  }
}

TEST_CASE("gmove refuses sections out of bounds or of different shapes", "[dist][gmove]") {
  const int p = world_size();
  hetero::process_grid<2> grid({p, 1});
  hetero::distributed_array<double, 2, Kokkos::HostSpace> a(hetero::index_space<2>({4 * p, 6}, grid));
  hetero::distributed_array<double, 2, Kokkos::HostSpace> b(hetero::index_space<2>({4 * p, 6}, grid));
  using hetero::slice;
  CHECK_THROWS_AS(hetero::gmove(a.section({slice{0, 2}, slice{0, 3}}), b.section({slice{0, 3}, slice{0, 2}})),
                  hetero::invalid_argument);
  CHECK_THROWS_WITH(
      hetero::gmove(a.section({slice{0, 2}, slice{0, 3}}), b.section({slice{0, 3}, slice{0, 2}})),
      ContainsSubstring("the destination section has shape [2, 3] but the source section has shape [3, 2]"));
  CHECK_THROWS_WITH(
      hetero::gmove(a.section({slice::all(), slice{2, 9}}), b.section({slice::all(), slice{0, 7}})),
      ContainsSubstring("gmove destination: section [2, 9) on axis 1 is out of bounds; the extent on "
                        "that axis is 6"));
  CHECK_THROWS_WITH(hetero::gmove(a, b.section({slice::all(), slice{0, 6, 0}})),
                    ContainsSubstring("gmove source: step 0 on axis 1 is not allowed"));
  Kokkos::View<const double**, Kokkos::HostSpace> frozen(Kokkos::View<double**, Kokkos::HostSpace>("f", 4 * p, 6));
  CHECK_THROWS_WITH(hetero::gmove(frozen, a), ContainsSubstring("the destination is a View of const elements"));
  // A step beyond the extent takes the first index only: end - begin + step overflowed, and
  // the section had no element.
  const slice huge{1, 4 * p, std::numeric_limits<std::int64_t>::max()};
  CHECK(huge.count() == 1);
  CHECK(slice{0, 10, 3}.count() == 4);
  CHECK(slice{0, 9, 3}.count() == 3);
  const auto salt = hetero::testing::rng(98)();
  dist_test::fill(a, salt);
  Kokkos::View<double**, Kokkos::HostSpace> corner("corner", 1, 1);
  hetero::gmove(corner, a.section({huge, slice{5, 6, std::numeric_limits<std::int64_t>::max()}}));
  CHECK(corner(0, 0) == dist_test::value_at<double>(std::array<std::int64_t, 2>{1, 5}, salt));
  if (p > 1) {
    hetero::distributed_array<double, 2, Kokkos::HostSpace> alone(
        hetero::index_space<2>({4 * p, 6}, hetero::process_grid<2>({1, 1}, MPI_COMM_SELF)));
    CHECK_THROWS_WITH(hetero::gmove(alone, a), ContainsSubstring("distributed over different processes"));
  }
}

// XcalableMP's gmove to a non-distributed array: every rank receives the whole distributed array
// into its own local View, as MPI_Allgatherv of the blocks would (nbody's positions).
TEST_CASE("gmove of a distributed array into a local View on every rank equals MPI_Allgatherv", "[dist][gmove]") {
  const int p = world_size(), me = dist_test::world_rank();
  auto rng = hetero::testing::rng(97);  // the same draws on every rank: sizes and distributions
  for (int round = 0; round < 6; ++round) {
    // Uneven blocks: n not a multiple of p, and gen_block parts of random (possibly zero) sizes.
    const std::int64_t n = p * dist_test::uniform(rng, 1, 40) + dist_test::uniform(rng, 1, std::max(1, p - 1));
    const std::int64_t width = dist_test::uniform(rng, 1, 5);
    const hetero::distribution rows = dist_test::random_distribution(rng, n, p, true);
    CAPTURE(round, n, width, hetero::to_string(rows.kind()));
    hetero::distributed_array<double, 2, Kokkos::HostSpace> a(hetero::index_space<2>(
        {n, width}, hetero::process_grid<2>({p, 1}), {rows, hetero::distribution::block()}));
    Kokkos::View<double**, Kokkos::HostSpace> everything("everything", static_cast<std::size_t>(n),
                                                         static_cast<std::size_t>(width));
    const auto counts_of = [&] {
      std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
      for (int q = 0; q < p; ++q) {
        counts[static_cast<std::size_t>(q)] = static_cast<int>(a.space().axis(0).local_size(q) * width);
        if (q > 0) {
          const auto prev = static_cast<std::size_t>(q - 1);
          displs[static_cast<std::size_t>(q)] = displs[prev] + counts[prev];
        }
      }
      return std::pair(counts, displs);
    };
    const auto [counts, displs] = counts_of();
    // Twice on the same arrays with fresh values: the second gmove reuses the cached plan.
    for (int again = 0; again < 2; ++again) {
      auto mine_rng = hetero::testing::rng(1000 + 10 * static_cast<std::uint64_t>(round) +
                                           2 * static_cast<std::uint64_t>(me) + static_cast<std::uint64_t>(again));
      std::uniform_real_distribution<double> value(-1, 1);
      const auto block = a.local();
      std::vector<double> mine;
      for (std::size_t i = 0; i < block.extent(0); ++i)
        for (std::size_t j = 0; j < block.extent(1); ++j) mine.push_back(block(i, j) = value(mine_rng));
      REQUIRE(static_cast<int>(mine.size()) == counts[static_cast<std::size_t>(me)]);
      std::vector<double> reference(static_cast<std::size_t>(n * width));
      MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, reference.data(), counts.data(),
                     displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
      Kokkos::deep_copy(everything, -7.0);
      hetero::gmove(everything, a);
      dist_test::mismatches wrong;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < width; ++j)
          wrong.expect(everything(i, j) == reference[static_cast<std::size_t>(i * width + j)], "element (", i,
                       ", ", j, ")");
      DIST_CHECK_NO_MISMATCH(wrong);
    }
  }
  // The local View must have the array's shape (or be given a section that has it).
  hetero::distributed_array<double, 1, Kokkos::HostSpace> b(hetero::block_space(3 * p + 1));
  Kokkos::View<double*, Kokkos::HostSpace> too_long("too long", static_cast<std::size_t>(3 * p + 2));
  CHECK_THROWS_AS(hetero::gmove(too_long, b), hetero::invalid_argument);
  CHECK_THROWS_WITH(hetero::gmove(too_long, b),
                    ContainsSubstring("the destination section has shape [" + std::to_string(3 * p + 2) +
                                      "] but the source section has shape [" + std::to_string(3 * p + 1) + "]"));
  hetero::gmove(hetero::section(too_long, {hetero::slice{1, 3 * p + 2}}), b);  // a section of the right shape
}

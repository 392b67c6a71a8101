// Helpers of the dist module's tests: deterministic values of global indices, random
// distributions, grids and sections drawn from the run's shared seed (every rank draws the
// same), and host-side fills and checks of distributed arrays.
#ifndef HETERO_TESTS_DIST_SUPPORT_HPP
#define HETERO_TESTS_DIST_SUPPORT_HPP

#include <hetero/distarray.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "grid_comm.hpp"
#include "random.hpp"
#include "world.hpp"

namespace dist_test {

/// Counts failed element checks and keeps the first one's description. Tests check every
/// element this way and assert once at the end: a rank that stopped at its first failing
/// element would leave the other ranks waiting in the next collective.
struct mismatches {
  std::int64_t count = 0;
  std::string first;
  template <class... Parts>
  void expect(bool ok, const Parts&... what) {
    if (!ok && count++ == 0) first = hetero::detail::message(what...);
  }
};

/// Asserts that no element check failed, naming the first failure.
#define DIST_CHECK_NO_MISMATCH(m)                                      \
  do {                                                                 \
    INFO((m).count << " element(s) differ; the first: " << (m).first); \
    CHECK((m).count == 0);                                             \
  } while (false)

/// A trivially copyable struct with padding, to move through every path.
struct particle {
  int id = 0;
  double mass = 0;
  char tag = 0;
  friend bool operator==(const particle& a, const particle& b) {
    return a.id == b.id && a.mass == b.mass && a.tag == b.tag;
  }
};

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The value of global index `g` in the array salted `salt`.
template <class T, std::size_t R>
T value_at(const std::array<std::int64_t, R>& g, std::uint64_t salt) {
  std::uint64_t h = mix(salt);
  for (auto i : g) h = mix(h ^ static_cast<std::uint64_t>(i));
  if constexpr (std::is_same_v<T, particle>) {
    return particle{static_cast<int>(h & 0xffffff), static_cast<double>(h >> 11) * 0x1p-53,
                    static_cast<char>('a' + (h >> 40) % 26)};
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<double>(h >> 11) * 0x1p-53);
  } else {
    return static_cast<T>(h & 0x7fffffff);
  }
}

using hetero::testing::world_rank;
using hetero::testing::world_size;

/// Calls f(g) for every multi-index g of the box [0, e) in row-major order.
template <int R, class F>
void for_each_index(const std::array<std::int64_t, R>& e, F&& f) {
  std::int64_t total = 1;
  for (auto x : e) total *= x;
  std::array<std::int64_t, R> g{};
  for (std::int64_t i = 0; i < total; ++i) {
    std::int64_t rest = i;
    for (int d = R - 1; d >= 0; --d) {
      g[d] = rest % e[d];
      rest /= e[d];
    }
    f(g);
  }
}

template <class Rng>
std::int64_t uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

/// A random distribution of `extent` indices over `parts` (only block/gen-block when
/// `contiguous`; gen-block sizes may be zero unless `min_size` says otherwise).
template <class Rng>
hetero::distribution random_distribution(Rng& rng, std::int64_t extent, int parts, bool contiguous = false,
                                         std::int64_t min_size = 0) {
  const int kind = static_cast<int>(uniform(rng, 0, contiguous ? 1 : 3));
  if (kind == 0) return hetero::distribution::block();
  if (kind == 2) return hetero::distribution::cyclic();
  if (kind == 3) return hetero::distribution::block_cyclic(uniform(rng, 1, 4));
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(parts), min_size);
  for (std::int64_t left = extent - min_size * parts; left > 0; --left)
    ++sizes[static_cast<std::size_t>(uniform(rng, 0, parts - 1))];
  return hetero::distribution::gen_block(sizes);
}

/// A random grid shape of R axes holding `ranks` ranks.
template <int R, class Rng>
std::array<int, R> random_grid(Rng& rng, int ranks) {
  std::array<int, R> shape;
  shape.fill(1);
  shape[static_cast<std::size_t>(uniform(rng, 0, R - 1))] = ranks;
  return shape;
}

/// A grid of `shape` over the world's ranks, on the test's shared communicator (grid_comm.hpp).
template <int R>
hetero::process_grid<R> grid_of(const std::array<int, R>& shape) {
  return hetero::process_grid<R>(shape, hetero::testing::grid_comm());
}

/// Calls f(global index, storage element) for every owned element of `a`, on a host copy
/// `storage` of its storage (block and shadows).
template <class T, int R, class M, class Storage, class F>
void for_each_owned_slot(const hetero::distributed_array<T, R, M>& a, const Storage& storage, F&& f) {
  const auto& space = a.space();
  const auto lo = a.shadow().lower;
  const int me = space.grid().rank();
  for_each_index<R>(a.local_extents(), [&](const std::array<std::int64_t, R>& l) {
    const auto g = space.to_global(me, l);
    if constexpr (R == 1) f(g, storage(l[0] + lo[0]));
    if constexpr (R == 2) f(g, storage(l[0] + lo[0], l[1] + lo[1]));
    if constexpr (R == 3) f(g, storage(l[0] + lo[0], l[1] + lo[1], l[2] + lo[2]));
  });
}

/// Fills this rank's block (not the shadows) with value_at(global, salt).
template <class T, int R, class M>
void fill(const hetero::distributed_array<T, R, M>& a, std::uint64_t salt) {
  auto storage = Kokkos::create_mirror_view(a.local_with_shadow());
  Kokkos::deep_copy(storage, a.local_with_shadow());
  for_each_owned_slot(a, storage, [&](const auto& g, T& element) { element = value_at<T>(g, salt); });
  Kokkos::deep_copy(a.local_with_shadow(), storage);
}

/// Calls check(global, local storage element) for every owned element of this rank.
template <class T, int R, class M, class Check>
void for_each_owned_element(const hetero::distributed_array<T, R, M>& a, Check&& check) {
  auto storage = Kokkos::create_mirror_view(a.local_with_shadow());
  Kokkos::deep_copy(storage, a.local_with_shadow());
  for_each_owned_slot(a, storage, [&](const auto& g, const T& element) { check(g, element); });
}

}  // namespace dist_test

#endif  // HETERO_TESTS_DIST_SUPPORT_HPP

// The check of the dist module's reflect tests, for arrays in any memory space: every element of
// a rank's storage, block and shadows, against what a reflect must leave there.
#ifndef HETERO_TESTS_DIST_REFLECT_CHECK_HPP
#define HETERO_TESTS_DIST_REFLECT_CHECK_HPP

#include <hetero/distarray/reflect.hpp>

#include <catch2/catch_test_macros.hpp>

#include <array>
#include <cstdint>

#include "distarray_support.hpp"

namespace dist_test {

/// Checks every element of the storage (block and shadows) of an array filled with
/// value_at(global, salt) and `sentinel` in the shadows, after a reflect with `options`, on a
/// host copy (any memory space).
template <class T, int R, class Memory>
void check_reflected(const hetero::distributed_array<T, R, Memory>& a, const hetero::reflect_options<R>& options,
                     std::uint64_t salt, const T& sentinel) {
  mismatches wrong;
  const auto& space = a.space();
  const auto storage = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.local_with_shadow());
  const auto n = a.local_extents();
  const auto lo = a.shadow().lower;
  const auto coords = space.grid().coords();
  std::array<std::int64_t, R> s{}, g{};
  for (std::size_t flat = 0; flat < storage.span(); ++flat) {
    std::int64_t rest = static_cast<std::int64_t>(flat);
    for (int d = R - 1; d >= 0; --d) {
      s[d] = rest % static_cast<std::int64_t>(storage.extent(d));
      rest /= static_cast<std::int64_t>(storage.extent(d));
    }
    int in_shadow = 0;
    bool unreachable = false;
    for (int d = 0; d < R; ++d) {
      const std::int64_t l = s[d] - lo[d];
      const auto& axis = space.axis(d);
      if (l >= 0 && l < n[d]) {
        g[d] = axis.to_global(coords[d], l);
        continue;
      }
      ++in_shadow;
      const std::int64_t global = axis.block_range(coords[d]).first + l;  // shadows only on contiguous axes
      if (global < 0 || global >= axis.extent()) {
        if (!options.periodic[d]) unreachable = true;
        g[d] = (global + axis.extent()) % axis.extent();
      } else {
        g[d] = global;
      }
    }
    const T expected = unreachable || (in_shadow > 1 && !options.corners) ? sentinel : value_at<T>(g, salt);
    wrong.expect(storage.data()[flat] == expected, "storage index ", hetero::detail::format_array(s), ", global ",
                 hetero::detail::format_array(g), ", shadow axes ", in_shadow, ", outside ", unreachable);
  }
  DIST_CHECK_NO_MISMATCH(wrong);
}

}  // namespace dist_test

#endif  // HETERO_TESTS_DIST_REFLECT_CHECK_HPP

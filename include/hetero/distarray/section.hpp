/// @file
/// Index boxes (ranges of a loop) and array sections (XcalableMP triplets begin:end:step).
#ifndef HETERO_DISTARRAY_SECTION_HPP
#define HETERO_DISTARRAY_SECTION_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "hetero/core/error.hpp"
#include "hetero/distarray/concepts.hpp"

namespace hetero {

/// A box of indices [begin, end) per axis: the range of an owner-computes loop, in global
/// indices, or a rank's local block, in local indices.
template <int Rank>
requires supported_rank<Rank>
struct index_box {
  std::array<std::int64_t, Rank> begin{};  ///< first index per axis
  std::array<std::int64_t, Rank> end{};    ///< one past the last index per axis

  /// Indices on `axis` (0 when reversed).
  [[nodiscard]] std::int64_t extent(int axis) const noexcept {
    return end[axis] > begin[axis] ? end[axis] - begin[axis] : 0;
  }
  /// Indices in the box.
  [[nodiscard]] std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (int d = 0; d < Rank; ++d) n *= extent(d);
    return n;
  }
  /// Whether the box holds no index.
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// Equal when `begin` and `end` are equal on every axis.
  friend bool operator==(const index_box&, const index_box&) = default;
};

/// One axis of an array section: indices begin, begin + step, ... below end.
/// <!-- snippet: fragment -->
/// @code
/// hetero::slice{2, 10};     // 2, 3, ..., 9
/// hetero::slice{0, 10, 3};  // 0, 3, 6, 9
/// hetero::slice::all();     // the whole axis
/// @endcode
struct slice {
  /// `end` meaning "to the end of the axis".
  static constexpr std::int64_t to_end = std::numeric_limits<std::int64_t>::max();

  std::int64_t begin = 0;     ///< first index
  std::int64_t end = to_end;  ///< one past the last index (to_end: the axis' extent)
  std::int64_t step = 1;      ///< stride between indices, 1 or more

  /// The whole axis.
  static constexpr slice all() noexcept { return slice{}; }
  /// One index.
  static constexpr slice at(std::int64_t i) noexcept { return slice{i, i + 1, 1}; }

  /// How many indices (begin, end already checked against an extent).
  [[nodiscard]] constexpr std::int64_t count() const noexcept {
    return end > begin ? (end - begin - 1) / step + 1 : 0;  // no end - begin + step: it overflows for a huge step
  }
  /// Equal when `begin`, `end` and `step` are equal (`to_end` is not resolved).
  friend bool operator==(const slice&, const slice&) = default;
};

/// A section of a `Rank`-dimensional index space: one slice per axis.
template <int Rank>
using section_spec = std::array<slice, Rank>;

namespace detail {

/// The section with `to_end` replaced by the extents, after checking every slice against
/// them: throws `invalid_argument` naming `what`, the axis, the slice and the extent.
template <std::size_t N>
std::array<slice, N> resolve_section(std::array<slice, N> s, const std::array<std::int64_t, N>& extents,
                                     std::string_view what) {
  for (std::size_t d = 0; d < N; ++d) {
    auto& a = s[d];
    if (a.end == slice::to_end) a.end = extents[d];
    HETERO_EXPECTS(a.step >= 1, what, ": step ", a.step, " on axis ", d, " is not allowed; steps must be >= 1");
    HETERO_EXPECTS(a.begin >= 0 && a.begin <= a.end && a.end <= extents[d], what, ": section [", a.begin, ", ",
                   a.end, ") on axis ", d, " is out of bounds; the extent on that axis is ", extents[d],
                   " (allowed: 0 <= begin <= end <= ", extents[d], ")");
  }
  return s;
}

/// The number of indices per axis of a resolved section.
template <std::size_t N>
std::array<std::int64_t, N> section_shape(const std::array<slice, N>& s) {
  std::array<std::int64_t, N> shape{};
  for (std::size_t d = 0; d < N; ++d) shape[d] = s[d].count();
  return shape;
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_DISTARRAY_SECTION_HPP

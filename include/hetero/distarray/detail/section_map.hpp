/// @file
/// Which elements of a section assignment dst = src each pair of ranks exchanges. Works axis
/// by axis: on each axis the positions k of the section are grouped by the owner on the other
/// side and compressed into runs (arithmetic progressions in both sides' local indices); a
/// rank pair's elements are the product of its runs over the axes, as strided boxes. Sender
/// and receiver compute the same runs from the same sequence, so their boxes match one to one.
#ifndef HETERO_DISTARRAY_DETAIL_SECTION_MAP_HPP
#define HETERO_DISTARRAY_DETAIL_SECTION_MAP_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "hetero/distarray/detail/rows.hpp"
#include "hetero/distarray/index_space.hpp"
#include "hetero/distarray/section.hpp"

namespace hetero::detail {

/// One side of a section assignment: a distributed array (its index space and shadows) or a
/// local array present on every rank (its strides on this rank).
template <int Rank>
struct section_side {
  const index_space<Rank>* space = nullptr;  ///< null: a local array
  section_spec<Rank> section{};              ///< resolved against the extents
  std::array<std::int64_t, Rank> shadow_lower{};
  std::array<std::int64_t, Rank> shadow_upper{};
  std::array<std::int64_t, Rank> local_strides{};  ///< a local array's strides, in elements

  [[nodiscard]] bool distributed() const noexcept { return space != nullptr; }
  [[nodiscard]] std::int64_t global(int d, std::int64_t k) const noexcept {
    return section[d].begin + k * section[d].step;
  }
  /// Storage strides on grid rank `r` (row-major over the block with its shadows).
  [[nodiscard]] std::array<std::int64_t, Rank> strides(int r) const {
    if (!distributed()) return local_strides;
    const auto e = space->local_extents(r);
    std::array<std::int64_t, Rank> s{};
    std::int64_t stride = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      s[d] = stride;
      stride *= e[d] + shadow_lower[d] + shadow_upper[d];
    }
    return s;
  }
};

/// A run of section positions: src local index src_start + i * src_step goes to dst local
/// index dst_start + i * dst_step, for i < count.
struct run {
  std::int64_t src_start = 0, src_step = 1, dst_start = 0, dst_step = 1, count = 0;
};

/// Which positions of an axis one rank walks: those whose source or destination it owns, or
/// all of them.
enum class walk { src_owned, dst_owned, all };
/// What positions are grouped by: the owner on the source side, on the destination side, or
/// nothing (one group).
enum class group { src_owner, dst_owner, none };

/// Runs of one axis, keyed by the grid coordinate of the grouping side.
using axis_runs = std::map<int, std::vector<run>>;

/// Appends (src, dst) to the last run when it continues it, else starts a run.
inline void extend_runs(std::vector<run>& runs, std::int64_t src, std::int64_t dst) {
  if (!runs.empty()) {
    run& r = runs.back();
    if (r.count == 1 && src != r.src_start && dst != r.dst_start) {
      r.src_step = src - r.src_start;
      r.dst_step = dst - r.dst_start;
      r.count = 2;
      return;
    }
    if (src == r.src_start + r.count * r.src_step && dst == r.dst_start + r.count * r.dst_step) {
      ++r.count;
      return;
    }
  }
  runs.push_back({src, 1, dst, 1, 1});
}

/// Appends the m pairs (src + i * src_step, dst + i * dst_step), i < m, with the same result
/// as appending them one by one: the first two one by one; after them the last run holds the
/// second pair and, when it holds more, steps by (src_step, dst_step), so the rest extends it.
inline void extend_runs(std::vector<run>& runs, std::int64_t src, std::int64_t src_step, std::int64_t dst,
                        std::int64_t dst_step, std::int64_t m) {
  for (std::int64_t i = 0; i < std::min<std::int64_t>(m, 2); ++i)
    extend_runs(runs, src + i * src_step, dst + i * dst_step);
  if (m <= 2) return;
  run& r = runs.back();
  if (r.count == 1) {
    r.src_step = src_step;
    r.dst_step = dst_step;
  }
  r.count += m - 2;
}

/// The end (exclusive) of the piece of `axis` that holds global index g: the indices from g
/// up to it have one owner and consecutive local indices (a part's block on the contiguous
/// kinds, a block of `width` indices on the cyclic kinds).
inline std::int64_t piece_end(const axis_distribution& axis, std::int64_t g) {
  if (axis.is_contiguous()) return axis.block_range(axis.owner_of(g)).second;
  const std::int64_t w = axis.format().width();
  return std::min(axis.extent(), (g / w + 1) * w);
}

/// The runs of axis `d` for this rank's walk, grouped as asked. The walk goes piece by piece:
/// within a stretch of positions where neither side changes piece, owners stay and local
/// indices step with the section steps, so the stretch is appended at once (O(pieces), not
/// O(positions); the runs are those of a walk position by position).
template <int Rank>
axis_runs runs_of_axis(int d, const section_side<Rank>& src, const section_side<Rank>& dst, walk how, group by) {
  const std::int64_t n = src.section[d].count();
  axis_runs out;
  // How many positions from k on (at most `limit`) stay in the pieces that hold position k.
  auto stretch = [&](std::int64_t k, std::int64_t limit) {
    for (const section_side<Rank>* side : {&src, &dst}) {
      if (!side->distributed()) continue;
      const std::int64_t g = side->global(d, k), step = side->section[d].step;
      limit = std::min(limit, (piece_end(side->space->axis(d), g) - g - 1) / step + 1);  // > 0: g lies in it
    }
    return limit;
  };
  // Appends positions [k, end) stretch by stretch.
  auto visit = [&](std::int64_t k, std::int64_t end) {
    while (k < end) {
      const std::int64_t m = stretch(k, end - k);
      const std::int64_t gs = src.global(d, k), gd = dst.global(d, k);
      const std::int64_t ls = src.distributed() ? src.space->axis(d).to_local(gs) : gs;
      const std::int64_t ld = dst.distributed() ? dst.space->axis(d).to_local(gd) : gd;
      int key = 0;
      if (by == group::src_owner) key = src.space->axis(d).owner_of(gs);
      if (by == group::dst_owner) key = dst.space->axis(d).owner_of(gd);
      extend_runs(out[key], ls, src.section[d].step, ld, dst.section[d].step, m);
      k += m;
    }
  };
  if (n == 0) return out;
  if (how == walk::all) {
    visit(0, n);
    return out;
  }
  // Walk the pieces of this rank's part of the walked side that meet the section, in order.
  const section_side<Rank>& side = how == walk::src_owned ? src : dst;
  const auto& axis = side.space->axis(d);
  const int part = side.space->grid().coords()[d];
  const std::int64_t first = side.section[d].begin, step = side.section[d].step;
  const std::int64_t last = first + (n - 1) * step;
  // The positions whose global index lies in [b, e).
  auto positions = [&](std::int64_t b, std::int64_t e) {
    const std::int64_t k0 = b <= first ? 0 : (b - first - 1) / step + 1;  // ceil((b - first) / step)
    const std::int64_t k1 = e <= first ? 0 : std::min(n, (e - first - 1) / step + 1);
    if (k0 < k1) visit(k0, k1);
  };
  if (axis.is_contiguous()) {
    const auto [b, e] = axis.block_range(part);
    positions(b, e);
    return out;
  }
  const std::int64_t w = axis.format().width(), cycle = w * axis.parts();
  for (std::int64_t b = (first / cycle) * cycle + part * w; b <= last; b += cycle)
    positions(b, std::min(b + w, axis.extent()));
  return out;
}

/// The boxes one pair of ranks exchanges: `src_boxes` in the sender's storage and
/// `dst_boxes` in the receiver's, in the same element order. `peer` is the grouped side's
/// rank (-1 when ungrouped). The boxes of a local array are laid out with this rank's
/// strides (another rank's may differ: only this rank's own side is meaningful there).
template <int Rank>
struct peer_boxes {
  int peer = -1;
  std::vector<strided_box<Rank>> src_boxes;
  std::vector<strided_box<Rank>> dst_boxes;
};

/// For this rank's walk, the boxes of every peer: the product over the axes of the runs with
/// the same grouping coordinates.
template <int Rank>
std::vector<peer_boxes<Rank>> exchange_boxes(const section_side<Rank>& src, const section_side<Rank>& dst,
                                             walk how, group by) {
  std::array<axis_runs, Rank> axes;
  for (int d = 0; d < Rank; ++d) axes[d] = runs_of_axis(d, src, dst, how, by);
  for (const auto& a : axes)
    if (a.empty()) return {};
  const int me_src = src.distributed() ? src.space->grid().rank() : -1;
  const int me_dst = dst.distributed() ? dst.space->grid().rank() : -1;

  std::vector<peer_boxes<Rank>> out;
  std::array<axis_runs::const_iterator, Rank> at;
  for (int d = 0; d < Rank; ++d) at[d] = axes[d].begin();
  while (true) {
    std::array<int, Rank> coords{};
    for (int d = 0; d < Rank; ++d) coords[d] = at[d]->first;
    peer_boxes<Rank> p;
    if (by == group::src_owner) p.peer = src.space->grid().rank_of(coords);
    if (by == group::dst_owner) p.peer = dst.space->grid().rank_of(coords);
    // Whose storage each side's boxes live in: the grouped side's peer, else this rank.
    const int src_rank = by == group::src_owner ? p.peer : me_src;
    const int dst_rank = by == group::dst_owner ? p.peer : me_dst;
    const auto src_strides = src.strides(src_rank), dst_strides = dst.strides(dst_rank);
    // Product of the runs, the first axis outermost.
    std::array<std::size_t, Rank> r{};
    while (true) {
      strided_box<Rank> s, t;
      for (int d = 0; d < Rank; ++d) {
        const run& x = at[d]->second[r[d]];
        s.offset += (x.src_start + src.shadow_lower[d]) * src_strides[d];
        s.count[d] = x.count;
        s.stride[d] = x.src_step * src_strides[d];
        t.offset += (x.dst_start + dst.shadow_lower[d]) * dst_strides[d];
        t.count[d] = x.count;
        t.stride[d] = x.dst_step * dst_strides[d];
      }
      p.src_boxes.push_back(s);
      p.dst_boxes.push_back(t);
      int d = Rank - 1;
      for (; d >= 0; --d) {
        if (++r[d] < at[d]->second.size()) break;
        r[d] = 0;
      }
      if (d < 0) break;
    }
    out.push_back(std::move(p));
    int d = Rank - 1;
    for (; d >= 0; --d) {
      if (++at[d] != axes[d].end()) break;
      at[d] = axes[d].begin();
    }
    if (d < 0) break;
  }
  return out;
}

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_SECTION_MAP_HPP

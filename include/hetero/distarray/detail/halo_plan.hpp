/// @file
/// The messages of a reflect: per axis with a shadow, the first and last shadow-width slabs
/// of the block go to the neighbours below and above, and their slabs fill the shadows.
#ifndef HETERO_DISTARRAY_DETAIL_HALO_PLAN_HPP
#define HETERO_DISTARRAY_DETAIL_HALO_PLAN_HPP

#include <array>
#include <cstdint>
#include <vector>

#include "hetero/distarray/detail/transfer.hpp"
#include "hetero/distarray/distributed_array.hpp"

namespace hetero::detail {

/// The phases of a reflect: one phase for all axes, or, when corners are refreshed too, one
/// per axis with a shadow, each carrying the shadows the earlier phases filled.
template <class T, class MemorySpace>
struct halo_plan {
  std::vector<transfer_plan<T, MemorySpace, MemorySpace>> phases;
};

/// Message tags of a reflect: data travelling up (to the next coordinate) or down, per axis.
inline int halo_tag(int axis, bool upward) { return 100 + 2 * axis + (upward ? 0 : 1); }

template <class T, int Rank, class MemorySpace>
std::shared_ptr<halo_plan<T, MemorySpace>> make_halo_plan(const index_space<Rank>& space,
                                                          const shadow_width<Rank>& shadow,
                                                          const std::array<bool, Rank>& periodic, bool corners,
                                                          bool staged) {
  const auto& grid = space.grid();
  const auto n = space.local_extents();
  const auto& lo = shadow.lower;
  const auto& hi = shadow.upper;
  std::array<std::int64_t, Rank> stride{};
  std::int64_t s = 1;
  for (int d = Rank - 1; d >= 0; --d) {
    stride[d] = s;
    s *= n[d] + lo[d] + hi[d];
  }
  std::array<int, Rank> below{}, above{};
  std::vector<int> axes;
  for (int d = 0; d < Rank; ++d) {
    below[d] = grid.neighbor(d, -1, periodic[d]);
    above[d] = grid.neighbor(d, +1, periodic[d]);
    if (shadow.on(d)) axes.push_back(d);
  }
  // The box of local indices [first, last) on axis d, with `others` on the other axes.
  auto box = [&](int d, std::int64_t first, std::int64_t last, const std::array<std::int64_t, Rank>& from,
                 const std::array<std::int64_t, Rank>& to) {
    strided_box<Rank> b;
    for (int e = 0; e < Rank; ++e) {
      const std::int64_t begin = e == d ? first : from[e], end = e == d ? last : to[e];
      b.offset += (begin + lo[e]) * stride[e];
      b.count[e] = end - begin;
      b.stride[e] = stride[e];
    }
    return b;
  };

  auto plan = std::make_shared<halo_plan<T, MemorySpace>>();
  std::vector<bool> done(Rank, false);  // axes whose shadows an earlier phase filled
  std::size_t next = 0;
  while (next < axes.size()) {
    const std::size_t phase_end = corners ? next + 1 : axes.size();
    std::vector<message_spec<Rank>> sends, recvs;
    for (; next < phase_end; ++next) {
      const int d = axes[next];
      std::array<std::int64_t, Rank> from{}, to = n;
      for (int e = 0; e < Rank; ++e) {
        if (e == d || !done[e]) continue;
        from[e] = below[e] >= 0 ? -lo[e] : 0;  // neighbours along d share this rank's coordinate on e
        to[e] = n[e] + (above[e] >= 0 ? hi[e] : 0);
      }
      if (below[d] >= 0) {
        if (lo[d] > 0) recvs.push_back({below[d], halo_tag(d, true), {box(d, -lo[d], 0, from, to)}});
        if (hi[d] > 0) sends.push_back({below[d], halo_tag(d, false), {box(d, 0, hi[d], from, to)}});
      }
      if (above[d] >= 0) {
        if (hi[d] > 0) recvs.push_back({above[d], halo_tag(d, false), {box(d, n[d], n[d] + hi[d], from, to)}});
        if (lo[d] > 0) sends.push_back({above[d], halo_tag(d, true), {box(d, n[d] - lo[d], n[d], from, to)}});
      }
    }
    for (std::size_t a = 0; a < phase_end; ++a) done[static_cast<std::size_t>(axes[a])] = true;
    transfer_plan<T, MemorySpace, MemorySpace> phase;
    phase.me = grid.rank();
    phase.policy = make_wait_policy(grid.mpi_comm());
    phase.send = transfer_side<T, MemorySpace>(sends, staged);
    phase.recv = transfer_side<T, MemorySpace>(recvs, staged);
    plan->phases.push_back(std::move(phase));
  }
  return plan;
}

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_HALO_PLAN_HPP

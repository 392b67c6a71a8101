/// @file
/// Rebalancing for ranks of unequal speed: gen-block sizes from measured per-rank rates, and
/// redistribution of an array onto a new index space (XcalableMP's `redistribute`). The
/// node-level counterpart of the GPU/CPU work-sharing weight.
#ifndef HETERO_DISTARRAY_REBALANCE_HPP
#define HETERO_DISTARRAY_REBALANCE_HPP

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/distarray/distributed_array.hpp"
#include "hetero/distarray/gmove.hpp"
#include "hetero/distarray/index_space.hpp"

namespace hetero {

/// Block sizes for `extent` indices over `rates.size()` parts, proportional to the rates
/// (e.g. elements per second each part processed), each at least `minimum`; they sum to
/// `extent`. Rounding gives the leftover indices to the largest remainders (ties: lower
/// part). Throws `invalid_argument` for a rate that is negative or not finite, all rates
/// zero, or minimums that do not fit.
/// <!-- snippet: fragment -->
/// @code
/// auto sizes = hetero::gen_block_sizes(1000, {3.0, 1.0});  // {750, 250}
/// @endcode
inline std::vector<std::int64_t> gen_block_sizes(std::int64_t extent, const std::vector<double>& rates,
                                                 std::int64_t minimum = 0) {
  HETERO_EXPECTS(!rates.empty(), "gen_block_sizes: no rates given; give one rate per part");
  HETERO_EXPECTS(extent >= 0, "gen_block_sizes: extent ", extent, " is negative");
  HETERO_EXPECTS(minimum >= 0, "gen_block_sizes: minimum ", minimum, " is negative");
  const auto parts = static_cast<std::int64_t>(rates.size());
  for (std::size_t p = 0; p < rates.size(); ++p)
    HETERO_EXPECTS(std::isfinite(rates[p]) && rates[p] >= 0, "gen_block_sizes: the rate of part ", p, " is ",
                   rates[p], "; rates must be finite and >= 0");
  const double total = std::accumulate(rates.begin(), rates.end(), 0.0);
  HETERO_EXPECTS(total > 0, "gen_block_sizes: every rate is 0; at least one part must make progress");
  HETERO_EXPECTS(minimum * parts <= extent, "gen_block_sizes: a minimum of ", minimum, " indices for each of ",
                 parts, " parts needs ", minimum * parts, " indices but the extent is ", extent);
  const std::int64_t shared = extent - minimum * parts;
  std::vector<std::int64_t> sizes(rates.size());
  std::vector<double> remainder(rates.size());
  std::int64_t given = 0;
  for (std::size_t p = 0; p < rates.size(); ++p) {
    const double ideal = static_cast<double>(shared) * (rates[p] / total);
    sizes[p] = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(ideal)), shared);
    remainder[p] = ideal - static_cast<double>(sizes[p]);
    given += sizes[p];
  }
  std::vector<std::size_t> order(rates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t i = 0; given < shared; i = (i + 1) % order.size(), ++given) ++sizes[order[i]];
  for (std::size_t i = order.size(); given > shared;) {  // floating-point excess, if any
    i = (i + order.size() - 1) % order.size();
    if (sizes[order[i]] > 0) {
      --sizes[order[i]];
      --given;
    }
  }
  for (auto& s : sizes) s += minimum;
  return sizes;
}

/// A copy of `space` whose `axis` is a gen-block sized from the ranks' measured rates
/// (collective over the grid: every rank passes its own `rate`, in elements of its block per
/// second). A slab of the grid along `axis` advances at the pace of its slowest member, per
/// index of `axis`: rate / (its block's extent on the other axes). Each block keeps at least
/// `minimum` indices (e.g. the shadow width).
template <int Rank>
index_space<Rank> balanced_space(const index_space<Rank>& space, int axis, double rate, std::int64_t minimum = 0) {
  HETERO_EXPECTS(axis >= 0 && axis < Rank, "balanced_space: axis ", axis, " is outside [0, ", Rank, ")");
  const auto& grid = space.grid();
  const auto local = space.local_extents();
  double cross = 1;
  for (int d = 0; d < Rank; ++d)
    if (d != axis) cross *= static_cast<double>(local[d]);
  // Every rank learns every rate before any rank judges them: a rank that threw alone would
  // leave the others waiting in the collective.
  const std::vector<double> rates = grid.comm().allgather(send_buf(rate));
  const std::vector<double> crosses = grid.comm().allgather(send_buf(cross));
  const int parts = grid.extent(axis);
  std::vector<double> pace(static_cast<std::size_t>(parts), std::numeric_limits<double>::infinity());
  for (int r = 0; r < grid.size(); ++r) {
    const double given = rates[static_cast<std::size_t>(r)];
    HETERO_EXPECTS(std::isfinite(given) && given > 0, "balanced_space: rank ", r, " measured a rate of ", given,
                   "; rates must be finite and > 0");
    const double work = crosses[static_cast<std::size_t>(r)];
    if (work <= 0) continue;  // an empty block says nothing about its slab's pace
    auto& p = pace[static_cast<std::size_t>(grid.coords_of(r)[axis])];
    p = std::min(p, given / work);
  }
  // Slabs whose blocks were all empty get the average pace of the others.
  double known = 0;
  int counted = 0;
  for (double p : pace)
    if (std::isfinite(p)) known += p, ++counted;
  for (double& p : pace)
    if (!std::isfinite(p)) p = counted > 0 ? known / counted : 1.0;

  std::array<distribution, Rank> formats{};
  for (int d = 0; d < Rank; ++d) formats[d] = space.axis(d).format();
  formats[axis] = distribution::gen_block(gen_block_sizes(space.extent(axis), pace, minimum));
  return index_space<Rank>(space.extents(), grid, formats);
}

/// A new array on `space` (same extents, same processes) holding the values of `array`, with
/// the same options (collective): block to cyclic, onto a rebalanced gen-block, ...
/// Shadows are not copied; reflect the new array if it needs them.
template <class T, int Rank, class MemorySpace>
distributed_array<T, Rank, MemorySpace> redistribute(const distributed_array<T, Rank, MemorySpace>& array,
                                                     const index_space<Rank>& space) {
  if (space.extents() != array.space().extents())
    detail::raise<invalid_argument>("redistribute: the new index space has extents ",
                                    detail::format_array(space.extents()), " but the array has ",
                                    detail::format_array(array.space().extents()));
  distributed_array<T, Rank, MemorySpace> moved(space, array.options());
  gmove(moved, array);
  return moved;
}

/// Redistributes `array` onto a gen-block along `axis` sized from every rank's measured
/// `rate` (collective); blocks keep at least the shadow width on that axis.
/// <!-- snippet: fragment
/// hetero::distributed_array<double, 2> u(hetero::index_space<2>({64, 64}, hetero::process_grid<2>()));
/// double seconds_of_last_sweep = 0.5;
/// -->
/// @code
/// double rate = static_cast<double>(u.space().local_size()) / seconds_of_last_sweep;
/// u = hetero::rebalance(u, 0, rate);
/// @endcode
template <class T, int Rank, class MemorySpace>
distributed_array<T, Rank, MemorySpace> rebalance(const distributed_array<T, Rank, MemorySpace>& array, int axis,
                                                  double rate) {
  HETERO_EXPECTS(axis >= 0 && axis < Rank, "rebalance: axis ", axis, " is outside [0, ", Rank, ")");
  const auto& shadow = array.shadow();
  const std::int64_t minimum = std::max(shadow.lower[axis], shadow.upper[axis]);
  return redistribute(array, balanced_space(array.space(), axis, rate, minimum));
}

}  // namespace hetero

#endif  // HETERO_DISTARRAY_REBALANCE_HPP

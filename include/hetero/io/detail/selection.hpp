/// @file
/// The elements of a distributed array that one rank owns, as an HDF5 selection of the file's
/// global dataset: per axis at most two regular runs (the full blocks of a cyclic deal, then a
/// last partial block), and the product of the axes' runs as a union of hyperslabs. Local
/// storage is row-major and local indices grow with global ones on every axis, so HDF5's
/// row-major walk of the selection meets the elements in the order of the local block.
#ifndef HETERO_IO_DETAIL_SELECTION_HPP
#define HETERO_IO_DETAIL_SELECTION_HPP

#include <hdf5.h>

#include <array>
#include <cstdint>
#include <vector>

#include "hetero/distarray/distribution.hpp"
#include "hetero/distarray/index_space.hpp"
#include "hetero/io/detail/h5.hpp"

namespace hetero::detail {

/// A regular pattern of one axis: `count` blocks of `block` indices, `stride` apart, from `start`.
struct h5_run {
  hsize_t start = 0, stride = 1, count = 0, block = 0;
};

/// The global indices part `part` owns on `axis`, as at most two runs, shifted by `origin`.
inline std::vector<h5_run> owned_runs(const axis_distribution& axis, int part, std::int64_t origin) {
  std::vector<h5_run> runs;
  const std::int64_t n = axis.extent();
  auto add = [&](std::int64_t start, std::int64_t stride, std::int64_t count, std::int64_t block) {
    if (count > 0 && block > 0)
      runs.push_back({static_cast<hsize_t>(origin + start), static_cast<hsize_t>(count > 1 ? stride : block),
                      static_cast<hsize_t>(count), static_cast<hsize_t>(block)});
  };
  if (axis.is_contiguous()) {
    const auto [begin, end] = axis.block_range(part);
    add(begin, 1, 1, end - begin);
    return runs;
  }
  const std::int64_t w = axis.format().width(), cycle = w * axis.parts(), first = part * w;
  const std::int64_t full = n >= first + w ? (n - first - w) / cycle + 1 : 0;
  add(first, cycle, full, w);
  const std::int64_t rest = first + full * cycle;
  if (rest < n) add(rest, 1, 1, n - rest);
  return runs;
}

/// Selects in `file_space` the elements grid rank `rank` of `space` owns, each axis shifted by
/// `origin` (a section's corner in the file; zeros for a whole dataset).
template <int Rank>
void select_owned(hid_t file_space, const index_space<Rank>& space, int rank,
                  const std::array<std::int64_t, Rank>& origin, const std::string& path) {
  const auto coords = space.grid().coords_of(rank);
  std::array<std::vector<h5_run>, Rank> runs;
  std::size_t combinations = 1;
  for (int d = 0; d < Rank; ++d) {
    runs[d] = owned_runs(space.axis(d), coords[d], origin[d]);
    combinations *= runs[d].size();
  }
  if (combinations == 0) {
    if (H5Sselect_none(file_space) < 0) raise_h5(path, "selecting no element of the file's dataspace");
    return;
  }
  for (std::size_t c = 0; c < combinations; ++c) {
    std::array<hsize_t, Rank> start{}, stride{}, count{}, block{};
    std::size_t rest = c;
    for (int d = Rank - 1; d >= 0; --d) {
      const auto& run = runs[d][rest % runs[d].size()];
      rest /= runs[d].size();
      start[d] = run.start;
      stride[d] = run.stride;
      count[d] = run.count;
      block[d] = run.block;
    }
    const auto how = c == 0 ? H5S_SELECT_SET : H5S_SELECT_OR;
    if (H5Sselect_hyperslab(file_space, how, start.data(), stride.data(), count.data(), block.data()) < 0)
      raise_h5(path, "selecting this rank's elements in the file's dataspace");
  }
}

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_SELECTION_HPP

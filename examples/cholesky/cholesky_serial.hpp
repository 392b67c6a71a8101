// Block Cholesky, serial, left-looking: each tile receives the updates from the tile columns
// before it in calls of `width` columns at a time, then is factorised (the diagonal tile) or
// solved (the tiles below it). The reference the task versions are measured against
// (delta-SLOC in docs/results/task.md). One rank, tiles of `a` updated in place.
#ifndef HETERO_EXAMPLES_CHOLESKY_SERIAL_HPP
#define HETERO_EXAMPLES_CHOLESKY_SERIAL_HPP

#include <algorithm>

#include "tiles.hpp"

namespace cholesky {

template <real T>
void factorize_serial(tiles<T>& a, int width = update_width) {
  const int nt = a.tiles_per_side(), b = a.tile_size();
  for (int j = 0; j < nt; ++j) {
    for (int k = 0; k < j; k += width) {
      syrk(a.local(j, k), a.local(j, j), b, std::min(width, j - k));
    }
    potrf(a.local(j, j), b);

    for (int i = j + 1; i < nt; ++i) {
      for (int k = 0; k < j; k += width) {
        gemm(a.local(i, k), a.local(j, k), a.local(i, j), b, std::min(width, j - k));
      }
      trsm(a.local(j, j), a.local(i, j), b);
    }
  }
}

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_SERIAL_HPP

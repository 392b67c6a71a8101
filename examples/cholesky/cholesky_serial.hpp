// Block Cholesky, serial: the reference the task versions are measured against (delta-SLOC in
// docs/task.md). One rank, tiles of `a` updated in place.
#ifndef HETERO_EXAMPLES_CHOLESKY_SERIAL_HPP
#define HETERO_EXAMPLES_CHOLESKY_SERIAL_HPP

#include "tiles.hpp"

namespace cholesky {

template <real T>
void factorize_serial(tiles<T>& a) {
  const int nt = a.tiles_per_side(), b = a.tile_size();
  for (int k = 0; k < nt; ++k) {
    potrf(a.local(k, k), b);

    for (int i = k + 1; i < nt; ++i) {
      trsm(a.local(k, k), a.local(k, i), b);
    }
    for (int i = k + 1; i < nt; ++i) {
      for (int j = k + 1; j < i; ++j) {
        gemm(a.local(k, j), a.local(k, i), a.local(j, i), b);
      }
      syrk(a.local(k, i), a.local(i, i), b);
    }
  }
}

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_SERIAL_HPP

// Block Cholesky with OpenMP tasks and `depend`: the serial left-looking version
// (cholesky_serial.hpp) with each call made a task, the baseline of the task graph version on
// one rank. An update task reads `width` tiles of each row (a `depend` iterator).
#ifndef HETERO_EXAMPLES_CHOLESKY_OMP_HPP
#define HETERO_EXAMPLES_CHOLESKY_OMP_HPP

#include <algorithm>

#include "tiles.hpp"

namespace cholesky {

template <real T>
void factorize_omp(tiles<T>& a, int threads, int width = update_width) {
  const int nt = a.tiles_per_side(), b = a.tile_size();
  const auto te = a.tile_elements();
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (int j = 0; j < nt; ++j) {
    T* ajj = a.local(j, j);
    for (int k = 0; k < j; k += width) {
      const int w = std::min(width, j - k);
      T* zj = a.local(j, k);
#pragma omp task depend(iterator(s = 0 : w), in : zj[s * te]) depend(inout : ajj[0])
      syrk(zj, ajj, b, w);
    }
#pragma omp task depend(inout : ajj[0])
    potrf(ajj, b);

    for (int i = j + 1; i < nt; ++i) {
      T* aij = a.local(i, j);
      for (int k = 0; k < j; k += width) {
        const int w = std::min(width, j - k);
        T *zi = a.local(i, k), *zj = a.local(j, k);
#pragma omp task depend(iterator(s = 0 : w), in : zi[s * te], zj[s * te]) depend(inout : aij[0])
        gemm(zi, zj, aij, b, w);
      }
#pragma omp task depend(in : ajj[0]) depend(inout : aij[0])
      trsm(ajj, aij, b);
    }
  }  // the end of the parallel region waits for every task (the `taskwait` of the OpenMP version)
}

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_OMP_HPP

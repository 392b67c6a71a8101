// Block Cholesky with OpenMP tasks and `depend`, the shape of the seed's Figure 7: the
// baseline of the task graph version on one rank.
#ifndef HETERO_EXAMPLES_CHOLESKY_OMP_HPP
#define HETERO_EXAMPLES_CHOLESKY_OMP_HPP

#include "tiles.hpp"

namespace cholesky {

template <real T>
void factorize_omp(tiles<T>& a, int threads) {
  const int nt = a.tiles_per_side(), b = a.tile_size();
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (int k = 0; k < nt; ++k) {
    T* akk = a.local(k, k);
#pragma omp task depend(out : akk[0])
    potrf(akk, b);

    for (int i = k + 1; i < nt; ++i) {
      T* aki = a.local(k, i);
#pragma omp task depend(in : akk[0]) depend(out : aki[0])
      trsm(akk, aki, b);
    }
    for (int i = k + 1; i < nt; ++i) {
      T* aki = a.local(k, i);
      for (int j = k + 1; j < i; ++j) {
        T *akj = a.local(k, j), *aji = a.local(j, i);
#pragma omp task depend(in : aki[0], akj[0]) depend(out : aji[0])
        gemm(akj, aki, aji, b);
      }
      T* aii = a.local(i, i);
#pragma omp task depend(in : aki[0]) depend(out : aii[0])
      syrk(aki, aii, b);
    }
  }  // the end of the parallel region waits for every task (the seed's taskwait)
}

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_OMP_HPP

// Block Cholesky with OpenMP tasks and `depend` in the shape of Figure 7 of the XcalableMP tasklet paper (Tsugane
// et al.): right-looking, one b x b x b call per task (for A = L L^T). A second baseline: it shows what the
// left-looking versions' wider updates gain (docs/results/task.md).
#ifndef HETERO_EXAMPLES_CHOLESKY_OMP_RIGHT_LOOKING_HPP
#define HETERO_EXAMPLES_CHOLESKY_OMP_RIGHT_LOOKING_HPP

#include "tiles.hpp"

namespace cholesky {

template <real T>
void factorize_omp_right_looking(tiles<T>& a, int threads) {
  const int nt = a.tiles_per_side(), b = a.tile_size();
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (int k = 0; k < nt; ++k) {
    T* akk = a.local(k, k);
#pragma omp task depend(out : akk[0])
    potrf(akk, b);

    for (int i = k + 1; i < nt; ++i) {
      T* aik = a.local(i, k);
#pragma omp task depend(in : akk[0]) depend(out : aik[0])
      trsm(akk, aik, b);
    }
    for (int i = k + 1; i < nt; ++i) {
      T* aik = a.local(i, k);
      for (int j = k + 1; j < i; ++j) {
        T *ajk = a.local(j, k), *aij = a.local(i, j);
#pragma omp task depend(in : aik[0], ajk[0]) depend(out : aij[0])
        gemm(aik, ajk, aij, b);
      }
      T* aii = a.local(i, i);
#pragma omp task depend(in : aik[0]) depend(out : aii[0])
      syrk(aik, aii, b);
    }
  }
}

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_OMP_RIGHT_LOOKING_HPP

// The block Cholesky example's tile kernels and test matrix, free of MPI and of hetero (so that a
// peer's program on another MPI, bench/task/cholesky_starpu_mpi.cpp, can use the same ones):
// the precisions, the test matrix, the four tile kernels (LAPACKE/CBLAS on column-major b x b
// tiles, lower storage) and the residual of a factor ||A - L L^T||_F / ||A||_F. tiles.hpp
// distributes the tiles over ranks.
#ifndef HETERO_EXAMPLES_CHOLESKY_KERNELS_HPP
#define HETERO_EXAMPLES_CHOLESKY_KERNELS_HPP

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cholesky {

/// The precisions of the example.
template <class T>
concept real = std::same_as<T, float> || std::same_as<T, double>;

/// Element (r, c) of the test matrix: symmetric, entries in [-0.5, 0.5], n added to the
/// diagonal (diagonally dominant, so positive definite). Computed from the indices alone, so
/// every rank can make its own columns.
template <real T>
T element(std::int64_t r, std::int64_t c, std::int64_t n) {
  const auto lo = static_cast<std::uint64_t>(std::min(r, c)), hi = static_cast<std::uint64_t>(std::max(r, c));
  std::uint64_t h = lo * 0x9e3779b97f4a7c15ULL ^ (hi + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 29;
  const double u = static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5;
  return static_cast<T>(r == c ? u + static_cast<double>(n) : u);
}

/// Tile columns per update call: a tile's updates from `update_width` earlier tile columns
/// run as one GEMM (SYRK on the diagonal) with K = update_width * b, not as that many b x b x b
/// ones. Its output tile then stays in cache for all of them (docs/results/task.md measures 4 against
/// 1).
inline constexpr int update_width = 4;

/// A_jj = L_jj L_jj^T: L_jj overwrites the lower triangle of A_jj.
template <real T>
void potrf(T* ajj, int b) {
  const int info = std::same_as<T, double>
                       ? LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', b, reinterpret_cast<double*>(ajj), b)
                       : LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', b, reinterpret_cast<float*>(ajj), b);
  if (info != 0)
    throw std::runtime_error("potrf: tile not positive definite (LAPACK info " + std::to_string(info) + ")");
}

/// L_ij := A_ij L_jj^-T (a tile below the diagonal tile).
template <real T>
void trsm(const T* ljj, T* aij, int b) {
  if constexpr (std::same_as<T, double>) {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, b, b, 1.0, ljj, b, aij, b);
  } else {
    cblas_strsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, b, b, 1.0f, ljj, b, aij, b);
  }
}

/// A_jj -= Z Z^T (lower triangle), where Z is `width` tiles of row j side by side,
/// L_jk .. L_j,k+width-1: the updates of `width` steps in one call.
template <real T>
void syrk(const T* z, T* ajj, int b, int width = 1) {
  if constexpr (std::same_as<T, double>) {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, b, width * b, -1.0, z, b, 1.0, ajj, b);
  } else {
    cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, b, width * b, -1.0f, z, b, 1.0f, ajj, b);
  }
}

/// A_ij -= Zi Zj^T, where Zi and Zj are `width` tiles of rows i and j side by side (the same
/// tile columns k .. k+width-1): the updates of `width` steps in one GEMM with K = width * b.
template <real T>
void gemm(const T* zi, const T* zj, T* aij, int b, int width = 1) {
  if constexpr (std::same_as<T, double>) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, width * b, -1.0, zi, b, zj, b, 1.0, aij, b);
  } else {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, width * b, -1.0f, zi, b, zj, b, 1.0f, aij, b);
  }
}

/// Floating-point operations of a Cholesky factorisation of order n.
inline double flops(std::int64_t n) {
  const auto x = static_cast<double>(n);
  return x * x * x / 3.0 + x * x / 2.0 + x / 6.0;
}

/// Fills tile (i, k) of the test matrix of order n (tiles of b x b) at `t`.
template <real T>
void fill_tile(T* t, int i, int k, int b, std::int64_t n) {
  for (int c = 0; c < b; ++c)
    for (int r = 0; r < b; ++r)
      t[c * b + r] = element<T>(static_cast<std::int64_t>(i) * b + r, static_cast<std::int64_t>(k) * b + c, n);
}

/// ||A - L L^T||_F / ||A||_F in double precision, for the factor L of the test matrix in `nt` x
/// `nt` tiles of b x b, where `row(i)` gives tiles (i, 0) .. (i, i) of L side by side (it may
/// reuse one buffer from call to call: each row is read before the next call).
template <real T, class Row>
double residual(int nt, int b, Row&& row) {
  const std::int64_t n = static_cast<std::int64_t>(nt) * b, elements = static_cast<std::int64_t>(b) * b;
  std::vector<double> l(static_cast<std::size_t>(n * n), 0.0);
  for (int i = 0; i < nt; ++i) {
    const T* src = row(i);
    for (int k = 0; k <= i; ++k)
      for (int c = 0; c < b; ++c)
        for (int r = 0; r < b; ++r) {
          const std::int64_t gr = static_cast<std::int64_t>(i) * b + r, gc = static_cast<std::int64_t>(k) * b + c;
          if (gr >= gc) l[static_cast<std::size_t>(gc * n + gr)] = src[k * elements + c * b + r];
        }
  }
  std::vector<double> product(static_cast<std::size_t>(n * n), 0.0);  // lower triangle of L L^T
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(n), 1.0, l.data(),
              static_cast<int>(n), 0.0, product.data(), static_cast<int>(n));
  double diff = 0.0, norm = 0.0;
  for (std::int64_t c = 0; c < n; ++c)
    for (std::int64_t r = c; r < n; ++r) {
      const double a = element<double>(r, c, n), w = r == c ? 1.0 : 2.0;  // both triangles
      const double d = a - product[static_cast<std::size_t>(c * n + r)];
      diff += w * d * d;
      norm += w * a * a;
    }
  return std::sqrt(diff / norm);
}

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_KERNELS_HPP

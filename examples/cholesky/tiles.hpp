// Tiled symmetric positive definite matrices for block Cholesky (A = U^T U, upper storage, as
// the seed's Figures 7-9): tiles of b x b, column-major inside; the tiles of tile column i live
// on rank i % P (1-D cyclic, the seed's `distribute T(cyclic)`), in an MPI window so that other
// ranks can fetch them with MPI_Get (the seed's `gmove in`). On one rank it is a plain tile
// matrix. Also the four tile kernels (LAPACKE/CBLAS) and the residual check.
#ifndef HETERO_EXAMPLES_CHOLESKY_TILES_HPP
#define HETERO_EXAMPLES_CHOLESKY_TILES_HPP

#include <cblas.h>
#include <lapacke.h>
#include <mpi.h>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace cholesky {

/// The precisions of the example.
template <class T>
concept real = std::same_as<T, float> || std::same_as<T, double>;

template <real T>
MPI_Datatype mpi_type() {
  return std::same_as<T, double> ? MPI_DOUBLE : MPI_FLOAT;
}

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

// --- the four tile kernels (column-major b x b tiles, upper storage) ----------------------

/// A_kk = U_kk^T U_kk: U_kk overwrites the upper triangle of A_kk.
template <real T>
void potrf(T* akk, int b) {
  const int info = std::same_as<T, double>
                       ? LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', b, reinterpret_cast<double*>(akk), b)
                       : LAPACKE_spotrf(LAPACK_COL_MAJOR, 'U', b, reinterpret_cast<float*>(akk), b);
  if (info != 0)
    throw std::runtime_error("potrf: tile not positive definite (LAPACK info " + std::to_string(info) + ")");
}

/// A_ki := U_kk^-T A_ki (the row panel beside the diagonal tile).
template <real T>
void trsm(const T* akk, T* aki, int b) {
  if constexpr (std::same_as<T, double>) {
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, b, b, 1.0, akk, b, aki, b);
  } else {
    cblas_strsm(CblasColMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, b, b, 1.0f, akk, b, aki, b);
  }
}

/// A_ii -= A_ki^T A_ki (upper triangle).
template <real T>
void syrk(const T* aki, T* aii, int b) {
  if constexpr (std::same_as<T, double>) {
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, b, b, -1.0, aki, b, 1.0, aii, b);
  } else {
    cblas_ssyrk(CblasColMajor, CblasUpper, CblasTrans, b, b, -1.0f, aki, b, 1.0f, aii, b);
  }
}

/// A_ji -= A_kj^T A_ki.
template <real T>
void gemm(const T* akj, const T* aki, T* aji, int b) {
  if constexpr (std::same_as<T, double>) {
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, b, b, b, -1.0, akj, b, aki, b, 1.0, aji, b);
  } else {
    cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, b, b, b, -1.0f, akj, b, aki, b, 1.0f, aji, b);
  }
}

/// Floating-point operations of a Cholesky factorisation of order n.
inline double flops(std::int64_t n) {
  const auto x = static_cast<double>(n);
  return x * x * x / 3.0 + x * x / 2.0 + x / 6.0;
}

/// The upper tiles of an n x n matrix (n = nt * b) distributed by tile columns over the ranks
/// of `comm`, cyclically. Collective construction.
template <real T>
class tiles {
 public:
  tiles(int nt, int b, MPI_Comm comm) : m_nt(nt), m_b(b), m_comm(comm) {
    MPI_Comm_rank(comm, &m_rank);
    MPI_Comm_size(comm, &m_size);
    const std::int64_t columns = (nt - m_rank + m_size - 1) / m_size;  // tile columns i with i % P == rank
    const auto bytes =
        static_cast<MPI_Aint>(columns * nt * tile_elements() * static_cast<std::int64_t>(sizeof(T)));
    MPI_Win_allocate(bytes, sizeof(T), MPI_INFO_NULL, comm, &m_base, &m_window);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, m_window);  // passive target: fetches at any time
  }
  tiles(const tiles&) = delete;
  tiles& operator=(const tiles&) = delete;
  ~tiles() {
    MPI_Win_unlock_all(m_window);
    MPI_Win_free(&m_window);
  }

  [[nodiscard]] int tiles_per_side() const noexcept { return m_nt; }
  [[nodiscard]] int tile_size() const noexcept { return m_b; }
  [[nodiscard]] std::int64_t order() const noexcept { return static_cast<std::int64_t>(m_nt) * m_b; }
  [[nodiscard]] std::int64_t tile_elements() const noexcept { return static_cast<std::int64_t>(m_b) * m_b; }
  [[nodiscard]] int owner(std::int64_t i) const noexcept { return static_cast<int>(i % m_size); }
  [[nodiscard]] bool mine(std::int64_t i) const noexcept { return owner(i) == m_rank; }

  /// Tile (k, i) of a tile column this rank owns.
  [[nodiscard]] T* local(int k, int i) const noexcept { return m_base + offset(k, i); }

  /// Copies tile (k, i) from its owner into `to` (a one-sided get, complete on return).
  void fetch(T* to, int k, int i) const {
    MPI_Win_sync(m_window);
    MPI_Get(to, static_cast<int>(tile_elements()), mpi_type<T>(), owner(i), offset(k, i),
            static_cast<int>(tile_elements()), mpi_type<T>(), m_window);
    MPI_Win_flush(owner(i), m_window);
  }

  /// Makes this rank's stores to its tiles visible to other ranks' fetches (after writing a
  /// tile that others fetch).
  void publish() const {
    if (m_size > 1) MPI_Win_sync(m_window);
  }

  /// Fills this rank's tiles (upper triangle) with the test matrix.
  void fill() {
    const std::int64_t n = order();
    for (int i = m_rank; i < m_nt; i += m_size)
      for (int k = 0; k <= i; ++k) {
        T* t = local(k, i);
        for (int c = 0; c < m_b; ++c)
          for (int r = 0; r < m_b; ++r)
            t[c * m_b + r] =
                element<T>(static_cast<std::int64_t>(k) * m_b + r, static_cast<std::int64_t>(i) * m_b + c, n);
      }
  }

  /// ||A - U^T U||_F / ||A||_F on rank 0 (collective: rank 0 gathers U), in double precision.
  [[nodiscard]] double residual() const {
    const std::int64_t n = order();
    std::vector<double> u;
    if (m_rank == 0) u.assign(static_cast<std::size_t>(n * n), 0.0);
    std::vector<T> column(static_cast<std::size_t>(m_nt * tile_elements()));
    for (int i = 0; i < m_nt; ++i) {
      if (mine(i) && m_rank != 0)
        MPI_Send(local(0, i), static_cast<int>(column.size()), mpi_type<T>(), 0, i, m_comm);
      if (m_rank != 0) continue;
      const T* src = local(0, i);
      if (!mine(i)) {
        MPI_Recv(column.data(), static_cast<int>(column.size()), mpi_type<T>(), owner(i), i, m_comm,
                 MPI_STATUS_IGNORE);
        src = column.data();
      }
      for (int k = 0; k <= i; ++k)
        for (int c = 0; c < m_b; ++c)
          for (int r = 0; r < m_b; ++r) {
            const std::int64_t row = static_cast<std::int64_t>(k) * m_b + r,
                               col = static_cast<std::int64_t>(i) * m_b + c;
            if (row <= col) u[static_cast<std::size_t>(col * n + row)] = src[k * tile_elements() + c * m_b + r];
          }
    }
    double result = 0.0;
    if (m_rank == 0) {
      std::vector<double> product(static_cast<std::size_t>(n * n), 0.0);  // upper triangle of U^T U
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, static_cast<int>(n), static_cast<int>(n), 1.0, u.data(),
                  static_cast<int>(n), 0.0, product.data(), static_cast<int>(n));
      double diff = 0.0, norm = 0.0;
      for (std::int64_t c = 0; c < n; ++c)
        for (std::int64_t r = 0; r <= c; ++r) {
          const double a = element<double>(r, c, n), w = r == c ? 1.0 : 2.0;  // both triangles
          const double d = a - product[static_cast<std::size_t>(c * n + r)];
          diff += w * d * d;
          norm += w * a * a;
        }
      result = std::sqrt(diff / norm);
    }
    MPI_Bcast(&result, 1, MPI_DOUBLE, 0, m_comm);
    return result;
  }

 private:
  [[nodiscard]] MPI_Aint offset(int k, int i) const noexcept {
    return static_cast<MPI_Aint>((static_cast<std::int64_t>(i / m_size) * m_nt + k) * tile_elements());
  }

  int m_nt;
  int m_b;
  MPI_Comm m_comm;
  int m_rank = 0;
  int m_size = 1;
  T* m_base = nullptr;
  MPI_Win m_window = MPI_WIN_NULL;
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_TILES_HPP

// Tiled symmetric positive definite matrices for block Cholesky (A = U^T U, upper storage, as
// the seed's Figures 7-9): tiles of b x b, column-major inside; the tiles of tile column i live
// on rank i % P (dist's cyclic distribution, the seed's `distribute T(cyclic)`), in a dist
// coarray so that other ranks can fetch them with `coarray::get` (the seed's `gmove in`). On
// one rank it is a plain tile matrix. Also the four tile kernels (LAPACKE/CBLAS) and the
// residual check.
#ifndef HETERO_EXAMPLES_CHOLESKY_TILES_HPP
#define HETERO_EXAMPLES_CHOLESKY_TILES_HPP

#include <cblas.h>
#include <lapacke.h>
#include <mpi.h>

#include <hetero/dist/coarray.hpp>
#include <hetero/dist/index_space.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cholesky {

/// The precisions of the example.
template <class T>
concept real = std::same_as<T, float> || std::same_as<T, double>;

/// The MPI datatype of T (the bulk-synchronous MPI benchmark's messages).
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
/// of `comm`, cyclically (dist's `index_space` with a cyclic axis, the seed's `distribute
/// T(cyclic)`). Each rank's columns are its image of a dist `coarray` (every image holds
/// ceil(nt / P) columns of nt tiles), so a rank reads another's tile with `coarray::get`, the
/// seed's `gmove in`. Collective construction.
template <real T>
class tiles {
 public:
  tiles(int nt, int b, MPI_Comm comm)
      : m_nt(nt),
        m_b(b),
        m_columns({nt}, hetero::process_grid<1>({0}, comm), {hetero::distribution::cyclic()}),
        m_storage({m_columns.local_size(0), nt * tile_elements()}, {.label = "cholesky::tiles"}, comm) {}

  [[nodiscard]] int tiles_per_side() const noexcept { return m_nt; }
  [[nodiscard]] int tile_size() const noexcept { return m_b; }
  [[nodiscard]] std::int64_t order() const noexcept { return static_cast<std::int64_t>(m_nt) * m_b; }
  [[nodiscard]] std::int64_t tile_elements() const noexcept { return static_cast<std::int64_t>(m_b) * m_b; }
  [[nodiscard]] int owner(std::int64_t i) const { return m_columns.owner_of({i}); }
  [[nodiscard]] bool mine(std::int64_t i) const { return m_columns.owns({i}); }

  /// Tile (k, i) of a tile column this rank owns.
  [[nodiscard]] T* local(int k, int i) const {
    return m_storage.local().data() + m_columns.to_local({i})[0] * m_storage.extents()[1] + k * tile_elements();
  }

  /// Copies tiles (k, i) to (last - 1, i) from their owner into `to` (a one-sided get,
  /// complete on return).
  void fetch(T* to, int k, int i, int last) const {
    const hetero::slice column = hetero::slice::at(m_columns.to_local({i})[0]),
                        rows{k * tile_elements(), last * tile_elements()};
    m_storage.get(owner(i), {column, rows}, tile_view(to, (last - k) * tile_elements()));
  }
  /// Copies tile (k, i) from its owner into `to`.
  void fetch(T* to, int k, int i) const { fetch(to, k, i, k + 1); }

  /// Fills this rank's tiles (upper triangle) with the test matrix.
  void fill() {
    const std::int64_t n = order();
    for (int i = 0; i < m_nt; ++i) {
      if (!mine(i)) continue;
      for (int k = 0; k <= i; ++k) {
        T* t = local(k, i);
        for (int c = 0; c < m_b; ++c)
          for (int r = 0; r < m_b; ++r)
            t[c * m_b + r] =
                element<T>(static_cast<std::int64_t>(k) * m_b + r, static_cast<std::int64_t>(i) * m_b + c, n);
      }
    }
  }

  /// ||A - U^T U||_F / ||A||_F on rank 0 (collective: rank 0 gets U's columns), in double
  /// precision.
  [[nodiscard]] double residual() const {
    double result = 0.0;
    if (m_storage.this_image() == 0) result = residual_on_rank0();
    MPI_Bcast(&result, 1, MPI_DOUBLE, 0, m_storage.comm());
    return result;
  }

 private:
  using tile_view_type = Kokkos::View<T**, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static tile_view_type tile_view(T* to, std::int64_t elements) { return tile_view_type(to, 1, elements); }

  [[nodiscard]] double residual_on_rank0() const {
    const std::int64_t n = order();
    std::vector<double> u(static_cast<std::size_t>(n * n), 0.0);
    std::vector<T> column(static_cast<std::size_t>(m_nt * tile_elements()));
    for (int i = 0; i < m_nt; ++i) {
      const T* src = mine(i) ? local(0, i) : column.data();
      if (!mine(i)) fetch(column.data(), 0, i, m_nt);
      for (int k = 0; k <= i; ++k)
        for (int c = 0; c < m_b; ++c)
          for (int r = 0; r < m_b; ++r) {
            const std::int64_t row = static_cast<std::int64_t>(k) * m_b + r,
                               col = static_cast<std::int64_t>(i) * m_b + c;
            if (row <= col) u[static_cast<std::size_t>(col * n + row)] = src[k * tile_elements() + c * m_b + r];
          }
    }
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
    return std::sqrt(diff / norm);
  }

  int m_nt;
  int m_b;
  hetero::index_space<1> m_columns;  // tile column i on rank i % P
  hetero::coarray<T, 2> m_storage;   // per rank: [local column][tile row k, column-major b x b]
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_TILES_HPP

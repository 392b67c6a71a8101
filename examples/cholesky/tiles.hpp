// Tiled symmetric positive definite matrices for block Cholesky (A = L L^T, lower storage):
// tiles of b x b, column-major inside; the tiles of tile row i live on rank i % P (distarray's
// cyclic distribution, XcalableMP's `distribute T(cyclic)`; the XcalableMP version stores the transpose, tile
// columns of U = L^T), in a distarray coarray so that other ranks can fetch them with
// `coarray::get` (XcalableMP's `gmove in`). On one rank it is a plain tile matrix. The tiles of a
// row are side by side in memory, so tiles (i, k) .. (i, k + w - 1) form one b x w*b
// column-major matrix: the update kernels below take several of them at once. Also the four
// tile kernels (LAPACKE/CBLAS) and the residual check.
#ifndef HETERO_EXAMPLES_CHOLESKY_TILES_HPP
#define HETERO_EXAMPLES_CHOLESKY_TILES_HPP

#include <cblas.h>
#include <lapacke.h>

#include <hetero/comm/communicator.hpp>
#include <hetero/distarray/coarray.hpp>
#include <hetero/distarray/index_space.hpp>

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
/// ones. Its output tile then stays in cache for all of them (docs/task.md measures 4 against
/// 1).
inline constexpr int update_width = 4;

/// A `task_options::window` that holds every task of the factorisation of `nt` x `nt` tiles
/// (fewer than nt^2 (nt / width + 2): updates, diagonal and panel tasks, fetches), so that the
/// whole graph is declared before the workers catch up with the declaration, as StarPU submits
/// its whole graph. With the default window (4096 tasks) a graph of N = 8192 (64 x 64 tiles of
/// 128) is declared in step with its execution, a window's length ahead of it, which measured
/// slower (docs/task.md).
inline std::size_t whole_graph_window(int nt, int width = update_width) {
  const auto n = static_cast<std::size_t>(nt);
  return std::max<std::size_t>(n * n * (n / static_cast<std::size_t>(width) + 2), 1);
}

// --- the four tile kernels (column-major b x b tiles, lower storage) ----------------------

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

/// The lower tiles of an n x n matrix (n = nt * b) distributed by tile rows over the ranks of
/// `comm`, cyclically (distarray's `index_space` with a cyclic axis, XcalableMP's
/// `distribute T(cyclic)`). Each rank's rows are its image of a `coarray` (every image holds
/// ceil(nt / P) rows of nt tiles), so a rank reads another's tiles with `coarray::get`, XcalableMP's
/// `gmove in`. Collective construction.
template <real T>
class tiles {
 public:
  tiles(int nt, int b, const hetero::communicator& comm)
      : m_nt(nt),
        m_b(b),
        m_rows({nt}, hetero::process_grid<1>({0}, comm), {hetero::distribution::cyclic()}),
        m_storage({m_rows.local_size(0), nt * tile_elements()}, {.label = "cholesky::tiles"}, comm) {}

  /// The ranks the tiles are distributed over.
  [[nodiscard]] const hetero::communicator& comm() const noexcept { return m_rows.grid().comm(); }

  [[nodiscard]] int tiles_per_side() const noexcept { return m_nt; }
  [[nodiscard]] int tile_size() const noexcept { return m_b; }
  [[nodiscard]] std::int64_t order() const noexcept { return static_cast<std::int64_t>(m_nt) * m_b; }
  [[nodiscard]] std::int64_t tile_elements() const noexcept { return static_cast<std::int64_t>(m_b) * m_b; }
  [[nodiscard]] int owner(std::int64_t i) const { return m_rows.owner_of({i}); }
  [[nodiscard]] bool mine(std::int64_t i) const { return m_rows.owns({i}); }

  /// Tile (i, k) of a tile row this rank owns; tiles (i, k + 1), ... follow it.
  [[nodiscard]] T* local(int i, int k) const {
    return m_storage.local().data() + m_rows.to_local({i})[0] * m_storage.extents()[1] + k * tile_elements();
  }

  /// Copies tiles (i, k) to (i, last - 1) from their owner into `to`, side by side (a
  /// one-sided get, complete on return).
  void fetch(T* to, int i, int k, int last) const {
    const hetero::slice row = hetero::slice::at(m_rows.to_local({i})[0]),
                        columns{k * tile_elements(), last * tile_elements()};
    m_storage.get(owner(i), {row, columns}, tile_view(to, (last - k) * tile_elements()));
  }
  /// Copies tile (i, k) from its owner into `to`.
  void fetch(T* to, int i, int k) const { fetch(to, i, k, k + 1); }

  /// Fills this rank's tiles (lower triangle) with the test matrix.
  void fill() {
    const std::int64_t n = order();
    for (int i = 0; i < m_nt; ++i) {
      if (!mine(i)) continue;
      for (int k = 0; k <= i; ++k) {
        T* t = local(i, k);
        for (int c = 0; c < m_b; ++c)
          for (int r = 0; r < m_b; ++r)
            t[c * m_b + r] =
                element<T>(static_cast<std::int64_t>(i) * m_b + r, static_cast<std::int64_t>(k) * m_b + c, n);
      }
    }
  }

  /// ||A - L L^T||_F / ||A||_F on rank 0 (collective: rank 0 gets L's rows), in double
  /// precision.
  [[nodiscard]] double residual() const {
    double result = 0.0;
    if (m_storage.this_image() == 0) result = residual_on_rank0();
    comm().broadcast(hetero::send_recv_buf(result), hetero::root(0));
    return result;
  }

 private:
  using tile_view_type = Kokkos::View<T**, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static tile_view_type tile_view(T* to, std::int64_t elements) { return tile_view_type(to, 1, elements); }

  [[nodiscard]] double residual_on_rank0() const {
    const std::int64_t n = order();
    std::vector<double> l(static_cast<std::size_t>(n * n), 0.0);
    std::vector<T> row(static_cast<std::size_t>(m_nt * tile_elements()));
    for (int i = 0; i < m_nt; ++i) {
      const T* src = mine(i) ? local(i, 0) : row.data();
      if (!mine(i)) fetch(row.data(), i, 0, i + 1);
      for (int k = 0; k <= i; ++k)
        for (int c = 0; c < m_b; ++c)
          for (int r = 0; r < m_b; ++r) {
            const std::int64_t gr = static_cast<std::int64_t>(i) * m_b + r,
                               gc = static_cast<std::int64_t>(k) * m_b + c;
            if (gr >= gc) l[static_cast<std::size_t>(gc * n + gr)] = src[k * tile_elements() + c * m_b + r];
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

  int m_nt;
  int m_b;
  hetero::index_space<1> m_rows;    // tile row i on rank i % P
  hetero::coarray<T, 2> m_storage;  // per rank: [local row][tile column k, column-major b x b]
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_TILES_HPP

// Tiled symmetric positive definite matrices for block Cholesky (A = L L^T, lower storage):
// tiles of b x b, column-major inside; the tiles of tile row i live on rank i % P (distarray's
// cyclic distribution, XcalableMP's `distribute T(cyclic)`; the XcalableMP version stores the transpose, tile
// columns of U = L^T), in a distarray coarray so that other ranks can fetch them with
// `coarray::get` (XcalableMP's `gmove in`). On one rank it is a plain tile matrix. The tiles of a
// row are side by side in memory, so tiles (i, k) .. (i, k + w - 1) form one b x w*b
// column-major matrix: the update kernels (kernels.hpp) take several of them at once.
#ifndef HETERO_EXAMPLES_CHOLESKY_TILES_HPP
#define HETERO_EXAMPLES_CHOLESKY_TILES_HPP

#include <hetero/comm/communicator.hpp>
#include <hetero/distarray/coarray.hpp>
#include <hetero/distarray/index_space.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels.hpp"

namespace cholesky {

/// One b x b tile, column-major, in memory the View does not own.
template <real T>
using tile_view =
    Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// A `task_options::window` that holds every task of the factorisation of `nt` x `nt` tiles
/// (fewer than nt^2 (nt / width + 2): updates, diagonal and panel tasks, fetches), so that the
/// whole graph is declared before the workers catch up with the declaration, as StarPU submits
/// its whole graph. With the default window (4096 tasks) a graph of N = 8192 (64 x 64 tiles of
/// 128) is declared in step with its execution, a window's length ahead of it, which measured
/// slower (docs/results/task.md).
inline std::size_t whole_graph_window(int nt, int width = update_width) {
  const auto n = static_cast<std::size_t>(nt);
  return std::max<std::size_t>(n * n * (n / static_cast<std::size_t>(width) + 2), 1);
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
        m_storage({m_rows.local_size(0), nt * tile_elements()}, comm, {.label = "cholesky::tiles"}) {}

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
  /// The same tile as a b x b View (column-major, the memory of `local(i, k)`).
  [[nodiscard]] tile_view<T> tile(std::int64_t i, std::int64_t k) const {
    return tile_view<T>(local(static_cast<int>(i), static_cast<int>(k)), m_b, m_b);
  }

  /// Tile (i, k) in its owner's memory as this rank maps it, where the two share their node's
  /// memory (`coarray::local(image)`); an empty View otherwise. For `task_graph::tiles`'
  /// `peer_view_of`: a rank reading such a tile then reads it there, in place.
  [[nodiscard]] tile_view<T> peer_tile(std::int64_t i, std::int64_t k) const {
    const auto image = m_storage.local(owner(i));
    if (!image.data()) return {};
    return tile_view<T>(&image(m_rows.to_local({i})[0], k * tile_elements()), m_b, m_b);
  }

  /// Copies tiles (i, k) to (i, last - 1) from their owner into `to`, side by side (a
  /// one-sided get, complete on return).
  void fetch(T* to, int i, int k, int last) const {
    const hetero::slice row = hetero::slice::at(m_rows.to_local({i})[0]),
                        columns{k * tile_elements(), last * tile_elements()};
    m_storage.get(owner(i), {row, columns}, row_view(to, (last - k) * tile_elements()));
  }
  /// Copies tile (i, k) from its owner into `to`.
  void fetch(T* to, int i, int k) const { fetch(to, i, k, k + 1); }

  /// Fills this rank's tiles (lower triangle) with the test matrix.
  void fill() {
    for (int i = 0; i < m_nt; ++i)
      if (mine(i))
        for (int k = 0; k <= i; ++k) fill_tile(local(i, k), i, k, m_b, order());
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
  static tile_view_type row_view(T* to, std::int64_t elements) { return tile_view_type(to, 1, elements); }

  [[nodiscard]] double residual_on_rank0() const {
    std::vector<T> row(static_cast<std::size_t>(m_nt * tile_elements()));
    return cholesky::residual<T>(m_nt, m_b, [&](int i) -> const T* {
      if (mine(i)) return local(i, 0);
      fetch(row.data(), i, 0, i + 1);
      return row.data();
    });
  }

  int m_nt;
  int m_b;
  hetero::index_space<1> m_rows;                       // tile row i on rank i % P
  hetero::coarray<T, 2, Kokkos::HostSpace> m_storage;  // per rank: [local row][tile column k, column-major b x b]
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_TILES_HPP

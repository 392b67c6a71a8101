// Block Cholesky on task data: the serial left-looking version (cholesky_serial.hpp) with each
// call made a task that names the tiles it reads and updates. The graph runs each task on the
// owner of the tile it updates, moves tiles to the ranks that read them (each version once per
// rank), and to the GPU and back for device tiles; there is no copy buffer and no event to
// keep. Tiles run on the host, on the device, or where the graph finds them fastest.
#ifndef HETERO_EXAMPLES_CHOLESKY_DATA_HPP
#define HETERO_EXAMPLES_CHOLESKY_DATA_HPP

#include <hetero/task.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "task_kernels.hpp"
#include "tiles.hpp"

namespace cholesky {

/// Where the tile kernels run.
enum class tiles_on { host, device, either };

template <real T, class Space = Kokkos::DefaultExecutionSpace>
class data_factorization {
 public:
  /// Collective: registers the tiles of `a` (`tiles<T>`, or anything with its `tiles_per_side`,
  /// `tile_size`, `owner(i)`, `tile(i, k)` and `peer_tile(i, k)`) with `graph`. A rank reading a
  /// tile of a rank of its node reads it in the owner's memory (`peer_tile`).
  template <class Tiles>
  data_factorization(hetero::task_graph<Space>& graph, const Tiles& a, tiles_on where = tiles_on::host,
                     int width = update_width)
      : m_graph(graph),
        m_nt(a.tiles_per_side()),
        m_width(width),
        m_where(where),
        m_l(graph.tiles(
            "L", {m_nt, m_nt}, {a.tile_size(), a.tile_size()},
            [&a](std::int64_t i, std::int64_t) { return a.owner(i); },
            [&a](std::int64_t i, std::int64_t k) { return a.tile(i, k); },
            [&a](std::int64_t i, std::int64_t k) { return a.peer_tile(i, k); })) {}

  /// Declares the factorisation's tasks (run them with wait()).
  void declare() {
    for (int j = 0; j < m_nt; ++j) {
      for (int k = 0; k < j; k += m_width)
        spawn("syrk", syrk_task{}, hetero::reads(row(j, k, j)), hetero::updates(m_l(j, j)));
      spawn("potrf", potrf_task{}, hetero::updates(m_l(j, j)));
      for (int i = j + 1; i < m_nt; ++i) {
        for (int k = 0; k < j; k += m_width)
          spawn("gemm", gemm_task{}, hetero::reads(row(i, k, j)), hetero::reads(row(j, k, j)),
                hetero::updates(m_l(i, j)));
        spawn("trsm", trsm_task{}, hetero::reads(m_l(j, j)), hetero::updates(m_l(i, j)));
      }
    }
  }

 private:
  // Tiles (i, k) .. (i, min(k + width, end) - 1): one update reads them together.
  [[nodiscard]] std::vector<hetero::task_data<tile_view<T>>> row(int i, int k, int end) const {
    std::vector<hetero::task_data<tile_view<T>>> r;
    for (int s = k; s < std::min(k + m_width, end); ++s) r.push_back(m_l(i, s));
    return r;
  }

  // Every task priority(1): the workers take ready tasks in declaration order, the serial order
  // (docs/results/task.md measures it against work stealing).
  template <class Kernel, class... Clauses>
  void spawn(const char* label, Kernel kernel, const Clauses&... clauses) {
    if (m_where == tiles_on::host) m_graph.spawn(label, hetero::priority(1), clauses..., kernel);
    if (m_where == tiles_on::device)
      m_graph.spawn(label, hetero::priority(1), hetero::device(), clauses..., kernel);
    if (m_where == tiles_on::either)
      m_graph.spawn(label, hetero::priority(1), clauses..., hetero::host_or_device(kernel, kernel));
  }

  hetero::task_graph<Space>& m_graph;
  int m_nt;
  int m_width;
  tiles_on m_where;
  hetero::tile_array<tile_view<T>, 2> m_l;
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_DATA_HPP

// Block Cholesky with hetero tasklets across ranks, the shape of the seed's Figure 9: tile
// columns cyclic over the ranks (tiles.hpp, dist's cyclic index_space), one remote-capable
// event per tile, and the tiles a rank needs from other ranks fetched by a task (coarray::get,
// the seed's `gmove in`) once their writer notified it.
#ifndef HETERO_EXAMPLES_CHOLESKY_TASKLET_HPP
#define HETERO_EXAMPLES_CHOLESKY_TASKLET_HPP

#include <hetero/task.hpp>

#include <vector>

#include "tiles.hpp"

namespace cholesky {

template <real T>
class tasklet_factorization {
 public:
  /// Collective: creates the events on every rank. With `critical_path_first`, the tasks of
  /// the critical path (potrf, trsm, and the updates of the next panel) get `priority(1)`.
  tasklet_factorization(hetero::task_graph<>& graph, tiles<T>& a, bool critical_path_first = true)
      : m_critical_path_first(critical_path_first),
        m_graph(graph),
        m_a(a),
        m_nt(a.tiles_per_side()),
        m_b(a.tile_size()),
        m_ea(graph.remote_events("EA", m_nt, m_nt)),  // the seed's xmp_event_t EA[nt][nt]:[*]
        m_ec(graph.events("EC", 2, m_nt)),            // fetched copies, two steps deep (the seed's B, C)
        m_copies(static_cast<std::size_t>(2 * m_nt * a.tile_elements())) {}

  /// Declares the factorisation's tasks (run them with wait(), or record them once).
  void declare() {
    const auto owner = [this](std::int64_t i) { return m_a.owner(i); };
    for (int k = 0; k < m_nt; ++k) {
      m_graph.spawn("potrf", hetero::on(owner(k)), critical(true),
                    hetero::out(m_ea(k, k)).to(hetero::owners(owner, k + 1, m_nt)),
                    [this, k] { potrf(m_a.local(k, k), m_b); });
      fetch(k, k);

      for (int i = k + 1; i < m_nt; ++i) {
        m_graph.spawn("trsm", hetero::on(owner(i)), critical(true), hetero::in(event(k, k, i)),
                      hetero::out(m_ea(k, i)).to(hetero::owners(owner, i + 1, m_nt)),
                      [this, k, i] { trsm(input(k, k, i), m_a.local(k, i), m_b); });
      }
      for (int i = k + 1; i < m_nt; ++i) {
        fetch(k, i);
        for (int j = k + 1; j < i; ++j) {
          m_graph.spawn("gemm", hetero::on(owner(i)), critical(j == k + 1), hetero::in(event(k, j, i), m_ea(k, i)),
                        hetero::out(m_ea(j, i)),
                        [this, k, i, j] { gemm(input(k, j, i), m_a.local(k, i), m_a.local(j, i), m_b); });
        }
        m_graph.spawn("syrk", hetero::on(owner(i)), critical(i == k + 1), hetero::in(m_ea(k, i)),
                      hetero::out(m_ea(i, i)), [this, k, i] { syrk(m_a.local(k, i), m_a.local(i, i), m_b); });
      }
    }
  }

 private:
  [[nodiscard]] hetero::priority_clause critical(bool on_path) const {
    return hetero::priority(on_path && m_critical_path_first ? 1 : 0);
  }
  // Tile (k, j) as the rank owning column `runner` reads it: its own tile, or its fetched copy.
  [[nodiscard]] bool own(int j, int runner) const { return m_a.owner(j) == m_a.owner(runner); }
  [[nodiscard]] hetero::event event(int k, int j, int runner) const {
    return own(j, runner) ? m_ea(k, j) : m_ec(k % 2, j);
  }
  [[nodiscard]] const T* input(int k, int j, int runner) const {
    return own(j, runner) ? m_a.local(k, j) : copy(k, j);
  }
  [[nodiscard]] T* copy(int k, int j) const {
    return m_copies.data() + ((k % 2) * m_nt + j) * m_a.tile_elements();
  }

  // The ranks owning columns after j fetch tile (k, j) once its writer notified them.
  void fetch(int k, int j) {
    const auto owner = [this](std::int64_t i) { return m_a.owner(i); };
    m_graph.spawn("fetch", hetero::on(hetero::owners(owner, j + 1, m_nt).without(owner(j), m_graph.size())),
                  hetero::in(m_ea(k, j)), hetero::out(m_ec(k % 2, j)),
                  [this, k, j] { m_a.fetch(copy(k, j), k, j); });
  }

  bool m_critical_path_first;
  hetero::task_graph<>& m_graph;
  tiles<T>& m_a;
  int m_nt;
  int m_b;
  hetero::event_array<2> m_ea;
  hetero::event_array<2> m_ec;
  mutable std::vector<T> m_copies;  // written by fetch tasks
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_TASKLET_HPP

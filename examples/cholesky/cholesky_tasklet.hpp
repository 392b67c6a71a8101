// Block Cholesky with hetero tasklets across ranks: the serial left-looking version
// (cholesky_serial.hpp) with each call made a tasklet, in the manner of Figure 9 of the XcalableMP tasklet paper:
// tile rows cyclic over the ranks (tiles.hpp, distarray's cyclic index_space), one remote-capable
// event per tile, and the tiles a rank needs from other ranks fetched by a task (coarray::get,
// XcalableMP's `gmove in`) once their writer notified it.
#ifndef HETERO_EXAMPLES_CHOLESKY_TASKLET_HPP
#define HETERO_EXAMPLES_CHOLESKY_TASKLET_HPP

#include <hetero/task.hpp>

#include <algorithm>
#include <vector>

#include "tiles.hpp"

namespace cholesky {

template <real T>
class tasklet_factorization {
 public:
  /// Collective: creates the events on every rank. With `in_order`, every task gets
  /// `priority(1)`: the workers then take the ready tasks in declaration order, the serial
  /// order, which runs the factorisation column after column (docs/results/task.md measures it against
  /// the default work stealing).
  tasklet_factorization(hetero::task_graph<>& graph, tiles<T>& a, bool in_order = true, int width = update_width)
      : m_order(hetero::priority(in_order ? 1 : 0)),
        m_graph(graph),
        m_a(a),
        m_nt(a.tiles_per_side()),
        m_b(a.tile_size()),
        m_width(width),
        m_ea(graph.remote_events("EA", m_nt, m_nt)),        // XcalableMP's xmp_event_t EA[nt][nt]:[*]
        m_ec(graph.events("EC", copy_rows, chunks() + 1)),  // fetched copies (the paper's B, C)
        m_copies(graph.size() > 1 ? static_cast<std::size_t>(copy_rows * (m_nt + 1) * a.tile_elements()) : 0) {}

  /// Declares the factorisation's tasks (run them with wait(), or record them once).
  void declare() {
    const auto owner = [this](std::int64_t i) { return m_a.owner(i); };
    for (int j = 0; j < m_nt; ++j) {
      for (int k = 0; k < j; k += m_width) fetch(j, k, std::min(m_width, j - k));
      for (int k = 0; k < j; k += m_width) {
        const int w = std::min(m_width, j - k);
        m_graph.spawn("syrk", hetero::on(owner(j)), m_order, hetero::in(tile_events(j, k, w)),
                      hetero::out(m_ea(j, j)),
                      [this, j, k, w] { syrk(m_a.local(j, k), m_a.local(j, j), m_b, w); });
      }
      m_graph.spawn("potrf", hetero::on(owner(j)), m_order,
                    hetero::out(m_ea(j, j)).to(hetero::owners(owner, j + 1, m_nt)),
                    [this, j] { potrf(m_a.local(j, j), m_b); });
      fetch(j, j, 1);

      for (int i = j + 1; i < m_nt; ++i) {
        for (int k = 0; k < j; k += m_width) {
          const int w = std::min(m_width, j - k);
          m_graph.spawn("gemm", hetero::on(owner(i)), m_order, hetero::in(update_events(i, j, k, w)),
                        hetero::out(m_ea(i, j)),
                        [this, i, j, k, w] { gemm(m_a.local(i, k), input(j, k, i), m_a.local(i, j), m_b, w); });
        }
        m_graph.spawn("trsm", hetero::on(owner(i)), m_order, hetero::in(event(j, j, i)),
                      hetero::out(m_ea(i, j)).to(hetero::owners(owner, i + 1, m_nt)),
                      [this, i, j] { trsm(input(j, j, i), m_a.local(i, j), m_b); });
      }
    }
  }

 private:
  static constexpr int copy_rows = 4;  // rows of other ranks held at a time (a ring)

  // Tiles (j, k) .. (j, k + w - 1) as the rank owning row `runner` reads them: its own tiles,
  // or its fetched copy of them.
  [[nodiscard]] bool own(int j, int runner) const { return m_a.owner(j) == m_a.owner(runner); }
  [[nodiscard]] hetero::event event(int j, int k, int runner) const {
    return own(j, runner) ? m_ea(j, k) : copy_event(j, k);
  }
  // The copy of a chunk of row j (k a multiple of the width) or of its diagonal tile (k = j).
  [[nodiscard]] hetero::event copy_event(int j, int k) const {
    return m_ec(j % copy_rows, k == j ? chunks() : k / m_width);
  }
  [[nodiscard]] const T* input(int j, int k, int runner) const {
    return own(j, runner) ? m_a.local(j, k) : copy(j, k);
  }
  // Row j's copy: tiles 0 .. j - 1 at their own positions, the diagonal tile after all of them
  // (a later row's chunks reuse the positions below j, with their own events).
  [[nodiscard]] T* copy(int j, int k) const {
    return m_copies.data() + ((j % copy_rows) * (m_nt + 1) + (k == j ? m_nt : k)) * m_a.tile_elements();
  }
  [[nodiscard]] int chunks() const { return (m_nt + m_width - 1) / m_width; }

  [[nodiscard]] std::vector<hetero::event> tile_events(int i, int k, int w) const {
    std::vector<hetero::event> events;
    for (int s = k; s < k + w; ++s) events.push_back(m_ea(i, s));
    return events;
  }
  // What the update of tile (i, j) by tile columns k .. k + w - 1 reads: row i's tiles (its
  // own) and row j's (its own, or one fetched copy).
  [[nodiscard]] std::vector<hetero::event> update_events(int i, int j, int k, int w) const {
    std::vector<hetero::event> events = tile_events(i, k, w);
    if (own(j, i)) {
      const std::vector<hetero::event> row_j = tile_events(j, k, w);
      events.insert(events.end(), row_j.begin(), row_j.end());
    } else {
      events.push_back(copy_event(j, k));
    }
    return events;
  }

  // The ranks owning rows after j fetch tiles (j, k) .. (j, k + w - 1) once their writers
  // notified them.
  void fetch(int j, int k, int w) {
    const auto owner = [this](std::int64_t i) { return m_a.owner(i); };
    m_graph.spawn("fetch", hetero::on(hetero::owners(owner, j + 1, m_nt).without(owner(j), m_graph.size())),
                  m_order, hetero::in(tile_events(j, k, w)), hetero::out(copy_event(j, k)),
                  [this, j, k, w] { m_a.fetch(copy(j, k), j, k, k + w); });
  }

  hetero::priority_clause m_order;
  hetero::task_graph<>& m_graph;
  tiles<T>& m_a;
  int m_nt;
  int m_b;
  int m_width;
  hetero::event_array<2> m_ea;
  hetero::event_array<2> m_ec;
  mutable std::vector<T> m_copies;  // written by fetch tasks
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_TASKLET_HPP

/// @file
/// Nodes of tasks declared and run at once, recycled: the declaring thread takes nodes, the
/// threads that finish them give them back through a lock-free stack. At most `window` nodes
/// are in use, which is the bounded insertion window: when all are, the declaring thread runs
/// tasks until one is given back. A node declared with others that wait for it (a tile move's
/// start and done nodes; a task and the receives of its notifications to its own rank) waits
/// for room for all (`acquire(false, room)`); where the window is smaller than such a group,
/// the first takes one node in it and the others come outside it. Nodes taken outside the
/// window do not count. An owner's moves of a tile that another rank reads in place are taken
/// outside it too: they wait for that rank's release, perhaps until its `wait()`, and the
/// window must not fill with them.
#ifndef HETERO_TASK_DETAIL_NODE_POOL_HPP
#define HETERO_TASK_DETAIL_NODE_POOL_HPP

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "hetero/task/detail/node.hpp"

namespace hetero::detail {

/// A bounded pool of nodes. `acquire`, `reclaim` and `for_each_live` by the declaring thread;
/// `release` by any thread.
class node_pool {
 public:
  explicit node_pool(std::size_t window) : m_window(window) {}
  node_pool(const node_pool&) = delete;
  node_pool& operator=(const node_pool&) = delete;

  ~node_pool() {
    for (auto& chunk : m_chunks)
      for (std::size_t i = 0; i < chunk.size; ++i) chunk.nodes[i].drop_body();
  }

  /// A fresh node (new incarnation, no successors, no body), or nullptr unless `room` nodes fit
  /// in the window (this one and those taken with it before any is released; at most
  /// `window()`); one `outside_window` is never refused and does not count.
  node* acquire(bool outside_window = false, std::size_t room = 1) {
    if (m_free.empty() || (!outside_window && !fits(room))) reclaim();
    if (!outside_window && !fits(room)) return nullptr;
    if (m_free.empty()) grow();
    node* n = m_free.back();
    m_free.pop_back();
    ++n->serial;
    n->flags.store(0, std::memory_order_relaxed);
    n->pending.store(node::declaring, std::memory_order_relaxed);
    n->successor_count = 0;
    n->more_successors.clear();
    n->extra.clear();
    n->next_finished = nullptr;
    n->device = -1;
    n->notifies = false;
    n->urgent = false;
    n->priority = 0;
    n->live = true;
    n->outside_window = outside_window;
    ++m_in_use;
    if (outside_window) ++m_outside;
    return n;
  }

  /// Gives back finished nodes `first` ... `last` (linked by `next_finished`; any thread).
  void release_list(node* first, node* last) noexcept {
    node* head = m_finished.load(std::memory_order_relaxed);
    do {
      last->next_finished = head;
    } while (!m_finished.compare_exchange_weak(head, first, std::memory_order_seq_cst, std::memory_order_relaxed));
  }

  /// Gives back a finished node (declaring thread).
  void give_back(node* n) {
    n->live = false;
    --m_in_use;
    if (n->outside_window) --m_outside;
    m_free.push_back(n);
  }

  /// Whether `room` nodes can be taken in the window or one was given back since the last `reclaim` (declaring
  /// thread; seq_cst, so that a thread that announced it waits for one and then checks cannot miss the release).
  [[nodiscard]] bool has_released(std::size_t room = 1) const noexcept {
    return (!m_free.empty() && fits(room)) || m_finished.load(std::memory_order_seq_cst) != nullptr;
  }

  /// Moves the nodes given back since the last call to the free list.
  void reclaim() {
    node* n = m_finished.exchange(nullptr, std::memory_order_acquire);
    while (n) {
      node* next = n->next_finished;
      n->live = false;
      --m_in_use;
      if (n->outside_window) --m_outside;
      m_free.push_back(n);
      n = next;
    }
  }

  /// Nodes taken and not yet reclaimed.
  [[nodiscard]] std::size_t in_use() const noexcept { return m_in_use; }
  /// The most nodes in use in the window (the pool grows past it by the nodes taken outside it
  /// at once, and keeps them).
  [[nodiscard]] std::size_t window() const noexcept { return m_window; }
  /// The room to ask for a node declared with `group - 1` others that wait for its release: the
  /// whole group where the window can hold it, else one place (the others then come outside it).
  [[nodiscard]] std::size_t room_for(std::size_t group) const noexcept { return group <= m_window ? group : 1; }

  /// Calls `f(node&)` for every node taken and not given back (declaring thread).
  template <class F>
  void for_each_live(F&& f) {
    for (auto& chunk : m_chunks)
      for (std::size_t i = 0; i < chunk.size; ++i)
        if (chunk.nodes[i].live) f(chunk.nodes[i]);
  }

 private:
  // Whether `room` more nodes fit in the window beside those in use (those taken outside aside).
  [[nodiscard]] bool fits(std::size_t room) const noexcept { return m_in_use - m_outside + room <= m_window; }

  struct chunk {
    std::unique_ptr<node[]> nodes;
    std::size_t size;
  };

  void grow() {
    const std::size_t size = m_allocated < m_window ? std::min<std::size_t>(std::max<std::size_t>(64, m_allocated),
                                                                            m_window - m_allocated)
                                                    : 64;
    m_chunks.push_back({std::make_unique<node[]>(size), size});
    for (std::size_t i = size; i-- > 0;) m_free.push_back(&m_chunks.back().nodes[i]);
    m_allocated += size;
  }

  std::size_t m_window;
  std::size_t m_allocated = 0;
  std::size_t m_in_use = 0;
  std::size_t m_outside = 0;  // of m_in_use, taken outside the window
  std::vector<chunk> m_chunks;
  std::vector<node*> m_free;
  std::atomic<node*> m_finished{nullptr};
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_NODE_POOL_HPP

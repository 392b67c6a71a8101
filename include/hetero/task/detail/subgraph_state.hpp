/// @file
/// The state of one subgraph: the inner tasks a task body declares, their events and their
/// nodes, allocated here (not from the graph's pool, whose window belongs to the declaring
/// thread). The state is a `node_group` owned by the task whose body declares it: every inner
/// task leaves the group when it finishes, and the last one retires the state and finishes
/// that task, so no worker waits for inner tasks. Retired states are kept per thread and reused
/// (their nodes constructed once).
#ifndef HETERO_TASK_DETAIL_SUBGRAPH_STATE_HPP
#define HETERO_TASK_DETAIL_SUBGRAPH_STATE_HPP

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/task/detail/event_state.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/scheduler.hpp"
#include "hetero/task/detail/tracker.hpp"

namespace hetero::detail {

/// The subgraph whose body the calling thread runs (only that body may declare into it).
inline thread_local const void* t_declaring_subgraph = nullptr;

/// One subgraph: a `node_group` whose owner is the task that declared it.
class subgraph_state : public node_group {
  static constexpr std::size_t first_chunk = 8;
  static constexpr std::size_t largest_chunk = 256;
  // Spare states each thread keeps (with up to `kept_nodes` nodes each): a task declaring a
  // subgraph reuses one instead of allocating and constructing its nodes again.
  static constexpr std::size_t spares = 8;
  static constexpr std::size_t kept_nodes = 256;  // ~80 KB of nodes: at most 640 KB per thread

 public:
  /// A subgraph of `owner`, running on `runner`'s worker `worker`; `graph` is the enclosing
  /// task graph's engine (to name its events in messages), `devices` its device count. Taken
  /// from the calling thread's spares when it has one.
  static subgraph_state* start(scheduler& runner, const void* graph, int devices, int worker, node& owner) {
    auto& mine = spare_states();
    subgraph_state* s = nullptr;
    if (mine.empty()) {
      s = new subgraph_state();
    } else {
      s = mine.back().release();
      mine.pop_back();
    }
    s->m_runner = &runner;
    s->m_graph = graph;
    s->m_devices = devices;
    s->m_worker = worker;
    s->owner = &owner;
    s->outstanding.store(1, std::memory_order_relaxed);  // the body's hold, dropped by end_body
    return s;
  }

  subgraph_state(const subgraph_state&) = delete;
  subgraph_state& operator=(const subgraph_state&) = delete;
  ~subgraph_state() {
    for (auto& chunk : m_chunks)
      for (std::size_t i = 0; i < chunk.size; ++i) chunk.nodes[i].drop_body();
  }

  /// The scheduler running the subgraph, its worker, the enclosing graph and its devices (for a
  /// nested subgraph).
  [[nodiscard]] scheduler& runner() const noexcept { return *m_runner; }
  [[nodiscard]] int worker() const noexcept { return m_worker; }
  [[nodiscard]] const void* graph() const noexcept { return m_graph; }
  [[nodiscard]] int devices() const noexcept { return m_devices; }

  /// Events of this subgraph (`sg.event`, `sg.events`).
  const event_block* make_block(std::string name, std::vector<std::size_t> extents) {
    check_declaring("subgraph::event(s)");
    auto block = event_block::create(std::move(name), std::move(extents), this);
    block->subgraph = true;
    m_blocks.push_back(std::move(block));
    return m_blocks.back().get();
  }

  /// Declares one inner task in program order: `set_body(node&)` stores its body.
  template <class SetBody>
  void declare(const task_spec& spec, SetBody&& set_body) {
    static_assert(std::is_nothrow_invocable_v<SetBody&, node&>,
                  "hetero: set_body runs once the node is taken and counted: it must not throw (prepared_body)");
    check(spec);
    node* n = new_node();
    start_node(*n, spec, ++m_declared);
    std::forward<SetBody>(set_body)(*n);
    int edges = 0;
    const repeated_accesses repeated(spec);
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      if (a.mode == event_access::read) {
        if (repeated(i)) continue;  // a second access of one event in one task adds nothing
        edges += dependency_tracker::read(a.event->live, n, false);
      } else {
        edges += dependency_tracker::write(a.event->live, n, false);
      }
      n->extra.uses.push_back({a.event, a.mode});
    }
    // Counted before it can run: the body's hold keeps the count above 0 until end_body.
    outstanding.fetch_add(1, std::memory_order_relaxed);
    release(n, edges);
  }

  /// The body returned: drops its hold. True when every inner task has finished already; the
  /// state is then freed and the caller finishes the owner itself. False: the last inner task
  /// finishes the owner and frees the state (which the caller must not touch any more).
  bool end_body() noexcept {
    if (outstanding.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
    retire();
    return true;
  }

  /// Throws unless the calling thread runs this subgraph's body.
  void check_declaring(const char* what) const {
    if (t_declaring_subgraph != this)
      raise<invalid_argument>(
          what,
          " called outside the task body that received the subgraph (from one of its inner "
          "tasks, another thread, or after the body returned); declare inner tasks in that "
          "body, and nested ones in the body of an inner task that takes a subgraph of its own");
  }

 private:
  subgraph_state() {
    close = [](node_group& g) noexcept { static_cast<subgraph_state&>(g).retire(); };
  }

  static std::vector<std::unique_ptr<subgraph_state>>& spare_states() {
    thread_local std::vector<std::unique_ptr<subgraph_state>> states;
    return states;
  }

  // Every inner task finished (the calling thread finished the last one, or ran the body that
  // dropped the last hold): the state becomes one of this thread's spares, or is freed.
  void retire() noexcept {
    m_blocks.clear();
    m_declared = 0;
    m_chunk = 0;
    m_in_chunk = 0;
    std::size_t nodes = 0, keep = 0;
    while (keep < m_chunks.size() && nodes + m_chunks[keep].size <= kept_nodes) nodes += m_chunks[keep++].size;
    m_chunks.resize(keep);
    auto& mine = spare_states();
    if (mine.size() >= spares) {
      delete this;
      return;
    }
    try {
      mine.emplace_back(this);
    } catch (...) {  // no room for a spare: free it
      delete this;
    }
  }

  void check(const task_spec& spec) const {
    check_declaring("subgraph::spawn");  // on(...) is refused at compile time (subgraph::spawn)
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const access_spec& a = spec[i];
      const char* clause = a.mode == event_access::read ? "in" : "out";
      check_event(a.event, clause);
      if (a.targets)
        raise<invalid_argument>("subgraph::spawn with out(", a.event->name(), ").to(", a.targets->to_string(),
                                "): inner tasks do not notify other ranks; put out(...).to(...) on the enclosing "
                                "task, whose notifications are sent once every inner task finished");
    }
    if (spec.device) {
      HETERO_EXPECTS(m_devices > 0, "an inner device task in a task_graph without devices");
      HETERO_EXPECTS(spec.pinned >= -1 && spec.pinned < m_devices, "device(", spec.pinned,
                     ") pins an inner task to a device the graph does not have; allowed: -1 (any) or 0 to ",
                     m_devices - 1);
    }
  }

  void check_event(const event_state* e, const char* clause) const {
    if (!e)
      raise<invalid_argument>("subgraph::spawn: ", clause,
                              "(...) names a null hetero::event; create inner events with sg.event(...)");
    if (e->block->owner == this) return;
    const char* whose = e->block->owner == m_graph ? "of the enclosing task_graph"
                        : e->block->subgraph       ? "of another subgraph"
                                                   : "of another task_graph";
    raise<invalid_argument>("subgraph::spawn: ", clause, "(", e->name(), ") names an event ", whose,
                            "; an inner task may name only events of its own subgraph (sg.event, sg.events): the "
                            "enclosing task's in/out clauses order the whole subgraph against the graph");
  }

  // A fresh node (a spare state's nodes finished in an earlier use).
  node* new_node() {
    if (m_chunk < m_chunks.size() && m_in_chunk == m_chunks[m_chunk].size) {
      ++m_chunk;
      m_in_chunk = 0;
    }
    if (m_chunk == m_chunks.size()) {
      const std::size_t size = m_chunks.empty() ? first_chunk : std::min(2 * m_chunks.back().size, largest_chunk);
      m_chunks.push_back({std::unique_ptr<node[]>(new node[size]), size});
    }
    node* n = &m_chunks[m_chunk].nodes[m_in_chunk++];
    ++n->serial;
    n->pending.store(node::declaring, std::memory_order_relaxed);
    n->flags.store(node::grouped_bit, std::memory_order_relaxed);
    n->group = this;
    n->successor_count = 0;
    n->more_successors.clear();
    n->extra.clear();
    n->device = -1;
    n->urgent = false;
    n->priority = 0;
    return n;
  }

  // Drops the declaration bias; the node runs once `waits` predecessors are done.
  void release(node* n, int waits) {
    if (waits == 0) {
      n->pending.store(0, std::memory_order_relaxed);
      m_runner->make_ready(m_worker, n);
      return;
    }
    const std::int32_t bias = node::declaring - waits;
    if (n->pending.fetch_sub(bias, std::memory_order_acq_rel) == bias) m_runner->make_ready(m_worker, n);
  }

  struct chunk {
    std::unique_ptr<node[]> nodes;
    std::size_t size;
  };

  scheduler* m_runner = nullptr;
  const void* m_graph = nullptr;
  int m_devices = 0;
  int m_worker = 0;
  std::uint64_t m_declared = 0;
  std::vector<chunk> m_chunks;
  std::size_t m_chunk = 0;     // the chunk new nodes come from
  std::size_t m_in_chunk = 0;  // nodes of it in use
  std::vector<std::unique_ptr<event_block>> m_blocks;
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_SUBGRAPH_STATE_HPP

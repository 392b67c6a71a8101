/// @file
/// `hetero::task_recording`: a task graph declared once with `task_graph::record` and replayed
/// every time step with `task_graph::replay` (or `run`), without declaring it again.
#ifndef HETERO_TASK_RECORDING_HPP
#define HETERO_TASK_RECORDING_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/task/detail/event_state.hpp"
#include "hetero/task/detail/node.hpp"

namespace hetero {

class composed_recording;

namespace detail {

class graph_engine;

/// The nodes of a recording, with their successor lists fixed at record time. Nodes are kept
/// in chunks, in declaration order (a replay walks them in that order).
struct recorded_plan {
  static constexpr std::size_t chunk_size = 256;

  std::uint64_t id = 0;             ///< the same on every rank (recordings are made collectively)
  const void* owner = nullptr;      ///< the graph that recorded it
  std::vector<node*> roots;         ///< CPU tasks without predecessors on this rank
  std::vector<node*> queued_roots;  ///< device and high-priority tasks without predecessors
  std::vector<node*> receives;      ///< notifications this rank waits for
  std::uint64_t runs = 0;           ///< replays started
  std::size_t tasks = 0;            ///< task bodies this rank runs per replay

  /// The plan's nodes as one group while it runs as a task of a graph (`compose`).
  struct composition_group : node_group {
    std::atomic<bool> running{false};
  };
  composition_group composition;
  bool grouped = false;                  ///< the nodes carry grouped_bit (its last run was composed)
  std::unique_ptr<event_block> order;    ///< written by every composed run: they run one after another
  std::vector<recorded_plan*> composes;  ///< recordings composed in this one, directly or not
  int remote = -1;                       ///< sends or waits for notifications: 1, 0, or -1 not known yet

  /// Whether this rank's part sends or waits for notifications of other ranks.
  [[nodiscard]] bool talks_to_other_ranks() {
    if (remote < 0) {
      remote = receives.empty() ? 0 : 1;
      for_each([&](node& n) { remote = remote || n.notifies; });
    }
    return remote != 0;
  }

  /// A worker starts a composed run, finished by `owner` (the task standing for the plan): the
  /// nodes leave the plan's group as they finish. Returns the nodes to wait for, plus one.
  void begin_composition(node& owner) {
    if (composition.running.exchange(true, std::memory_order_acq_rel))
      raise<invalid_argument>("a composed recording (#", id,
                              ") started while a run of it had not finished; its runs are ordered one after "
                              "another by their tasks' declaration, so this is a bug of hetero");
    if (!grouped) {
      for_each([&](node& n) {
        n.group = &composition;
        n.flags.store(static_cast<std::uint8_t>(n.flags.load(std::memory_order_relaxed) | node::grouped_bit),
                      std::memory_order_relaxed);
      });
      grouped = true;
    }
    composition.owner = &owner;
    composition.outstanding.store(static_cast<std::int64_t>(m_count) + 1, std::memory_order_relaxed);
  }

  /// Declaring thread, idle graph: a replay by the graph itself (not composed) is in no group.
  void leave_composition() {
    if (!grouped) return;
    for_each([](node& n) {
      n.flags.store(static_cast<std::uint8_t>(n.flags.load(std::memory_order_relaxed) & ~node::grouped_bit),
                    std::memory_order_relaxed);
    });
    grouped = false;
  }

  node* new_node() {
    if (m_count % chunk_size == 0) m_chunks.push_back(std::make_unique<node[]>(chunk_size));
    node* n = &m_chunks.back()[m_count % chunk_size];
    ++m_count;
    n->recorded = true;
    return n;
  }

  /// Nodes of this rank (tasks and notifications).
  [[nodiscard]] std::size_t size() const noexcept { return m_count; }

  /// Calls `f(node&)` for every node, in declaration order.
  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = 0; i < m_count; ++i) f(m_chunks[i / chunk_size][i % chunk_size]);
  }

  recorded_plan() {
    composition.close = [](node_group& g) noexcept {
      static_cast<composition_group&>(g).running.store(false, std::memory_order_release);
    };
  }
  recorded_plan(const recorded_plan&) = delete;
  recorded_plan& operator=(const recorded_plan&) = delete;
  ~recorded_plan() {
    for_each([](node& n) { n.drop_body(); });
  }

 private:
  std::vector<std::unique_ptr<node[]>> m_chunks;
  std::size_t m_count = 0;
};

}  // namespace detail

/// A recorded task graph. Copies share the recording; it stays valid as long as a copy (or a
/// replay in progress) holds it, and can only be replayed by the graph that recorded it.
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// int steps = 10;
/// auto declare_one_time_step = [](auto&) {};
/// -->
/// @code
/// hetero::task_recording step = graph.record([&] { declare_one_time_step(graph); });
/// for (int t = 0; t < steps; ++t) graph.run(step);  // replay + wait
/// @endcode
class task_recording {
 public:
  task_recording() = default;

  /// Whether this holds a recording.
  [[nodiscard]] bool valid() const noexcept { return m_plan != nullptr; }
  /// Task bodies this rank runs in each replay.
  [[nodiscard]] std::size_t tasks() const noexcept { return m_plan ? m_plan->tasks : 0; }
  /// Nodes of this rank (tasks and notifications it waits for).
  [[nodiscard]] std::size_t nodes() const noexcept { return m_plan ? m_plan->size() : 0; }
  /// Replays started so far.
  [[nodiscard]] std::uint64_t replays() const noexcept { return m_plan ? m_plan->runs : 0; }

 private:
  friend class detail::graph_engine;
  friend class composed_recording;
  explicit task_recording(std::shared_ptr<detail::recorded_plan> plan) noexcept : m_plan(std::move(plan)) {}
  std::shared_ptr<detail::recorded_plan> m_plan;
};

}  // namespace hetero

#endif  // HETERO_TASK_RECORDING_HPP

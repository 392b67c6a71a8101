/// @file
/// `hetero::task_recording`: a task graph declared once with `task_graph::record` and replayed
/// every time step with `task_graph::replay` (or `run`), without declaring it again.
#ifndef HETERO_TASK_RECORDING_HPP
#define HETERO_TASK_RECORDING_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "hetero/task/detail/node.hpp"

namespace hetero {

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

  recorded_plan() = default;
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
  explicit task_recording(std::shared_ptr<detail::recorded_plan> plan) noexcept : m_plan(std::move(plan)) {}
  std::shared_ptr<detail::recorded_plan> m_plan;
};

}  // namespace hetero

#endif  // HETERO_TASK_RECORDING_HPP

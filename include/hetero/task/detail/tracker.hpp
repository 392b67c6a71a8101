/// @file
/// OpenMP `depend` semantics on one rank, in program order: a read waits for the last writer
/// (flow), a write waits for the last writer (output) and every reader since (anti). Edges are
/// added to the predecessors' own successor lists; a predecessor that already finished adds
/// nothing.
#ifndef HETERO_TASK_DETAIL_TRACKER_HPP
#define HETERO_TASK_DETAIL_TRACKER_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/task/detail/event_state.hpp"
#include "hetero/task/detail/node.hpp"

namespace hetero::detail {

/// One access of a task being declared.
struct access_spec {
  event_state* event = nullptr;
  event_access mode = event_access::read;
  const rank_set* targets = nullptr;  ///< writes only: the ranks to notify
  data_state* data = nullptr;         ///< a data clause's piece (`event` is its hidden event)
  data_mode use = data_mode::read;    ///< ... and how the task uses it
  bool reads_too = false;             ///< a write that reads the last writer's result too (`inout`)
};

/// Everything `spawn` collected from a task's clauses.
struct task_spec {
  std::string_view label;
  const rank_set* on = nullptr;  ///< nullptr: every rank
  bool device = false;
  bool either = false;  ///< a host and a device body: the data registry picks the side
  int pinned = -1;
  int priority = 0;
  std::size_t data = 0;  ///< accesses of task data among the accesses
  /// How many pieces each argument of the body has (`data_arg_count` of them).
  std::array<std::uint32_t, 16> data_args{};
  std::size_t data_arg_count = 0;

  void add(const access_spec& a) {
    if (a.data) ++data;
    if (m_count < m_inline.size()) {
      m_inline[m_count] = a;
    } else {
      m_more.push_back(a);
    }
    ++m_count;
  }
  [[nodiscard]] std::size_t size() const noexcept { return m_count; }
  [[nodiscard]] const access_spec& operator[](std::size_t i) const noexcept {
    return i < m_inline.size() ? m_inline[i] : m_more[i - m_inline.size()];
  }

 private:
  std::array<access_spec, 8> m_inline{};
  std::vector<access_spec> m_more;
  std::size_t m_count = 0;
};

/// Which accesses of a task name an event an earlier access of it names (a second access of an
/// event in one task adds nothing). Compared pairwise while the accesses are few, through one
/// sort when many: a range clause may name thousands of pieces, and pairs would be quadratic.
class repeated_accesses {
 public:
  explicit repeated_accesses(const task_spec& spec) : m_spec(spec) {
    if (spec.size() <= pairwise_limit) return;
    std::vector<std::pair<const event_state*, std::size_t>> order(spec.size());
    for (std::size_t i = 0; i < spec.size(); ++i) order[i] = {spec[i].event, i};
    std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
      return std::less<>{}(x.first, y.first) || (x.first == y.first && x.second < y.second);
    });
    m_repeated.assign(spec.size(), false);
    for (std::size_t k = 1; k < order.size(); ++k)
      if (order[k].first == order[k - 1].first) m_repeated[order[k].second] = true;
  }

  /// Whether access `i` names an event one of accesses 0 .. i - 1 names.
  [[nodiscard]] bool operator()(std::size_t i) const noexcept {
    if (!m_repeated.empty()) return m_repeated[i];
    for (std::size_t j = 0; j < i; ++j)
      if (m_spec[j].event == m_spec[i].event) return true;
    return false;
  }

 private:
  static constexpr std::size_t pairwise_limit = 32;
  const task_spec& m_spec;
  std::vector<bool> m_repeated;  // empty: compare pairwise
};

/// Sets up node `n` as the task `spec` describes, its `sequence`-th in declaration order.
inline void start_node(node& n, const task_spec& spec, std::uint64_t sequence) {
  n.kind = spec.device ? node_kind::device : node_kind::cpu;
  n.device = static_cast<std::int16_t>(spec.device ? spec.pinned : -1);
  n.urgent = spec.priority > 0;
  n.priority = spec.priority;
  n.sequence = sequence;
  if (!spec.label.empty()) n.extra.label.assign(spec.label);
}

/// Adds dependency edges for accesses in program order. `recorded`: the predecessors belong to
/// a recording (nothing runs yet, every edge is kept).
class dependency_tracker {
 public:
  /// `n` reads the event whose history is `h`; returns the edges added.
  static int read(access_history& h, node* n, bool recorded) {
    const int edges = link(h.writer, n, recorded);
    if (!recorded && h.readers.size() >= 32 && (h.readers.size() & (h.readers.size() - 1)) == 0) prune(h.readers);
    h.readers.push_back({n, n->serial});
    if (!recorded) n->mark_tracked();
    return edges;
  }

  /// `n` writes the event whose history is `h`; returns the edges added.
  static int write(access_history& h, node* n, bool recorded) {
    int edges = link(h.writer, n, recorded);
    for (const node_ref& r : h.readers) edges += link(r, n, recorded);
    h.readers.clear();
    h.writer = {n, n->serial};
    if (!recorded) n->mark_tracked();
    return edges;
  }

  /// The last writer of `h` if it has not finished yet (tasks declared and run at once).
  static node* unfinished_writer(const access_history& h) {
    const node_ref& w = h.writer;
    if (!w.ptr || w.ptr->recorded || w.ptr->serial != w.serial || w.ptr->done()) return nullptr;
    return w.ptr;
  }

 private:
  static int link(const node_ref& pred, node* succ, bool recorded) {
    if (!pred.ptr || pred.ptr == succ) return 0;
    if (recorded) {
      pred.ptr->append_successor(succ);
      return 1;
    }
    // A reused node (serial changed) finished long ago; add_successor refuses finished ones.
    if (pred.ptr->serial != pred.serial) return 0;
    return pred.ptr->add_successor(succ) ? 1 : 0;
  }

  // Many readers of one version (a tile read by a whole panel): forget the finished ones.
  static void prune(std::vector<node_ref>& readers) {
    readers.erase(std::remove_if(readers.begin(), readers.end(),
                                 [](const node_ref& r) { return r.ptr->serial != r.serial || r.ptr->done(); }),
                  readers.end());
  }
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_TRACKER_HPP

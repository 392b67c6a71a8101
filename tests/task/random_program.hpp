// Random task programs for the task-graph tests, and their check against the sequential
// (program-order) meaning of OpenMP `depend`: every task runs once; a task reading an event sees
// the value of the last task writing it before it in program order (flow); a task writing an
// event starts after the previous writer (output) and every reader since (anti) finished.
#ifndef HETERO_TESTS_TASK_RANDOM_PROGRAM_HPP
#define HETERO_TESTS_TASK_RANDOM_PROGRAM_HPP

#include <hetero/task.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace hetero::testing {

/// One access of a random task.
struct random_access {
  int event;
  bool write;
};

/// A random program of `tasks` tasks over `events` events, with its dependencies computed
/// sequentially.
class random_program {
 public:
  random_program(std::mt19937_64& rng, int tasks, int events, int max_accesses = 4) : m_events(events) {
    std::uniform_int_distribution<int> count(0, max_accesses), which(0, events - 1), coin(0, 2);
    m_accesses.resize(static_cast<std::size_t>(tasks));
    for (auto& list : m_accesses) {
      const int k = count(rng);
      for (int a = 0; a < k; ++a) {
        const int e = which(rng);
        bool seen = false;
        for (const auto& x : list) seen = seen || x.event == e;
        if (!seen) list.push_back({e, coin(rng) == 0});  // a third of the accesses write
      }
    }
    // Sequential meaning: last writer and readers since, per event.
    std::vector<int> writer(static_cast<std::size_t>(events), -1);
    std::vector<std::vector<int>> readers(static_cast<std::size_t>(events));
    m_expected_value.resize(static_cast<std::size_t>(tasks));
    m_predecessors.resize(static_cast<std::size_t>(tasks));
    for (int t = 0; t < tasks; ++t) {
      for (const auto& a : m_accesses[static_cast<std::size_t>(t)]) {
        const auto e = static_cast<std::size_t>(a.event);
        if (writer[e] >= 0) m_predecessors[static_cast<std::size_t>(t)].push_back(writer[e]);
        if (a.write) {
          for (int r : readers[e]) m_predecessors[static_cast<std::size_t>(t)].push_back(r);
          readers[e].clear();
          writer[e] = t;
        } else {
          readers[e].push_back(t);
          m_expected_value[static_cast<std::size_t>(t)].push_back({a.event, writer[e]});
        }
      }
    }
    m_last_writer = writer;
    reset();
  }

  [[nodiscard]] int tasks() const noexcept { return static_cast<int>(m_accesses.size()); }
  [[nodiscard]] int events() const noexcept { return m_events; }
  [[nodiscard]] const std::vector<random_access>& accesses(int t) const {
    return m_accesses[static_cast<std::size_t>(t)];
  }

  /// No priority clause (priority 0) for every task.
  struct no_priority {
    int operator()(int) const noexcept { return 0; }
  };

  /// Declares the program's tasks on `graph` with the events `e`; `device(t)` says whether task
  /// t is a device task, `priority(t)` gives its priority clause.
  template <class Graph, class Device, class Priority = no_priority>
  void declare(Graph& graph, const hetero::event_array<1>& e, Device&& device, Priority&& priority = {}) {
    for (int t = 0; t < tasks(); ++t) {
      std::vector<hetero::event> reads, writes;
      for (const auto& a : accesses(t)) (a.write ? writes : reads).push_back(e(a.event));
      if (device(t)) {
        graph.spawn("random", hetero::in(reads), hetero::out(writes), hetero::device(),
                    hetero::priority(priority(t)), [this, t](const typename Graph::device_space&) { body(t); });
      } else {
        graph.spawn("random", hetero::in(reads), hetero::out(writes), hetero::priority(priority(t)),
                    [this, t] { body(t); });
      }
    }
  }

  /// What a task does: stamps its start and end, checks what it reads, writes its id.
  void body(int t) {
    auto& s = m_stamps[static_cast<std::size_t>(t)];
    s.runs.fetch_add(1, std::memory_order_relaxed);
    s.start = m_clock.fetch_add(1, std::memory_order_relaxed);
    for (const auto& [event, expected] : m_expected_value[static_cast<std::size_t>(t)]) {
      // Plain (non-atomic) data: a missing dependency is a data race ThreadSanitizer reports.
      if (m_plain[static_cast<std::size_t>(event)] != expected)
        m_bad_reads.fetch_add(1, std::memory_order_relaxed);
    }
    for (const auto& a : accesses(t))
      if (a.write) m_plain[static_cast<std::size_t>(a.event)] = t;
    s.end = m_clock.fetch_add(1, std::memory_order_relaxed);
  }

  /// Clears what the tasks recorded (before a replay).
  void reset() {
    m_stamps = std::make_unique<stamp[]>(m_accesses.size());
    m_plain.assign(static_cast<std::size_t>(m_events), -1);
    m_bad_reads.store(0);
    m_clock.store(0);
  }

  /// Tasks that did not run exactly once.
  [[nodiscard]] int wrong_run_counts() const {
    int wrong = 0;
    for (int t = 0; t < tasks(); ++t) wrong += m_stamps[static_cast<std::size_t>(t)].runs.load() != 1;
    return wrong;
  }
  /// Dependencies (flow, anti, output) whose predecessor had not finished when the task started.
  [[nodiscard]] int violated_dependencies() const {
    int violated = 0;
    for (int t = 0; t < tasks(); ++t)
      for (int p : m_predecessors[static_cast<std::size_t>(t)])
        violated += m_stamps[static_cast<std::size_t>(p)].end >= m_stamps[static_cast<std::size_t>(t)].start;
    return violated;
  }
  /// Reads that saw another value than the sequential program's.
  [[nodiscard]] int bad_reads() const { return m_bad_reads.load(); }
  /// Every event's final value is the last writer's id.
  [[nodiscard]] bool final_values_match() const { return m_plain == m_last_writer; }
  /// Dependencies in the program.
  [[nodiscard]] std::size_t dependency_count() const {
    std::size_t n = 0;
    for (const auto& p : m_predecessors) n += p.size();
    return n;
  }

 private:
  struct stamp {
    std::atomic<int> runs{0};
    std::uint64_t start = 0;
    std::uint64_t end = 0;
  };

  int m_events;
  std::vector<std::vector<random_access>> m_accesses;
  std::vector<std::vector<std::pair<int, int>>> m_expected_value;  // (event, writer id or -1)
  std::vector<std::vector<int>> m_predecessors;
  std::vector<int> m_last_writer;
  std::unique_ptr<stamp[]> m_stamps;
  std::vector<int> m_plain;
  std::atomic<int> m_bad_reads{0};
  std::atomic<std::uint64_t> m_clock{0};
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_TASK_RANDOM_PROGRAM_HPP

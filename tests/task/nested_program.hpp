// Random nested task programs (tasks whose bodies declare subgraphs, down to a given depth) and
// their check against the sequential meaning, as random_program.hpp does for flat ones: every
// task body runs once; within each (sub)program, a task starts after all its predecessors
// (flow, anti, output in declaration order) finished, where a task with a subgraph finishes
// when its body and every inner task, nested ones included, finished; a read sees the value of
// the last write before it. The writes of a task with a subgraph are made by one of its inner
// tasks (or by its body when it declares nothing), so a reader that overtook the inner tasks
// reads a stale value (and ThreadSanitizer sees a race on the plain ints).
#ifndef HETERO_TESTS_TASK_NESTED_PROGRAM_HPP
#define HETERO_TESTS_TASK_NESTED_PROGRAM_HPP

#include <hetero/task.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

namespace hetero::testing {

/// 0 + 1 + ... + 7, summed by a kernel on `instance` (what an inner device task runs).
template <class Space>
int device_sum(const Space& instance) {
  int sum = 0;
  Kokkos::parallel_reduce(
      "hetero::test inner device task", Kokkos::RangePolicy<Space>(instance, 0, 8),
      KOKKOS_LAMBDA(int k, int& acc) { acc += k; }, sum);
  return sum;
}

/// Shape of a random nested program.
struct nested_shape {
  int tasks = 200;         ///< tasks of the top-level program
  int events = 8;          ///< events of each program
  int depth = 2;           ///< levels of subgraphs below the top level
  int inner_tasks = 12;    ///< at most this many tasks in a subgraph (0 to this)
  int macro_percent = 25;  ///< share of tasks (above the last level) that declare a subgraph
  int device_percent = 10;
};

class nested_program {
  struct write_back {
    int program;
    int event;
    int value;
  };
  struct task {
    std::vector<std::pair<int, bool>> accesses;  // (event, write)
    int inner = -1;                              // program declared by its body, or -1
    bool device = false;
    int priority = 0;
    int node = 0;                               // index in m_nodes
    std::vector<std::pair<int, int>> expected;  // (event, writer or -1) of its reads
    std::vector<int> predecessors;
    std::vector<write_back> writes;  // made when its body runs
  };
  struct program {
    int events = 1;
    std::vector<task> tasks;
    std::vector<int> last_writer;
    std::vector<int> plain;
  };
  struct stamp {
    std::atomic<int> runs{0};
    std::uint64_t start = 0, end = 0;
  };

 public:
  nested_program(std::mt19937_64& rng, const nested_shape& shape) : m_shape(shape) {
    generate(rng, shape.tasks, shape.depth);
    reset();
  }

  /// Task bodies (leaves and bodies declaring subgraphs) in the whole program.
  [[nodiscard]] int bodies() const noexcept { return m_node_count; }
  /// Subgraphs in the whole program.
  [[nodiscard]] int subgraphs() const noexcept { return static_cast<int>(m_programs.size()) - 1; }

  /// Declares the top-level program on `graph` (a task_graph).
  template <class Graph>
  void declare(Graph& graph) {
    const auto e = graph.events("E", m_programs[0].events);
    declare_program(graph, 0, e);
  }

  void reset() {
    m_stamps = std::make_unique<stamp[]>(static_cast<std::size_t>(m_node_count));
    for (auto& p : m_programs) p.plain.assign(static_cast<std::size_t>(p.events), -1);
    m_bad_reads.store(0);
    m_clock.store(0);
  }

  [[nodiscard]] int wrong_run_counts() const {
    int wrong = 0;
    for (int i = 0; i < m_node_count; ++i) wrong += m_stamps[static_cast<std::size_t>(i)].runs.load() != 1;
    return wrong;
  }
  /// Dependencies of any level whose predecessor (its whole subgraph) had not finished when the
  /// successor (its body) started.
  [[nodiscard]] int violated_dependencies() const {
    int violated = 0;
    for (std::size_t p = 0; p < m_programs.size(); ++p)
      for (const task& t : m_programs[p].tasks)
        for (int pred : t.predecessors)
          violated += span_end(static_cast<int>(p), pred) >= m_stamps[static_cast<std::size_t>(t.node)].start;
    return violated;
  }
  [[nodiscard]] int bad_reads() const { return m_bad_reads.load(); }
  /// Every program's final values are its last writers'.
  [[nodiscard]] bool final_values_match() const {
    return std::all_of(m_programs.begin(), m_programs.end(),
                       [](const program& p) { return p.plain == p.last_writer; });
  }

 private:
  int generate(std::mt19937_64& rng, int tasks, int depth) {
    const int index = static_cast<int>(m_programs.size());
    m_programs.emplace_back();
    const int events = std::max(1, m_shape.events);
    m_programs[static_cast<std::size_t>(index)].events = events;
    std::uniform_int_distribution<int> count(0, 3), which(0, events - 1), coin(0, 2), percent(0, 99),
        inner(0, m_shape.inner_tasks);
    std::vector<task> list(static_cast<std::size_t>(tasks));
    for (task& t : list) {
      t.node = m_node_count++;
      const int k = count(rng);
      for (int a = 0; a < k; ++a) {
        const int e = which(rng);
        bool seen = false;
        for (const auto& x : t.accesses) seen = seen || x.first == e;
        if (!seen) t.accesses.push_back({e, coin(rng) == 0});
      }
      t.priority = percent(rng) < 10 ? 1 : 0;
      if (depth > 0 && percent(rng) < m_shape.macro_percent) {
        t.inner = generate(rng, inner(rng), depth - 1);
      } else {
        t.device = percent(rng) < m_shape.device_percent;
      }
    }
    // Sequential meaning, and who makes each write.
    std::vector<int> writer(static_cast<std::size_t>(events), -1);
    std::vector<std::vector<int>> readers(static_cast<std::size_t>(events));
    for (int i = 0; i < tasks; ++i) {
      task& t = list[static_cast<std::size_t>(i)];
      for (const auto& [event, write] : t.accesses) {
        const auto e = static_cast<std::size_t>(event);
        if (writer[e] >= 0) t.predecessors.push_back(writer[e]);
        if (write) {
          for (int r : readers[e]) t.predecessors.push_back(r);
          readers[e].clear();
          writer[e] = i;
          committer(list, i).writes.push_back({index, event, i});
        } else {
          readers[e].push_back(i);
          t.expected.push_back({event, writer[e]});
        }
      }
    }
    m_programs[static_cast<std::size_t>(index)].tasks = std::move(list);
    m_programs[static_cast<std::size_t>(index)].last_writer = writer;
    return index;
  }

  // The task whose body makes the writes of list[i]: itself, or (with a subgraph that has tasks)
  // the committer of the last task of its subgraph.
  task& committer(std::vector<task>& list, int i) {
    task* t = &list[static_cast<std::size_t>(i)];
    while (t->inner >= 0 && !m_programs[static_cast<std::size_t>(t->inner)].tasks.empty())
      t = &m_programs[static_cast<std::size_t>(t->inner)].tasks.back();
    return *t;
  }

  template <class Spawner>
  void declare_program(Spawner& s, int index, const hetero::event_array<1>& e) {
    using space = typename Spawner::device_space;
    const program& p = m_programs[static_cast<std::size_t>(index)];
    for (std::size_t i = 0; i < p.tasks.size(); ++i) {
      const task& t = p.tasks[i];
      std::vector<hetero::event> reads, writes;
      for (const auto& [event, write] : t.accesses) (write ? writes : reads).push_back(e(event));
      const auto prio = hetero::priority(t.priority);
      if (t.inner >= 0) {
        s.spawn("macro", hetero::in(reads), hetero::out(writes), prio,
                [this, index, i](hetero::subgraph<space>& sg) {
                  const task& me = m_programs[static_cast<std::size_t>(index)].tasks[i];
                  begin(index, me);
                  const program& inner = m_programs[static_cast<std::size_t>(me.inner)];
                  declare_program(sg, me.inner, sg.events("I", inner.events));
                  finish(me);
                });
      } else if (t.device) {
        s.spawn("leaf", hetero::in(reads), hetero::out(writes), hetero::device(), prio,
                [this, index, i](const space& instance) {
                  if (device_sum(instance) != 28) m_bad_reads.fetch_add(1);
                  leaf(index, i);
                });
      } else {
        s.spawn("leaf", hetero::in(reads), hetero::out(writes), prio, [this, index, i] { leaf(index, i); });
      }
    }
  }

  void leaf(int index, std::size_t i) {
    const task& t = m_programs[static_cast<std::size_t>(index)].tasks[i];
    begin(index, t);
    finish(t);
  }

  // Stamps the start, runs once, checks the reads.
  void begin(int index, const task& t) {
    auto& s = m_stamps[static_cast<std::size_t>(t.node)];
    s.runs.fetch_add(1, std::memory_order_relaxed);
    s.start = m_clock.fetch_add(1, std::memory_order_relaxed);
    const program& p = m_programs[static_cast<std::size_t>(index)];
    for (const auto& [event, expected] : t.expected)
      if (p.plain[static_cast<std::size_t>(event)] != expected)
        m_bad_reads.fetch_add(1, std::memory_order_relaxed);
  }

  // Makes the writes this body is responsible for, stamps the end.
  void finish(const task& t) {
    for (const write_back& w : t.writes)
      m_programs[static_cast<std::size_t>(w.program)].plain[static_cast<std::size_t>(w.event)] = w.value;
    m_stamps[static_cast<std::size_t>(t.node)].end = m_clock.fetch_add(1, std::memory_order_relaxed);
  }

  // The last end stamp of task i of program p and of everything its subgraph declared.
  [[nodiscard]] std::uint64_t span_end(int p, int i) const {
    const task& t = m_programs[static_cast<std::size_t>(p)].tasks[static_cast<std::size_t>(i)];
    std::uint64_t end = m_stamps[static_cast<std::size_t>(t.node)].end;
    if (t.inner >= 0) {
      const auto& inner = m_programs[static_cast<std::size_t>(t.inner)].tasks;
      for (std::size_t k = 0; k < inner.size(); ++k) end = std::max(end, span_end(t.inner, static_cast<int>(k)));
    }
    return end;
  }

  nested_shape m_shape;
  std::vector<program> m_programs;  // [0]: the top level
  int m_node_count = 0;
  std::unique_ptr<stamp[]> m_stamps;
  std::atomic<int> m_bad_reads{0};
  std::atomic<std::uint64_t> m_clock{0};
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_TASK_NESTED_PROGRAM_HPP

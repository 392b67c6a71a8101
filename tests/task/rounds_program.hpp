// A random cross-rank task program, the same on every rank (drawn from the shared test seed).
// In each round, every event j gets a writer on a random rank that puts a value into the slots
// of a random set of ranks and notifies them (out(E[j]).to(targets)); some of those ranks read
// it (in(E[j])) and check their slot, then acknowledge to the next round's writer
// (out(ACK[j][r]).to(next writer)), whose task waits for the acknowledgements before it
// overwrites their slots (the anti dependency across ranks, written by hand as the model asks).
// Each writer also notifies the next writer of its event, which orders the writes.
#ifndef HETERO_TESTS_TASK_ROUNDS_PROGRAM_HPP
#define HETERO_TESTS_TASK_ROUNDS_PROGRAM_HPP

#include <hetero/task.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "shared_slots.hpp"

namespace hetero::testing {

/// The program and what each rank should see running it.
class rounds_program {
 public:
  rounds_program(std::mt19937_64& rng, int world, int rounds, int events) : m_world(world), m_events(events) {
    std::uniform_int_distribution<int> rank(0, world - 1), coin(0, 1), pause(0, 60);
    m_steps.resize(static_cast<std::size_t>(rounds), std::vector<step>(static_cast<std::size_t>(events)));
    for (auto& round : m_steps) {
      for (auto& s : round) {
        s.writer = rank(rng);
        s.pause_us = pause(rng);
        for (int r = 0; r < world; ++r) {
          const bool target = r == s.writer || coin(rng);
          if (target && r != s.writer) s.targets.push_back(r);
          if (target && coin(rng)) s.readers.push_back(r);
        }
      }
    }
    // The next writer of an event is notified too: its out(E[j]) then waits for this write
    // (output dependency), so writes of one event never overtake each other.
    for (std::size_t t = 0; t + 1 < m_steps.size(); ++t) {
      for (std::size_t j = 0; j < m_steps[t].size(); ++j) {
        step& s = m_steps[t][j];
        const int next = m_steps[t + 1][j].writer;
        if (next != s.writer && std::find(s.targets.begin(), s.targets.end(), next) == s.targets.end())
          s.targets.push_back(next);
      }
    }
  }

  /// Declares the program on `graph` (every rank, same order).
  template <class Graph>
  void declare(Graph& graph, const hetero::event_array<1>& e, const hetero::event_array<2>& ack,
               const shared_slots& slots, std::atomic<int>& bad_reads, std::atomic<int>& ran) const {
    for (std::size_t t = 0; t < m_steps.size(); ++t) {
      for (int j = 0; j < m_events; ++j) {
        const step& s = m_steps[t][static_cast<std::size_t>(j)];
        std::vector<hetero::event> acks;
        if (t > 0)
          for (int r : m_steps[t - 1][static_cast<std::size_t>(j)].readers) acks.push_back(ack(j, r));
        const std::int64_t value = static_cast<std::int64_t>(t) * 1000 + j + 1;
        graph.spawn("writer", hetero::on(s.writer), hetero::in(acks),
                    hetero::out(e(j)).to(hetero::rank_set(s.targets)), [&slots, &ran, s, j, value] {
                      std::this_thread::sleep_for(std::chrono::microseconds(s.pause_us));
                      slots.slot(j, s.writer).store(value, std::memory_order_release);
                      for (int r : s.targets) slots.slot(j, r).store(value, std::memory_order_release);
                      ran.fetch_add(1);
                    });
        const bool last = t + 1 == m_steps.size();
        for (int r : s.readers) {
          const hetero::rank_set next =
              last ? hetero::rank_set{} : hetero::rank_set{m_steps[t + 1][static_cast<std::size_t>(j)].writer};
          graph.spawn("reader", hetero::on(r), hetero::in(e(j)), hetero::out(ack(j, r)).to(next),
                      [&slots, &bad_reads, &ran, j, r, value] {
                        if (slots.slot(j, r).load(std::memory_order_acquire) != value) bad_reads.fetch_add(1);
                        ran.fetch_add(1);
                      });
        }
      }
    }
  }

  /// Tasks rank `r` runs in one run of the program.
  [[nodiscard]] int tasks_of(int r) const {
    int n = 0;
    for (const auto& round : m_steps)
      for (const auto& s : round) {
        n += s.writer == r;
        for (int reader : s.readers) n += reader == r;
      }
    return n;
  }

  [[nodiscard]] int events() const noexcept { return m_events; }
  [[nodiscard]] int world() const noexcept { return m_world; }

 private:
  struct step {
    int writer = 0;
    int pause_us = 0;
    std::vector<int> targets;  // without the writer
    std::vector<int> readers;  // the writer or targets
  };

  int m_world;
  int m_events;
  std::vector<std::vector<step>> m_steps;
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_TASK_ROUNDS_PROGRAM_HPP

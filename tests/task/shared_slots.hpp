// Slots in node-shared memory for the cross-rank task tests: a task "puts" a value into the
// slots of the ranks its out event notifies (as the seed's gmove out would), and the tasks of
// those ranks that read the event check their slot. A notification that arrived before the
// writer finished would show up as a stale value.
#ifndef HETERO_TESTS_TASK_SHARED_SLOTS_HPP
#define HETERO_TESTS_TASK_SHARED_SLOTS_HPP

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace hetero::testing {

/// `count` 64-bit slots per rank of MPI_COMM_WORLD, all in one node-shared window.
class shared_slots {
 public:
  explicit shared_slots(int count) : m_count(count) {
    MPI_Comm_size(MPI_COMM_WORLD, &m_world);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &m_node);
    int node_size = 0;
    MPI_Comm_size(m_node, &node_size);
    m_usable = node_size == m_world;
    if (!m_usable) return;
    void* base = nullptr;
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(count * sizeof(std::int64_t)), sizeof(std::int64_t),
                            MPI_INFO_NULL, m_node, &base, &m_window);
    for (int r = 0; r < m_world; ++r) {
      MPI_Aint size = 0;
      int unit = 0;
      void* p = nullptr;
      MPI_Win_shared_query(m_window, r, &size, &unit, &p);
      m_bases.push_back(static_cast<std::int64_t*>(p));
    }
    for (int i = 0; i < count; ++i) slot(i, rank()).store(0);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  shared_slots(const shared_slots&) = delete;
  shared_slots& operator=(const shared_slots&) = delete;
  ~shared_slots() {
    if (m_usable) MPI_Win_free(&m_window);
    MPI_Comm_free(&m_node);
  }

  /// Whether every rank is on this node (the slots need it).
  [[nodiscard]] bool usable() const noexcept { return m_usable; }

  /// Slot `i` of rank `r`.
  [[nodiscard]] std::atomic_ref<std::int64_t> slot(int i, int r) const {
    return std::atomic_ref<std::int64_t>(m_bases[static_cast<std::size_t>(r)][i]);
  }

 private:
  [[nodiscard]] int rank() const {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }

  int m_count;
  int m_world = 1;
  bool m_usable = false;
  MPI_Comm m_node = MPI_COMM_NULL;
  MPI_Win m_window = MPI_WIN_NULL;
  std::vector<std::int64_t*> m_bases;
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_TASK_SHARED_SLOTS_HPP

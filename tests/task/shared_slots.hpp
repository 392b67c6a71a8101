// Slots for the cross-rank task tests: a task "puts" a value into the slots of the ranks its out
// event notifies (as the seed's gmove out would), and the tasks of those ranks that read the
// event check their slot. A notification that arrived before the writer finished would show up
// as a stale value. Where every rank shares one node the slots are node-shared memory (atomic
// loads and stores); where the ranks span nodes they are an MPI window (atomic accumulates,
// flushed before the store returns), so the tests hold across nodes as on one. The window is
// made with MPI_Win_create, as hetero's own: with MPI_Win_allocate, MPICH 4.0.2 misplaced stores
// where some ranks share a node and others do not (3 ranks as 2 + 1 or 1 + 2: a rank's slot
// showed another slot's value, docs/results/core.md).
#ifndef HETERO_TESTS_TASK_SHARED_SLOTS_HPP
#define HETERO_TESTS_TASK_SHARED_SLOTS_HPP

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetero::testing {

/// `count` 64-bit slots per rank of MPI_COMM_WORLD.
class shared_slots {
 public:
  /// Slot `i` of rank `r`, read and written atomically from any thread of any rank.
  class slot_ref {
   public:
    void store(std::int64_t value, std::memory_order order) const {
      if (m_shared) {
        std::atomic_ref<std::int64_t>(*m_shared).store(value, order);
        return;
      }
      MPI_Accumulate(&value, 1, MPI_INT64_T, m_rank, m_index, 1, MPI_INT64_T, MPI_REPLACE, m_window);
      MPI_Win_flush(m_rank, m_window);  // complete at the target before the task that stores ends
    }
    [[nodiscard]] std::int64_t load(std::memory_order order) const {
      if (m_shared) return std::atomic_ref<std::int64_t>(*m_shared).load(order);
      std::int64_t value = -1;
      MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, &value, 1, MPI_INT64_T, m_rank, m_index, 1, MPI_INT64_T,
                         MPI_NO_OP, m_window);
      MPI_Win_flush(m_rank, m_window);
      return value;
    }

   private:
    friend class shared_slots;
    slot_ref(std::int64_t* shared, MPI_Win window, int rank, int index)
        : m_shared(shared), m_window(window), m_rank(rank), m_index(index) {}
    std::int64_t* m_shared;
    MPI_Win m_window;
    int m_rank;
    int m_index;
  };

  explicit shared_slots(int count) : m_count(count) {
    MPI_Comm_size(MPI_COMM_WORLD, &m_world);
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    m_shared = node_size == m_world;
    const auto bytes = static_cast<MPI_Aint>(count * sizeof(std::int64_t));
    void* base = nullptr;
    if (m_shared) {
      MPI_Win_allocate_shared(bytes, sizeof(std::int64_t), MPI_INFO_NULL, node, &base, &m_window);
      for (int r = 0; r < m_world; ++r) {
        MPI_Aint size = 0;
        int unit = 0;
        void* p = nullptr;
        MPI_Win_shared_query(m_window, r, &size, &unit, &p);
        m_bases.push_back(static_cast<std::int64_t*>(p));
      }
    } else {
      MPI_Alloc_mem(bytes, MPI_INFO_NULL, &base);
      m_own = base;
      MPI_Win_create(base, bytes, sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &m_window);
    }
    MPI_Comm_free(&node);
    auto* own = static_cast<std::int64_t*>(base);
    for (int i = 0; i < count; ++i) own[i] = 0;
    if (!m_shared) MPI_Win_lock_all(0, m_window);  // one passive epoch to every rank, for the test's life
    MPI_Barrier(MPI_COMM_WORLD);
  }
  shared_slots(const shared_slots&) = delete;
  shared_slots& operator=(const shared_slots&) = delete;
  ~shared_slots() {
    if (!m_shared) MPI_Win_unlock_all(m_window);
    MPI_Win_free(&m_window);
    if (m_own != nullptr) MPI_Free_mem(m_own);
  }

  /// Whether the slots are node-shared memory (every rank on one node) rather than an MPI window.
  [[nodiscard]] bool shared() const noexcept { return m_shared; }

  /// Slot `i` of rank `r`; a slot or rank out of range throws (a test written for fewer
  /// ranks than it runs on), instead of reaching another rank's memory.
  [[nodiscard]] slot_ref slot(int i, int r) const {
    if (i < 0 || i >= m_count || r < 0 || r >= m_world)
      throw std::out_of_range("shared_slots: slot " + std::to_string(i) + " of rank " + std::to_string(r) +
                              ", but there are " + std::to_string(m_count) + " slots on each of " +
                              std::to_string(m_world) + " ranks");
    return slot_ref(m_shared ? m_bases[static_cast<std::size_t>(r)] + i : nullptr, m_window, r, i);
  }

 private:
  int m_world = 1;
  int m_count = 0;
  bool m_shared = false;
  MPI_Win m_window = MPI_WIN_NULL;
  std::vector<std::int64_t*> m_bases;
  void* m_own = nullptr;  // the memory of an MPI window made with MPI_Win_create
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_TASK_SHARED_SLOTS_HPP

/// @file
/// The shared-memory channel of a communicator whose ranks share one node: one
/// `MPI_Win_allocate_shared` window made at construction, in which every rank owns a control
/// line and two payload slots (double buffering) that only it writes.
///
/// Protocol. The ranks number their shared-memory collectives identically (op 1, 2, ...); op n
/// uses slot n % 2. A writer copies its payload into its slot and then stores n into the slot's
/// sequence word with release order; the first 32 payload bytes share that word's cache line,
/// so a small value and its flag travel together. A reader that loads n from the word (acquire)
/// sees the payload. A reader stores n into its own control line ("done") once it no longer
/// reads op n's data; a writer reuses a slot (op n + 2) only when every rank's done is >= n. The
/// done value a rank had when publishing also sits in its slot header, so readers of symmetric
/// collectives learn it without touching another line. A rank that raises in op n (or rejects
/// its arguments there) stores n into its control line's fault word before its done: a root that
/// published op n without reading anyone (broadcast, scatter) learns of it at its next call
/// (`settle`), which waits until every rank is done with op n. Non-blocking operations wait in a queue
/// and complete in order; every wait drives that queue, so outstanding operations never block
/// the slot reuse of later ones.
#ifndef HETERO_COMM_DETAIL_SHM_CHANNEL_HPP
#define HETERO_COMM_DETAIL_SHM_CHANNEL_HPP

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <string_view>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"

namespace hetero::detail {

inline constexpr std::size_t shm_line = 64;          // cache line of x86-64 and most Arm cores
inline constexpr std::size_t shm_spacing = 128;      // two writers never share an adjacent-line prefetch pair
inline constexpr std::uint64_t shm_slots = 2;        // double buffering
inline constexpr std::size_t shm_header_bytes = 32;  // header words: the rest of the line is payload
inline constexpr std::size_t shm_inline_bytes = shm_line - shm_header_bytes;
inline constexpr std::uint64_t shm_fault_ring = 8;  // failure words per rank (control line: done + 8)
static_assert((1 + shm_fault_ring) * sizeof(std::uint64_t) <= shm_spacing);

/// The first line of a slot. Written only by the slot's owner; `seq` last, with release order.
/// 32 bytes, so that the payload after it is 32-byte aligned.
struct shm_header {
  std::uint64_t seq;        ///< op number whose payload follows
  std::uint64_t signature;  ///< what was published (collective, op, root, bytes): readers check it
  std::uint64_t done;       ///< the owner's done counter when it published
  std::uint64_t reserved;
};
static_assert(sizeof(shm_header) == shm_header_bytes);
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free,
              "hetero: the shared-memory path needs lock-free 64-bit atomics (address-free across processes)");

/// A non-blocking shared-memory operation waiting for its data.
struct shm_pending {
  virtual ~shm_pending() = default;
  /// True when everything the operation reads has arrived.
  virtual bool ready() = 0;
  /// Reads the data and writes the results; may throw (kept in `error`).
  virtual void complete() = 0;

  std::uint64_t op = 0;
  bool completed = false;
  std::exception_ptr error;
};

class shm_channel {
 public:
  /// Allocates the window on `node_comm` (collective) with `capacity` payload bytes per slot.
  shm_channel(MPI_Comm node_comm, std::size_t capacity, const wait_policy& policy)
      : m_capacity(capacity), m_policy(policy) {
    HETERO_MPI_CHECK(MPI_Comm_rank, node_comm, &m_rank);
    HETERO_MPI_CHECK(MPI_Comm_size, node_comm, &m_size);
    m_slot_bytes = round_up(shm_header_bytes + capacity, shm_spacing);
    const std::size_t segment = shm_spacing + shm_slots * m_slot_bytes;
    MPI_Info info = MPI_INFO_NULL;
    HETERO_MPI_CHECK(MPI_Info_create, &info);
    // Each rank's segment on its own pages, placed near the rank that writes it.
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(segment), 1, info, node_comm, &base, &m_window);
    MPI_Info_free(&info);
    check_mpi(rc, "MPI_Win_allocate_shared");
    m_segments.resize(static_cast<std::size_t>(m_size));
    for (int r = 0; r < m_size; ++r) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* p = nullptr;
      HETERO_MPI_CHECK(MPI_Win_shared_query, m_window, r, &bytes, &unit, &p);
      m_segments[static_cast<std::size_t>(r)] = static_cast<std::byte*>(p);
    }
    std::memset(base, 0, segment);
    m_known_done.assign(static_cast<std::size_t>(m_size), 0);
    HETERO_MPI_CHECK(MPI_Barrier, node_comm);  // everyone's zeroes are in place before the first op
  }

  shm_channel(const shm_channel&) = delete;
  shm_channel& operator=(const shm_channel&) = delete;

  ~shm_channel() {
    if (m_window == MPI_WIN_NULL || mpi_finalized()) return;
    // Collective: a rank that keeps its communicator while the others drop theirs holds them
    // here, until the watchdog ends the job. Four limits, not two: a node's rank may still be
    // giving up in the node-aware agreement, whose waits last up to 2.5 limits (the leader
    // waits one for its node, then 1.5 for the other leaders: node_agreement.hpp).
    const blocking_call blocked(m_policy, "hetero::communicator tear-down (MPI_Win_free)", wait_kind::collective,
                                4);
    MPI_Win_free(&m_window);
  }

  [[nodiscard]] int rank() const noexcept { return m_rank; }
  [[nodiscard]] int size() const noexcept { return m_size; }
  /// Payload bytes one slot holds.
  [[nodiscard]] std::size_t capacity() const noexcept { return m_capacity; }
  [[nodiscard]] const wait_policy& policy() const noexcept { return m_policy; }

  /// The number of the next shared-memory operation (every rank counts the same way).
  std::uint64_t begin_op() noexcept { return ++m_op; }

  /// This rank's payload area for op `n`, once no rank still reads op n - 2 from it.
  std::byte* reserve(std::uint64_t n, std::string_view what) {
    wait_all_done(n > shm_slots ? n - shm_slots : 0, what);
    return payload_of(m_rank, n);
  }

  /// Makes this rank's op-`n` payload visible together with its signature.
  void publish(std::uint64_t n, std::uint64_t signature) noexcept {
    shm_header& h = header_of(m_rank, n);
    h.signature = signature;
    h.done = m_done;
    std::atomic_ref<std::uint64_t>(h.seq).store(n, std::memory_order_release);
  }

  /// True when rank `r` has published op `n`, without learning anything from it (for reports).
  [[nodiscard]] bool published(int r, std::uint64_t n) const noexcept {
    return std::atomic_ref<std::uint64_t>(header_of(r, n).seq).load(std::memory_order_acquire) == n;
  }

  /// True when rank `r` has published op `n` (and then its payload may be read).
  bool arrived(int r, std::uint64_t n) noexcept {
    shm_header& h = header_of(r, n);
    if (std::atomic_ref<std::uint64_t>(h.seq).load(std::memory_order_acquire) != n) return false;
    auto& known = m_known_done[static_cast<std::size_t>(r)];
    known = std::max(known, h.done);
    return true;
  }

  /// The signature rank `r` published with op `n` (after `arrived(r, n)`).
  [[nodiscard]] std::uint64_t signature(int r, std::uint64_t n) const noexcept {
    return header_of(r, n).signature;
  }
  /// Rank `r`'s payload of op `n` (after `arrived(r, n)`).
  [[nodiscard]] const std::byte* payload(int r, std::uint64_t n) const noexcept { return payload_of(r, n); }

  /// This rank no longer reads op `n`'s data (ops complete in order).
  void finish(std::uint64_t n) noexcept {
    m_done = n;
    m_known_done[static_cast<std::size_t>(m_rank)] = n;
    std::atomic_ref<std::uint64_t>(done_word(m_rank)).store(n, std::memory_order_release);
  }

  /// This rank raised (or rejected its arguments) in op `n`: every rank can see it once it is
  /// done with op `n` (call before `finish(n)`).
  void flag_failure(std::uint64_t n) noexcept {
    std::atomic_ref<std::uint64_t>(fault_word(m_rank, n)).store(n, std::memory_order_release);
  }

  /// This rank published op `n` of collective `name` (a string literal) without reading any
  /// other rank's verdict on its arguments (the root of a broadcast or scatter): a later call
  /// learns them (`settle`).
  void expect_verdicts(std::uint64_t n, std::string_view name) { m_unsettled.push_back({n, name}); }

  /// Before a call named `now`: raises `invalid_argument` naming a rank that raised in an op
  /// this rank left without reading the others (`expect_verdicts`). `wait` (blocking calls):
  /// first waits until every rank is done with those ops; otherwise (the start of a non-blocking
  /// call, which must not block) only ops every rank is done with are settled, the rest wait
  /// for a later call. Each op is settled once.
  void settle(std::string_view now, bool wait) {
    while (!m_unsettled.empty()) {
      const auto [n, name] = m_unsettled.front();
      if (!wait && m_min_known < n && !refresh_known_done(n)) return;
      wait_all_done(n, now);
      m_unsettled.erase(m_unsettled.begin());
      for (int r = 0; r < m_size; ++r)
        if (r != m_rank && std::atomic_ref<std::uint64_t>(fault_word(r, n)).load(std::memory_order_acquire) == n)
          raise<invalid_argument>(now, ": rank ", r, " raised hetero::error in this communicator's previous ",
                                  name, ", which this rank (", m_rank,
                                  ", its root) completed: the ranks passed different counts or roots, or rank ", r,
                                  " rejected its arguments (its own error says why); no data moved in this call");
    }
  }

  /// Waits until MPI's `request` is done, driving the queue meanwhile (a broadcast root's next
  /// call may wait for this rank to finish a queued operation, `settle`).
  void wait_for(MPI_Request& request, std::string_view what) {
    wait_until(
        [&] {
          int done = 0;
          HETERO_MPI_CHECK(MPI_Test, &request, &done, MPI_STATUS_IGNORE);
          return done != 0;
        },
        what);
  }

  /// True when no non-blocking operation is outstanding.
  [[nodiscard]] bool idle() const noexcept { return m_pending.empty(); }

  /// Queues a started non-blocking operation; it completes in order, driven by every wait.
  void enqueue(std::shared_ptr<shm_pending> op) { m_pending.push_back(std::move(op)); }

  /// Completes queued operations, in order, as far as their data has arrived.
  void progress() {
    while (!m_pending.empty() && m_pending.front()->ready()) {
      std::shared_ptr<shm_pending> op = std::move(m_pending.front());
      m_pending.pop_front();
      try {
        op->complete();
      } catch (...) {
        op->error = std::current_exception();
        flag_failure(op->op);
      }
      finish(op->op);
      op->completed = true;
    }
  }

  /// Waits until `ready()` is true, driving the queue meanwhile; reported to the observer.
  /// `missing` (optional) lists the ranks still awaited, for the timeout's error and reports.
  template <class Ready>
  void wait_until(Ready&& ready, std::string_view what, missing_ranks_fn missing = {}) {
    wait_until(m_policy, ready, what, missing);
  }
  /// The same under `policy` (another timeout than the channel's).
  template <class Ready>
  void wait_until(const wait_policy& policy, Ready&& ready, std::string_view what, missing_ranks_fn missing = {}) {
    wait_scope waiting(wait_kind::collective, what);
    backoff b(policy, what, missing);
    for (;;) {
      progress();
      if (ready()) return;
      b.pause();
    }
  }

 private:
  static std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

  std::byte* slot_of(int r, std::uint64_t n) const noexcept {
    return m_segments[static_cast<std::size_t>(r)] + shm_spacing + (n % shm_slots) * m_slot_bytes;
  }
  shm_header& header_of(int r, std::uint64_t n) const noexcept {
    return *reinterpret_cast<shm_header*>(slot_of(r, n));
  }
  std::byte* payload_of(int r, std::uint64_t n) const noexcept { return slot_of(r, n) + shm_header_bytes; }
  std::uint64_t& done_word(int r) const noexcept {
    return *reinterpret_cast<std::uint64_t*>(m_segments[static_cast<std::size_t>(r)]);
  }
  // Rank r's record of a failure in op n: a ring of 8 words after its done word, so that the
  // failures of the few ops a rank can run ahead of an unsettled root never overwrite each other
  // (a slot is reused only once every rank is done with the op two before).
  std::uint64_t& fault_word(int r, std::uint64_t n) const noexcept {
    return *reinterpret_cast<std::uint64_t*>(m_segments[static_cast<std::size_t>(r)] +
                                             (1 + n % shm_fault_ring) * sizeof(std::uint64_t));
  }

  // Waits until every rank is done with op `needed` (at once where that is known already); a
  // timeout names the ranks still behind.
  void wait_all_done(std::uint64_t needed, std::string_view what) {
    if (m_min_known >= needed || refresh_known_done(needed)) return;
    const auto behind = [&](std::vector<int>& out) {
      for (int r = 0; r < m_size; ++r)
        if (std::atomic_ref<std::uint64_t>(done_word(r)).load(std::memory_order_acquire) < needed)
          out.push_back(r);
    };
    wait_until([&] { return refresh_known_done(needed); }, what, behind);
  }

  // Reads the done lines of the ranks not yet known to be past `needed`; true when all are.
  bool refresh_known_done(std::uint64_t needed) noexcept {
    std::uint64_t least = ~std::uint64_t{0};
    for (int r = 0; r < m_size; ++r) {
      auto& known = m_known_done[static_cast<std::size_t>(r)];
      if (known < needed)
        known = std::max(known, std::atomic_ref<std::uint64_t>(done_word(r)).load(std::memory_order_acquire));
      least = std::min(least, known);
    }
    m_min_known = least;
    return least >= needed;
  }

  int m_rank = 0;
  int m_size = 1;
  std::size_t m_capacity = 0;
  std::size_t m_slot_bytes = 0;
  wait_policy m_policy;
  MPI_Win m_window = MPI_WIN_NULL;
  std::vector<std::byte*> m_segments;
  std::uint64_t m_op = 0;                   // last op number handed out
  std::uint64_t m_done = 0;                 // last op this rank completed
  std::vector<std::uint64_t> m_known_done;  // a lower bound of every rank's done counter
  std::uint64_t m_min_known = 0;            // min of m_known_done when last computed
  std::deque<std::shared_ptr<shm_pending>> m_pending;
  struct unsettled_op {
    std::uint64_t op;
    std::string_view name;
  };
  std::vector<unsettled_op> m_unsettled;  // ops whose verdicts this rank has not read, oldest first
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_SHM_CHANNEL_HPP

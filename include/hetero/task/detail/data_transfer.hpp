/// @file
/// Tiles moving between ranks. Every rank declares every task, so every rank knows which
/// version of a tile each rank reads: the owner declares one send per version and reading rank,
/// the reader one receive into its copy, both in declaration order (no message asks for the
/// data). Each move is two nodes: a start (posts the MPI operation when its dependencies are met:
/// the send after the writer of that version, the receive after the readers of the copy's
/// previous version) and a done node, polled like an adopted operation. Messages are tagged by
/// the tile; successive versions of one tile between two ranks are never in flight at once out
/// of order, since each waits for the previous one's done node, and MPI does not let messages
/// of one tag and pair overtake each other.
#ifndef HETERO_TASK_DETAIL_DATA_TRANSFER_HPP
#define HETERO_TASK_DETAIL_DATA_TRANSFER_HPP

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"

namespace hetero::detail {

/// The MPI tag of tile `id` (tiles are counted so that ids stay below the tag bound).
inline int tile_tag(std::uint64_t id) noexcept { return static_cast<int>(id); }

/// The largest tag MPI allows on `comm`.
inline std::int64_t mpi_tag_bound(MPI_Comm comm) {
  int* bound = nullptr;
  int found = 0;
  HETERO_MPI_CHECK(MPI_Comm_get_attr, comm, MPI_TAG_UB, static_cast<void*>(&bound), &found);
  return found && bound ? *bound : 32767;
}

/// One MPI send or receive of a tile: posted by a transfer's start node, tested by its done
/// node (which owns it).
class transfer_op {
 public:
  explicit transfer_op(bool receive) noexcept : m_receive(receive) {}
  transfer_op(const transfer_op&) = delete;
  transfer_op& operator=(const transfer_op&) = delete;

  // A receive still pending when its graph goes away is cancelled; a send is left to complete
  // (MPI_Request_free): its buffer is the tile, which outlives the request in a correct program.
  ~transfer_op() {
    if (!m_posted.load(std::memory_order_acquire) || m_request == MPI_REQUEST_NULL || mpi_finalized()) return;
    if (m_receive) {
      MPI_Cancel(&m_request);
      MPI_Wait(&m_request, MPI_STATUS_IGNORE);
    } else {
      MPI_Request_free(&m_request);
    }
  }

  /// Posts the operation: `bytes` at `buffer` to or from `peer` with `tag` on `comm`.
  void post(void* buffer, std::size_t bytes, int peer, int tag, MPI_Comm comm) {
    // Counts are checked where tiles are registered; this is the last guard.
    HETERO_EXPECTS(bytes <= static_cast<std::size_t>(INT_MAX), "a tile of ", bytes,
                   " bytes cannot move between ranks; allowed: at most ", INT_MAX, " bytes");
    if (m_receive) {
      HETERO_MPI_CHECK(MPI_Irecv, buffer, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, &m_request);
    } else {
      HETERO_MPI_CHECK(MPI_Isend, buffer, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, &m_request);
    }
    m_posted.store(true, std::memory_order_release);
  }

  /// The operation could not be posted (its start failed): it counts as complete, so that the
  /// graph's wait ends and reports the failure.
  void abandon() noexcept { m_posted.store(true, std::memory_order_release); }

  /// Whether the operation completed (false before it is posted).
  [[nodiscard]] bool test() {
    if (!m_posted.load(std::memory_order_acquire)) return false;
    if (m_request == MPI_REQUEST_NULL) return true;
    int done = 0;
    HETERO_MPI_CHECK(MPI_Test, &m_request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  }

 private:
  bool m_receive;
  std::atomic<bool> m_posted{false};
  MPI_Request m_request = MPI_REQUEST_NULL;
};

/// What a transfer's done node holds: its operation (owned), tested by the graph's polling.
struct transfer_source {
  std::unique_ptr<transfer_op> op;
  [[nodiscard]] bool test() const { return op->test(); }
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_TRANSFER_HPP

/// @file
/// Tiles moving between ranks. Every rank declares every task, so every rank knows which
/// version of a tile each rank reads: the owner declares one send per version and reading rank,
/// the reader one receive into its copy, both in declaration order (no message asks for the
/// data). Each move is two nodes: a start (posts the MPI operation when its dependencies are met:
/// the send after the writer of that version, the receive after the readers of the copy's
/// previous version) and a done node, which the graph's channel completes (one MPI_Testsome
/// over all moves in flight per round of polling). Messages are tagged by
/// the tile; successive versions of one tile between two ranks are never in flight at once out
/// of order, since each waits for the previous one's done node, and MPI does not let messages
/// of one tag and pair overtake each other.
#ifndef HETERO_TASK_DETAIL_DATA_TRANSFER_HPP
#define HETERO_TASK_DETAIL_DATA_TRANSFER_HPP

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"

namespace hetero::detail {

/// One move of one version of a tile between this rank and `peer` (a send or a receive).
struct tile_move {
  int peer = 0;
  std::uint64_t id = 0;       ///< the tile's id (its tag)
  std::uint64_t version = 0;  ///< the version moving, counted alike on both ranks
  std::size_t bytes = 0;
  MPI_Comm comm = MPI_COMM_NULL;  ///< the graph's tile communicator
  void* into = nullptr;           ///< a receive: this rank's copy
};

/// The MPI tag of tile `id` (tiles are counted so that ids stay below the tag bound).
inline int tile_tag(std::uint64_t id) noexcept { return static_cast<int>(id); }

/// The largest tag MPI allows on `comm`.
inline std::int64_t mpi_tag_bound(MPI_Comm comm) {
  int* bound = nullptr;
  int found = 0;
  HETERO_MPI_CHECK(MPI_Comm_get_attr, comm, MPI_TAG_UB, static_cast<void*>(&bound), &found);
  return found && bound ? *bound : 32767;
}

/// Posts the move of a tile: `bytes` at `buffer` to (a send) or from (`receive`) `peer`, with
/// `tag`, on `comm`; returns its request.
inline MPI_Request post_transfer(bool receive, void* buffer, std::size_t bytes, int peer, int tag, MPI_Comm comm) {
  // Counts are checked where tiles are registered; this is the last guard.
  HETERO_EXPECTS(bytes <= static_cast<std::size_t>(INT_MAX), "a tile of ", bytes,
                 " bytes cannot move between ranks; allowed: at most ", INT_MAX, " bytes");
  MPI_Request request = MPI_REQUEST_NULL;
  if (receive) {
    HETERO_MPI_CHECK(MPI_Irecv, buffer, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, &request);
  } else {
    HETERO_MPI_CHECK(MPI_Isend, buffer, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, &request);
  }
  return request;
}

/// Tells `peer`, whose receive of a tile with `tag` is posted or will be, that the version will
/// not come (this rank could not send it): an empty message with the tile's tag ends that
/// receive with 0 bytes, and the reader's move cancelled (`remote_channel::progress_transfers`;
/// a tile of 0 bytes cannot be told apart, and its send has nothing that could fail). Its request
/// is freed at once (the message completes on its own). False where even this cannot be posted:
/// the reader then waits until its timeout.
inline bool send_cancelled(int peer, int tag, MPI_Comm comm) noexcept {
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Isend(nullptr, 0, MPI_BYTE, peer, tag, comm, &request) != MPI_SUCCESS) return false;
  return MPI_Request_free(&request) == MPI_SUCCESS;
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_TRANSFER_HPP

/// @file
/// Storage that the images of one node share: each image's part of a coarray allocated with
/// `MPI_Win_allocate_shared` on its node's images, so that a get or put between two images of
/// one node is a copy made by the calling thread. MPICH's `MPI_Get` and `MPI_Put` (every window
/// kind, ch4 with UCX as Debian builds it) are served only when the target enters MPI: a target
/// busy in a kernel holds the origin for as long as the kernel runs (docs/results/distarray.md).
#ifndef HETERO_DISTARRAY_DETAIL_NODE_SEGMENT_HPP
#define HETERO_DISTARRAY_DETAIL_NODE_SEGMENT_HPP

#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/mpi/world_nodes.hpp"

namespace hetero::detail {

/// This image's storage of `T`, shared with the images of `comm` on its node.
template <class T>
class node_segment {
 public:
  /// The images of `comm` on this node (collective over `comm`), for the constructor.
  static owned_comm node_of(MPI_Comm comm, const wait_policy& policy) {
    const blocking_call blocked(policy, "coarray set-up (node split)", wait_kind::collective);
    return owned_comm::split_shared(comm);
  }

  /// Raises `runtime_error` when `images` parts of `size` elements exceed the node's memory: MPI
  /// does not refuse such a request on every image alike (MPICH hangs the images it did not
  /// refuse), so this image refuses it first, as an allocation that cannot be made.
  static void check_fits(std::int64_t size, int images, std::string_view what) {
    const double bytes = static_cast<double>(size) * static_cast<double>(sizeof(T)) * images;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return;  // unknown: left to MPI
    const double memory = static_cast<double>(pages) * static_cast<double>(page);
    if (bytes > memory)
      raise<runtime_error>(what, ": ", images, " image(s) of this node would share ", bytes,
                           " bytes, more than the node's memory (", memory,
                           " bytes); allocate less, or set shared_memory = false to allocate each image's "
                           "part on its own");
  }

  /// Allocates `size` elements, zeroed, for this image (collective over `node`, the images of
  /// `comm` on this node (`node_of`); each image's part on its own pages, near its owner).
  node_segment(MPI_Comm comm, owned_comm node, std::int64_t size, const wait_policy& policy)
      : m_policy(policy), m_node(std::move(node)) {
    MPI_Info info = MPI_INFO_NULL;
    HETERO_MPI_CHECK(MPI_Info_create, &info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    int rc = MPI_SUCCESS;
    {
      const blocking_call blocked(policy, "coarray set-up (MPI_Win_allocate_shared)", wait_kind::collective);
      rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(size) * static_cast<MPI_Aint>(sizeof(T)),
                                   static_cast<int>(sizeof(T)), info, m_node.get(), &base, &m_win);
    }
    MPI_Info_free(&info);
    check_mpi(rc, "MPI_Win_allocate_shared");
    HETERO_MPI_CHECK(MPI_Win_set_errhandler, m_win, MPI_ERRORS_RETURN);
    m_local = static_cast<T*>(base);
    if (size > 0) std::memset(static_cast<void*>(m_local), 0, static_cast<std::size_t>(size) * sizeof(T));
    // Every image of `comm`: its storage when it shares this node, else none.
    int images = 0;
    HETERO_MPI_CHECK(MPI_Comm_size, comm, &images);
    m_peers.assign(static_cast<std::size_t>(images), nullptr);
    const std::vector<int> ranks = ranks_in(m_node.get(), comm);
    for (int r = 0; r < m_node.size(); ++r) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* p = nullptr;
      HETERO_MPI_CHECK(MPI_Win_shared_query, m_win, r, &bytes, &unit, &p);
      m_peers[static_cast<std::size_t>(ranks[static_cast<std::size_t>(r)])] = static_cast<T*>(p);
    }
    // The epoch in which MPI_Win_sync orders this image's loads and stores with its
    // neighbours'; the zeroes are in place before any image reads them (the window's set-up,
    // which follows, synchronises the images).
    HETERO_MPI_CHECK(MPI_Win_lock_all, MPI_MODE_NOCHECK, m_win);
    HETERO_MPI_CHECK(MPI_Win_sync, m_win);
  }
  node_segment(const node_segment&) = delete;
  node_segment& operator=(const node_segment&) = delete;
  ~node_segment() {
    if (m_win == MPI_WIN_NULL || mpi_finalized()) return;
    // Collective over the node's images: one that keeps its coarray while the others drop
    // theirs holds them here, until the watchdog ends the job.
    const blocking_call blocked(m_policy, "coarray tear-down (MPI_Win_free)", wait_kind::collective);
    MPI_Win_unlock_all(m_win);
    MPI_Win_free(&m_win);
  }

  /// This image's storage.
  [[nodiscard]] T* local() const noexcept { return m_local; }
  /// The storage of image `image` of the coarray's communicator when it shares this node,
  /// else null.
  [[nodiscard]] T* peer(int image) const noexcept { return m_peers[static_cast<std::size_t>(image)]; }
  /// Orders this image's loads and stores of shared storage with the other images' (a memory
  /// barrier: MPI_Win_sync). Before a direct read, after a direct write, at every sync.
  void sync() const { HETERO_MPI_CHECK(MPI_Win_sync, m_win); }

 private:
  wait_policy m_policy;
  owned_comm m_node;
  MPI_Win m_win = MPI_WIN_NULL;
  T* m_local = nullptr;
  std::vector<T*> m_peers;  // indexed by image
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_NODE_SEGMENT_HPP

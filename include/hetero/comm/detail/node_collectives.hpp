/// @file
/// The node-aware data step of broadcast, reduce, allreduce and gather (`comm_algorithm::hierarchical`)
/// where a communicator's ranks span several nodes and some share one: within each node the
/// node's shared-memory window (in pieces of one slot), between nodes MPI's own call among one
/// leader per node (`comm_state::leader_comm`). Between nodes one vector per node travels
/// instead of one per rank. The ranks agreed on the arguments before any data moves
/// (node_agreement.hpp), so the windows' operations carry no verdicts.
#ifndef HETERO_COMM_DETAIL_NODE_COLLECTIVES_HPP
#define HETERO_COMM_DETAIL_NODE_COLLECTIVES_HPP

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/mpi_op.hpp"
#include "hetero/comm/detail/p2p.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"

namespace hetero::detail {

/// Calls `each(at, count)` for the pieces of `n` elements that fit one slot of `window`.
template <class T, class Each>
void for_each_piece(const shm_channel& window, std::size_t n, Each&& each) {
  const std::size_t piece = std::max<std::size_t>(1, window.capacity() / sizeof(T));
  for (std::size_t at = 0; at < n; at += piece) each(at, std::min(piece, n - at));
}

/// A leader's part between nodes: MPI's non-blocking call `call`, started by
/// `start(leaders, &request)` on the leaders' communicator and waited under the communicator's
/// policy (given up after its timeout).
template <class Start>
void among_leaders(comm_state& st, std::string_view what, std::string_view call, Start&& start) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(start(st.leader_comm(), &request), call);
  wait_one(request, st.policy(), what);
}

/// The index of rank `r` in this rank's node (r must share it).
inline int node_index(const comm_state& st, int r) {
  const auto& members = st.node_members();
  return static_cast<int>(std::find(members.begin(), members.end(), r) - members.begin());
}

/// `n` elements from node rank `from` to every rank of this node, through the node's window.
template <class T>
void broadcast_in_node(comm_state& st, std::string_view what, T* data, std::size_t n, int from) {
  shm_channel& window = *st.node_shm();
  for_each_piece<T>(window, n, [&](std::size_t at, std::size_t c) {
    run_shm<shm_broadcast<T>>(window, what, data + at, c, from, false);
  });
}

/// The root's leader's `n` elements at `from` to the root's `to`, where the root does not lead
/// its node (a point-to-point message of collective `kind`; every other rank does nothing).
template <class T>
void hand_to_root(comm_state& st, collective kind, const T* from, T* to, std::size_t n, int root) {
  const int root_leader = st.leaders()[static_cast<std::size_t>(st.node_of(root))];
  if (root == root_leader || (st.rank() != root && st.rank() != root_leader)) return;
  p2p_batch<T> handoff(st, kind);
  if (st.rank() == root)
    handoff.recv(to, n, root_leader);
  else
    handoff.send(from, n, root);
  handoff.wait();
}

/// The root's `n` elements to every rank: through the root's node window from the root, among
/// the leaders from the root's leader, through the other nodes' windows from their leaders.
template <class T>
void hierarchical_broadcast(comm_state& st, T* data, std::size_t n, int root) {
  const region part("comm", "broadcast", "node windows and leaders");
  (void)mpi_count(n, "broadcast count");  // on every rank, before the node's window: not the leaders' alone
  const int root_node = st.node_of(root);
  const bool root_here = st.node_of(st.rank()) == root_node;
  if (root_here) broadcast_in_node(st, "broadcast", data, n, node_index(st, root));
  if (st.leads_node())
    among_leaders(st, "broadcast", "MPI_Ibcast", [&](MPI_Comm leaders, MPI_Request* r) {
      return MPI_Ibcast(data, mpi_count(n, "broadcast count"), mpi_type<T>(), root_node, leaders, r);
    });
  if (!root_here) broadcast_in_node(st, "broadcast", data, n, 0);
}

/// Each node's `n` elements reduced at its leader into `partial` (the leader's, null elsewhere):
/// `send` through the node's window, folded in node-rank order. `send` may be `partial`.
template <class T, class R>
void reduce_in_node(comm_state& st, std::string_view what, const T* send, T* partial, std::size_t n,
                    const R& reduction) {
  shm_channel& window = *st.node_shm();
  for_each_piece<T>(window, n, [&](std::size_t at, std::size_t c) {
    run_shm<shm_reduce<T, R>>(window, what, send + at, partial ? partial + at : nullptr, c, reduction, 0);
  });
}

/// `send` (null: in place) reduced element-wise over every rank into `recv` on every rank.
template <class T, class R>
void hierarchical_allreduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction) {
  const region part("comm", "allreduce", "node windows and leaders");
  (void)mpi_count(n, "allreduce count");  // on every rank, before the node's window: not the leaders' alone
  const bool leads = st.leads_node();
  reduce_in_node(st, "allreduce", send ? send : recv, leads ? recv : nullptr, n, reduction);
  if (leads) {
    const mpi_reduction<T, R> op(reduction);
    among_leaders(st, "allreduce", "MPI_Iallreduce", [&](MPI_Comm leaders, MPI_Request* r) {
      return MPI_Iallreduce(MPI_IN_PLACE, recv, mpi_count(n, "allreduce count"), op.type(), op.op(), leaders, r);
    });
  }
  broadcast_in_node(st, "allreduce", recv, n, 0);
}

/// `send` (null at the root: in place) reduced element-wise over every rank into `recv` at
/// `root`: each node's at its leader, the leaders' at the root's leader, which hands the result
/// to the root where it does not lead its node.
template <class T, class R>
void hierarchical_reduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction, int root) {
  const region part("comm", "reduce", "node windows and leaders");
  (void)mpi_count(n, "reduce count");  // on every rank, before the node's window: not the leaders' alone
  const bool leads = st.leads_node();
  const bool at_root = st.rank() == root;
  const int root_leader = st.leaders()[static_cast<std::size_t>(st.node_of(root))];
  T* partial = leads ? host_ops::scratch<T>(st, 0, n) : nullptr;
  T* out = st.rank() != root_leader ? nullptr : at_root ? recv : host_ops::scratch<T>(st, 1, n);
  reduce_in_node(st, "reduce", send && send != recv ? send : recv, partial, n, reduction);
  if (leads) {
    // Never MPI_IN_PLACE: MPICH 4.0.2 crashes in an in-place reduce at a root other than 0.
    const mpi_reduction<T, R> op(reduction);
    among_leaders(st, "reduce", "MPI_Ireduce", [&](MPI_Comm leaders, MPI_Request* r) {
      return MPI_Ireduce(partial, out, mpi_count(n, "reduce count"), op.type(), op.op(), st.node_of(root), leaders,
                         r);
    });
  }
  hand_to_root(st, collective::reduce, out, recv, n, root);
}

/// Every rank's `n` elements (`send`; null at the root: in place, its block at
/// recv + root * n) in rank order at `root`: each node's blocks at its leader through the window,
/// the nodes' at the root's leader by MPI's gatherv among the leaders, in rank order there, and
/// on to the root where it does not lead its node.
template <class T>
void hierarchical_gather(comm_state& st, const T* send, T* recv, std::size_t n, int root) {
  const region part("comm", "gather", "node windows and leaders");
  shm_channel& window = *st.node_shm();
  const auto q = static_cast<std::size_t>(window.size());
  const auto p = static_cast<std::size_t>(st.size());
  const bool leads = st.leads_node();
  const bool at_root = st.rank() == root;
  const int root_leader = st.leaders()[static_cast<std::size_t>(st.node_of(root))];
  const T* mine = send ? send : recv + static_cast<std::size_t>(root) * n;
  (void)mpi_count(p * n, "gather's total count");  // every rank alike: the leaders' counts fit an int
  // This node's blocks in node-rank order (ascending ranks) at its leader, a slot per rank at a time.
  const std::size_t piece = std::max<std::size_t>(1, window.capacity() / sizeof(T));
  T* node_blocks = leads ? host_ops::scratch<T>(st, 0, q * n) : nullptr;
  T* pieces = leads && n > piece ? host_ops::scratch<T>(st, 1, q * piece) : node_blocks;
  for_each_piece<T>(window, n, [&](std::size_t at, std::size_t c) {
    run_shm<shm_gather<T>>(window, "gather", mine + at, pieces, c, 0);
    if (pieces != node_blocks)
      for (std::size_t i = 0; i < q; ++i) host_ops::copy(node_blocks + i * n + at, pieces + i * c, c);
  });
  if (!leads) return hand_to_root(st, collective::gather, static_cast<const T*>(nullptr), recv, p * n, root);
  const bool collects = st.rank() == root_leader;
  const bool in_order = st.nodes_in_rank_order();
  // By node at the root's leader: straight into the root's buffer where that is rank order.
  T* by_node = !collects ? nullptr : at_root && in_order ? recv : host_ops::scratch<T>(st, 2, p * n);
  std::vector<int>& counts = st.int_list(0);
  std::vector<int>& displs = st.int_list(1);
  counts.assign(st.leaders().size(), 0);
  displs.assign(st.leaders().size(), 0);
  const int block = mpi_count(n, "gather count");
  for (std::size_t r = 0; r < p; ++r) counts[static_cast<std::size_t>(st.node_of(static_cast<int>(r)))] += block;
  for (std::size_t k = 1; k < counts.size(); ++k) displs[k] = displs[k - 1] + counts[k - 1];
  const MPI_Datatype type = mpi_type<T>();
  among_leaders(st, "gather", "MPI_Igatherv", [&](MPI_Comm leaders, MPI_Request* r) {
    return MPI_Igatherv(node_blocks, mpi_count(q * n, "gather count"), type, by_node, counts.data(), displs.data(),
                        type, st.node_of(root), leaders, r);
  });
  if (!collects) return;
  T* out = at_root ? recv : host_ops::scratch<T>(st, 3, p * n);
  if (by_node != out) {
    // Node k's blocks lie at displs[k] in its ranks' order: rank r's is the next of its node's.
    for (std::size_t r = 0; r < p; ++r) {
      int& next = displs[static_cast<std::size_t>(st.node_of(static_cast<int>(r)))];
      host_ops::copy(out + r * n, by_node + next, n);
      next += block;
    }
  }
  hand_to_root(st, collective::gather, out, recv, p * n, root);
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_NODE_COLLECTIVES_HPP

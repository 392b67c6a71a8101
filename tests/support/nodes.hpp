// How MPI places the ranks of a communicator on nodes, from its own split by shared memory
// (emulated nodes count as nodes): the reference the tests check hetero's view of the nodes
// against, and the way a test picks its ranks by node.
#ifndef HETERO_TESTS_SUPPORT_NODES_HPP
#define HETERO_TESTS_SUPPORT_NODES_HPP

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace hetero::testing {

struct node_layout {
  std::vector<int> leader_of;  ///< per rank of the communicator: its node's lowest rank
  int rank = 0;                ///< this rank in the communicator
  int node_size = 1;           ///< ranks on this rank's node

  [[nodiscard]] int leader(int r) const { return leader_of[static_cast<std::size_t>(r)]; }
  [[nodiscard]] bool same_node(int a, int b) const { return leader(a) == leader(b); }
  /// Whether this rank is its node's lowest (the leader of hetero's node-aware agreement).
  [[nodiscard]] bool leads() const { return leader(rank) == rank; }
  [[nodiscard]] int nodes() const {
    int count = 0;
    for (std::size_t r = 0; r < leader_of.size(); ++r) count += leader_of[r] == static_cast<int>(r);
    return count;
  }
  /// Whether every node holds consecutive ranks, the nodes in rank order.
  [[nodiscard]] bool in_rank_order() const {
    for (std::size_t r = 1; r < leader_of.size(); ++r)
      if (leader_of[r] != leader_of[r - 1] && leader_of[r] != static_cast<int>(r)) return false;
    return true;
  }
};

/// The node layout of `comm` (collective).
inline node_layout node_layout_of(MPI_Comm comm = MPI_COMM_WORLD) {
  node_layout layout;
  int size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &layout.rank);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &layout.node_size);
  int leader = layout.rank;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  layout.leader_of.resize(static_cast<std::size_t>(size));
  MPI_Allgather(&leader, 1, MPI_INT, layout.leader_of.data(), 1, MPI_INT, comm);
  return layout;
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_NODES_HPP

/// @file
/// Which node each rank of `MPI_COMM_WORLD` is on: found once by `hetero::runtime` (its node
/// split) and kept for the process, so that the nodes of any communicator over the world's ranks
/// are known without communicating. A communicator's construction then needs no node split of
/// its own where all its ranks share one node (the node split is a collective over all the
/// ranks: an all-gather inside MPI at scale, and the slowest step of the set-up on a busy node).
#ifndef HETERO_CORE_MPI_WORLD_NODES_HPP
#define HETERO_CORE_MPI_WORLD_NODES_HPP

#include <mpi.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/owned_comm.hpp"

namespace hetero::detail {

/// Each rank of `from` as a rank of `to` (MPI's group translation, no message); `MPI_UNDEFINED`
/// for a rank that `to` does not hold.
inline std::vector<int> ranks_in(MPI_Comm from, MPI_Comm to) {
  int size = 0;
  HETERO_MPI_CHECK(MPI_Comm_size, from, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), translated(ranks.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  MPI_Group group = MPI_GROUP_NULL, target = MPI_GROUP_NULL;
  HETERO_MPI_CHECK(MPI_Comm_group, from, &group);
  HETERO_MPI_CHECK(MPI_Comm_group, to, &target);
  const int rc = MPI_Group_translate_ranks(group, size, ranks.data(), target, translated.data());
  MPI_Group_free(&group);
  MPI_Group_free(&target);
  check_mpi(rc, "MPI_Group_translate_ranks");
  return translated;
}

class world_nodes {
 public:
  /// Publishes the node leader (the lowest world rank of the node) of every world rank; called
  /// by the runtime on every rank at once, after its node split. The nodes of a process never
  /// change, so a later runtime publishes the same.
  static void publish(std::vector<int> leader_of_world_rank) {
    auto leaders = std::make_shared<const std::vector<int>>(std::move(leader_of_world_rank));
    const std::lock_guard lock(mutex());
    slot() = std::move(leaders);
  }

  /// The node leader of every rank of `comm`, as a rank of `comm` (its node's lowest), found
  /// locally; empty where the world's nodes were not published (no `hetero::runtime` yet) or a
  /// rank of `comm` is not in `MPI_COMM_WORLD`. Every rank of `comm` gets the same answer, so a
  /// caller that falls back to a node split when it is empty falls back on every rank.
  [[nodiscard]] static std::vector<int> leaders_of(MPI_Comm comm) {
    std::shared_ptr<const std::vector<int>> world;
    {
      const std::lock_guard lock(mutex());
      world = slot();
    }
    if (!world) return {};
    const std::vector<int> in_world = ranks_in(comm, MPI_COMM_WORLD);
    // Each rank's node by its world leader; a node's leader in `comm` is its first rank there.
    std::vector<int> leaders(in_world.size());
    std::unordered_map<int, int> first;  // world leader -> the node's first rank of comm
    for (std::size_t r = 0; r < in_world.size(); ++r) {
      const int w = in_world[r];
      if (w == MPI_UNDEFINED || w < 0 || static_cast<std::size_t>(w) >= world->size()) return {};
      leaders[r] = first.try_emplace((*world)[static_cast<std::size_t>(w)], static_cast<int>(r)).first->second;
    }
    return leaders;
  }

  /// The number of ranks of `comm` on this rank's node: from the published nodes where they
  /// cover `comm` (local), else by a node split (collective over `comm`).
  [[nodiscard]] static int node_size(MPI_Comm comm) {
    const std::vector<int> leaders = leaders_of(comm);
    if (leaders.empty()) return owned_comm::split_shared(comm).size();
    int rank = 0;
    HETERO_MPI_CHECK(MPI_Comm_rank, comm, &rank);
    return static_cast<int>(std::count(leaders.begin(), leaders.end(), leaders[static_cast<std::size_t>(rank)]));
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::shared_ptr<const std::vector<int>>& slot() {
    static std::shared_ptr<const std::vector<int>> leaders;
    return leaders;
  }
};

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_WORLD_NODES_HPP

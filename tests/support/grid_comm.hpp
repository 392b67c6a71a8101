// One hetero::communicator over the world's ranks for the process grids a test draws by the
// dozen. A grid made on it shares it; a grid made on MPI_COMM_WORLD makes a communicator of its
// own (a duplicate and a shared-memory window), which takes about 0.07 s when 3 ranks share 2
// cores: most of the time of the distarray and io tests on 3 ranks, spent on no assertion.
// Made at the first call (collective over the world); the test main frees it before the runtime
// ends (release_grid_comm).
#ifndef HETERO_TESTS_SUPPORT_GRID_COMM_HPP
#define HETERO_TESTS_SUPPORT_GRID_COMM_HPP

#include <hetero/comm/communicator.hpp>

#include <optional>

namespace hetero::testing {

inline std::optional<hetero::communicator>& grid_comm_slot() {
  static std::optional<hetero::communicator> comm;
  return comm;
}

/// The shared communicator over MPI_COMM_WORLD (made at the first call, on every rank).
inline const hetero::communicator& grid_comm() {
  auto& comm = grid_comm_slot();
  if (!comm) comm.emplace();
  return *comm;
}

/// Frees the shared communicator, if made (collective over the world where it was).
inline void release_grid_comm() { grid_comm_slot().reset(); }

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_GRID_COMM_HPP

// This rank and the number of ranks of MPI_COMM_WORLD, for tests that check per-rank results.
#ifndef HETERO_TESTS_SUPPORT_WORLD_HPP
#define HETERO_TESTS_SUPPORT_WORLD_HPP

#include <mpi.h>

namespace hetero::testing {

/// The number of ranks of MPI_COMM_WORLD.
inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

/// This rank's number in MPI_COMM_WORLD.
inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_WORLD_HPP

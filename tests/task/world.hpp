// This rank and the number of ranks of MPI_COMM_WORLD, for the cross-rank task tests.
#ifndef HETERO_TESTS_TASK_WORLD_HPP
#define HETERO_TESTS_TASK_WORLD_HPP

#include <mpi.h>

namespace hetero::testing {

inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_TASK_WORLD_HPP

// The options of a graph of this rank alone (MPI_COMM_SELF) with a number of workers, shared by
// the task tests: one definition, as the unity units that join their files need (tests/task's
// programs share one executable, cmake/HeteroTesting.cmake).
#pragma once

#include <hetero/task/options.hpp>

#include <mpi.h>

#include <cstddef>

namespace task_test {

inline hetero::task_options local(int workers, std::size_t window = 4096) {
  return {.workers = workers, .comm = MPI_COMM_SELF, .window = window};
}

}  // namespace task_test

// A self-test of the test infrastructure: the last rank fails one check, the others pass.
// CMake expects the run to fail, and rank 0's output to say another rank failed and to show
// the failing rank's report.
#include <mpi.h>

#include <catch2/catch_test_macros.hpp>

TEST_CASE("only the last rank fails", "[support]") {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int planted = rank == size - 1 ? 1 : 0;
  CHECK(planted == 0);
}

// The main of hetero's MPI tests: brings up the runtime (MPI + Kokkos), runs Catch2 on every
// rank, and combines the ranks' results (see catch_mpi.hpp).
#include <hetero/core/runtime.hpp>

#include "catch_mpi.hpp"
#include "grid_comm.hpp"

int main(int argc, char** argv) {
  hetero::runtime runtime(argc, argv);
  const int status = hetero::testing::run_catch_session(argc, argv);
  hetero::testing::release_grid_comm();
  return status;
}

// The main of hetero's MPI tests: brings up the runtime (MPI + Kokkos), runs Catch2 on every
// rank, and combines the ranks' results (see catch_mpi.hpp).
#include <hetero/core/runtime.hpp>

#include "catch_mpi.hpp"

int main(int argc, char** argv) {
  hetero::runtime runtime(argc, argv);
  return hetero::testing::run_catch_session(argc, argv);
}

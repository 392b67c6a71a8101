// The main of the tests under MPI_THREAD_FUNNELED (funneled.hpp): MPI initialised here, the
// runtime brings up Kokkos alone, Catch2 runs on every rank (catch_mpi.hpp).
#include <hetero/core/runtime.hpp>

#include <mpi.h>

#include "catch_mpi.hpp"
#include "funneled.hpp"
#include "grid_comm.hpp"

namespace {
int g_provided = -1;
}  // namespace

int hetero::testing::provided_thread_level() { return g_provided; }

int main(int argc, char** argv) {
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &g_provided);
  int failures = 0;
  {
    hetero::runtime runtime;  // Kokkos (MPI is this program's)
    failures = hetero::testing::run_catch_session(argc, argv);
    hetero::testing::release_grid_comm();
  }
  MPI_Finalize();
  return failures;
}

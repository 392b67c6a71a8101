// An application that initialises MPI itself (at a lower thread level) and lets the runtime
// bring up Kokkos: the runtime reports MPI's thread level, finalises Kokkos only, and leaves
// MPI to the application.
#include <hetero/core/runtime.hpp>

#include <catch2/catch_test_macros.hpp>

#include "catch_mpi.hpp"

namespace {
int g_provided = -1;
}

TEST_CASE("a user-initialised MPI is left alone; Kokkos is the runtime's", "[core][runtime]") {
  {
    hetero::runtime rt;
    CHECK_FALSE(rt.owns_mpi());
    CHECK(rt.owns_kokkos());
    CHECK(static_cast<int>(rt.mpi_thread_level()) == g_provided);
    double sum = 0;
    Kokkos::parallel_reduce(
        "sum", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 1000), [](int i, double& s) { s += i; },
        sum);
    CHECK(sum == 499500.0);
  }
  CHECK_FALSE(Kokkos::is_initialized());
  CHECK_FALSE(hetero::detail::mpi_finalized());
  int size = 0, total = 0, one = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == size);
}

int main(int argc, char** argv) {
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &g_provided);
  const int failures = hetero::testing::run_catch_session(argc, argv);
  MPI_Finalize();
  return failures;
}

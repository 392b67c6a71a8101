// An application that initialises MPI and Kokkos itself: the runtime owns neither, and both
// are still usable after it is gone.
#include <hetero/core/runtime.hpp>

#include <catch2/catch_test_macros.hpp>

#include "catch_mpi.hpp"

TEST_CASE("user-initialised MPI and Kokkos are left alone", "[core][runtime]") {
  {
    hetero::runtime rt;
    CHECK_FALSE(rt.owns_mpi());
    CHECK_FALSE(rt.owns_kokkos());
  }
  REQUIRE(Kokkos::is_initialized());
  REQUIRE_FALSE(hetero::detail::mpi_finalized());
  long sum = 0;
  Kokkos::parallel_reduce(
      "sum", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 100), [](int i, long& s) { s += i; }, sum);
  CHECK(sum == 4950);
  int size = 0, total = 0, one = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == size);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Kokkos::initialize(argc, argv);
  const int failures = hetero::testing::run_catch_session(argc, argv);
  Kokkos::finalize();
  MPI_Finalize();
  return failures;
}

// The MPI the tests were built and launched with is the one configured: MPI_Get_library_version
// names HETERO_EXPECTED_MPI (hetero.sh pins MPICH's wrapper and launcher, so that an Open MPI
// installed beside it, e.g. by PETSc, changes nothing), and the launcher started this test's
// ranks as one job (a launcher of another MPI starts single-rank jobs instead). CTest starts it
// on 2 ranks; tools/nodes/scale.sh on 16 or 32.
#include <mpi.h>

#include <catch2/catch_test_macros.hpp>

#include <string>

TEST_CASE("the tests run on the MPI they were configured for", "[core][mpi]") {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  INFO("MPI_CXX_COMPILER " << HETERO_MPI_CXX_COMPILER);
  CHECK(size >= 2);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  const std::string library(version, static_cast<std::size_t>(length));
  const std::string expected = HETERO_EXPECTED_MPI;
  if (expected.empty()) SKIP("HETERO_EXPECTED_MPI is not set (hetero.sh sets it to MPICH): " + library);
  INFO("MPI_Get_library_version: " << library);
  CHECK(library.find(expected) != std::string::npos);
}

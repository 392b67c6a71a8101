// The runtime as the only owner of MPI and Kokkos: it initialises both, finalises both when it
// goes, and refuses to start again once MPI is finalised. This executable has its own main,
// because MPI can be initialised only once per process.
#include <hetero/core/runtime.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "catch_mpi.hpp"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("the runtime initialises and finalises what it owns, once", "[core][runtime]") {
  REQUIRE_FALSE(hetero::detail::mpi_initialized());
  REQUIRE_FALSE(Kokkos::is_initialized());

  // Kokkos arguments are honoured and removed from argv; the others are kept in order.
  std::vector<std::string> words = {"prog", "--first", std::string(hetero::detail::kokkos_threads_flag()) + "=1",
                                    "--last"};
  std::vector<char*> pointers;
  for (auto& w : words) pointers.push_back(w.data());
  pointers.push_back(nullptr);
  int argc = 4;
  char** argv = pointers.data();
  {
    hetero::runtime rt(argc, argv);
    CHECK(rt.owns_mpi());
    CHECK(rt.owns_kokkos());
    CHECK(hetero::detail::mpi_initialized());
    CHECK(Kokkos::is_initialized());
    CHECK(rt.mpi_thread_level() == hetero::thread_level::multiple);  // MPICH provides it
    CHECK(rt.host_threads() == 1);
    REQUIRE(argc == 3);
    CHECK(std::string(argv[1]) == "--first");
    CHECK(std::string(argv[2]) == "--last");
    CHECK(argv[3] == nullptr);
    {
      hetero::runtime twice;  // double initialisation: nests, owns nothing
      CHECK_FALSE(twice.owns_mpi());
      CHECK_FALSE(twice.owns_kokkos());
      CHECK(twice.world_rank() == rt.world_rank());
    }
    CHECK(Kokkos::is_initialized());
    CHECK_FALSE(hetero::detail::mpi_finalized());
  }
  CHECK_FALSE(Kokkos::is_initialized());
  CHECK(hetero::detail::mpi_finalized());

  CHECK_THROWS_AS(hetero::runtime(), hetero::runtime_error);
  CHECK_THROWS_WITH(hetero::runtime(), ContainsSubstring("MPI was already finalised"));
}

int main(int argc, char** argv) { return hetero::testing::run_catch_session(argc, argv); }

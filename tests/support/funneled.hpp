// The tests whose program initialises MPI itself with MPI_THREAD_FUNNELED, below the
// MPI_THREAD_MULTIPLE that hetero::runtime asks for (their main: funneled_main.cpp; hetero then
// brings up Kokkos only): what hetero refuses there, and what still runs.
#ifndef HETERO_TESTS_SUPPORT_FUNNELED_HPP
#define HETERO_TESTS_SUPPORT_FUNNELED_HPP

#include <hetero/core/mpi.hpp>

#include <string>

namespace hetero::testing {

/// The thread level MPI provided to funneled_main.cpp's MPI_Init_thread.
int provided_thread_level();

/// How hetero's refusals name it: "but MPI provided 'funneled'".
inline std::string provided_text() {
  return std::string("but MPI provided '") +
         hetero::to_string(static_cast<hetero::thread_level>(provided_thread_level())) + "'";
}

/// Whether MPI provided more than asked (MPI_THREAD_MULTIPLE): nothing is refused then.
inline bool provided_multiple() { return provided_thread_level() >= MPI_THREAD_MULTIPLE; }

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_FUNNELED_HPP

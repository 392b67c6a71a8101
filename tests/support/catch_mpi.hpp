// Runs a Catch2 session on every MPI rank: rank 0 prints the report; any other rank writes
// its report to a file and prints it (marked with its rank) only when something failed there.
// Every rank's failure fails the whole test: the result is combined over MPI_COMM_WORLD while
// MPI is up, and each rank also exits with its own status, which mpiexec propagates.
#ifndef HETERO_TESTS_SUPPORT_CATCH_MPI_HPP
#define HETERO_TESTS_SUPPORT_CATCH_MPI_HPP

#include <mpi.h>
#include <unistd.h>

#include <catch2/catch_session.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "random.hpp"

namespace hetero::testing {

inline bool up_and_running() {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  return up && !down;
}

inline int world_rank_or_zero() {
  int rank = 0;
  if (up_and_running()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int run_catch_session(int argc, char** argv) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const int rank = world_rank_or_zero();
  std::string report_file;
  if (rank != 0) {
    report_file = "hetero-test-report-rank" + std::to_string(rank) + "." + std::to_string(::getpid()) + ".txt";
    session.configData().defaultOutputFilename = report_file;
  }
  if (up_and_running()) {
    const auto seed = test_seed();
    if (rank == 0) std::cout << "HETERO_TEST_SEED=" << seed << " (set it to replay this run's random inputs)\n";
  }
  const int own_failures = session.run();
  int failures = own_failures;

  if (up_and_running()) {
    int any = failures;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && any != 0 && failures == 0)
      std::cout << "rank 0 passed, but another rank failed (its report follows on stderr)\n";
    failures = failures != 0 ? failures : (any != 0 ? 1 : 0);
  }
  if (!report_file.empty()) {
    std::ifstream in(report_file);
    std::stringstream text;
    text << in.rdbuf();
    in.close();
    std::remove(report_file.c_str());
    if (own_failures != 0) std::cerr << "===== report of rank " << rank << " =====\n" << text.str() << std::flush;
  }
  return failures;
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_CATCH_MPI_HPP

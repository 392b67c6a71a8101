// Runs a Catch2 session on every MPI rank. Only rank 0 prints: its own report, then the report
// of every other rank that failed (sent to it over MPI), then how many ranks failed. Every
// rank's failure fails the whole test: all ranks exit non-zero when any failed. Where the test
// has finalised MPI itself, each rank exits with its own status (mpiexec propagates it) and
// prints its own report on failure.
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
#include <vector>

#include "random.hpp"
#include "world.hpp"

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

/// Gathers every rank's failure count; rank 0 prints the reports of the ranks that failed, in
/// rank order, after its own. Returns non-zero on every rank when any rank failed.
inline int combine_results(int own_failures, const std::string& report) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> failures(static_cast<std::size_t>(size), 0);
  // Not MPICH's spinning MPI_Allgather: the ranks done first would hold the cores of the last.
  MPI_Request request;
  MPI_Iallgather(&own_failures, 1, MPI_INT, failures.data(), 1, MPI_INT, MPI_COMM_WORLD, &request);
  polite_wait(request);
  int failed_ranks = 0;
  for (int r = 0; r < size; ++r) {
    if (failures[static_cast<std::size_t>(r)] == 0) continue;
    ++failed_ranks;
    if (r == 0) continue;  // rank 0's report is already on its console
    if (rank == r) {
      const int length = static_cast<int>(report.size());
      MPI_Send(&length, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      MPI_Send(report.data(), length, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 0) {
      int length = 0;
      MPI_Recv(&length, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::string text(static_cast<std::size_t>(length), '\0');
      MPI_Recv(text.data(), length, MPI_CHAR, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::cout << "===== report of rank " << r << " (failed) =====\n" << text;
    }
  }
  if (rank == 0 && failed_ranks > 0)
    std::cout << "===== " << failed_ranks << " of " << size << " rank(s) failed"
              << (failures[0] == 0 ? " (rank 0 passed, another rank failed)" : "") << " =====\n";
  std::cout << std::flush;
  return failed_ranks > 0 ? 1 : 0;
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

  std::string report;
  if (!report_file.empty()) {
    std::ifstream in(report_file);
    std::stringstream text;
    text << in.rdbuf();
    report = text.str();
    in.close();
    std::remove(report_file.c_str());
  }
  if (!up_and_running()) {  // MPI already finalised by the test itself: each rank speaks for itself
    if (own_failures != 0 && rank != 0) std::cerr << "===== report of rank " << rank << " =====\n" << report;
    return own_failures;
  }
  return combine_results(own_failures, report);
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_CATCH_MPI_HPP

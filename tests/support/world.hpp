// This rank and the number of ranks of MPI_COMM_WORLD, for tests that check per-rank results; a
// sum over the ranks by MPI's own allreduce;
// the scale of the short wait limits tests set themselves; a wait for an MPI request that leaves
// the cores to the ranks still working.
#ifndef HETERO_TESTS_SUPPORT_WORLD_HPP
#define HETERO_TESTS_SUPPORT_WORLD_HPP

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace hetero::testing {

/// The number of ranks of MPI_COMM_WORLD.
inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

/// This rank's number in MPI_COMM_WORLD.
inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// The sum of `x` over the ranks of MPI_COMM_WORLD (MPI's own allreduce: a reference, or a count
/// of failures that every rank must agree on).
inline int sum_over_ranks(int x) {
  int total = 0;
  MPI_Allreduce(&x, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

/// How many times longer the wait limits that tests set themselves (the fault tests' 1 s) and
/// the runs they time (the power controller's 0.7 s) are to be: HETERO_TEST_TIME_SCALE, a whole
/// number from 1 to 1000, 1 where unset. CTest leaves it unset; tools/nodes/scale.sh sets it
/// where many more ranks than cores share the machine, for there a healthy call (a coarray's
/// construction over 16 ranks on 2 cores) can take longer than 1 s and be taken for a stuck one.
inline int time_scale() {
  static const int scale = [] {
    const char* given = std::getenv("HETERO_TEST_TIME_SCALE");
    if (given == nullptr || *given == '\0') return 1;
    char* end = nullptr;
    const long value = std::strtol(given, &end, 10);
    if (*end != '\0' || value < 1 || value > 1000)
      throw std::invalid_argument(std::string("HETERO_TEST_TIME_SCALE is '") + given +
                                  "'; it must be a whole number from 1 to 1000");
    return static_cast<int>(value);
  }();
  return scale;
}

/// A number of seconds as hetero's messages print it (a stream's default format: "0.2", "4").
inline std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

/// A wait limit as hetero's deadlock messages print it: "(limit 0.2 s)".
inline std::string limit_text(double seconds) { return "(limit " + seconds_text(seconds) + " s)"; }

/// Waits for an MPI request the way hetero's own waits do: MPI_Test, yielding the core for the
/// first millisecond, then sleeping 50 us between tests. MPICH's blocking calls spin, and a loop
/// that only yields stays runnable: at 32 ranks in 4 nodes of 8 on 2 cores, 31 ranks in such loops
/// (a reference call, the end-of-run MPI_Allgather) left the one rank still in hetero's gather,
/// which sleeps while it waits, too little of the cores to finish for minutes.
inline void polite_wait(MPI_Request request) {
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  while (!done) {
    if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
}

/// Waits, as polite_wait does, until every rank of MPI_COMM_WORLD has called it.
inline void polite_barrier() {
  MPI_Request all;
  MPI_Ibarrier(MPI_COMM_WORLD, &all);
  polite_wait(all);
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_WORLD_HPP

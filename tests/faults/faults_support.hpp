// Helpers of the fault-injection tests: run one rank's part of a fault, catch what it raises,
// and print one line per rank with the outcome and the time it took (for docs/results/core.md; the
// tests assert the outcome, never the time).
#ifndef HETERO_TESTS_FAULTS_SUPPORT_HPP
#define HETERO_TESTS_FAULTS_SUPPORT_HPP

#include <mpi.h>

#include <hetero/core/error.hpp>
#include <hetero/core/wait_timeout.hpp>

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "random.hpp"
#include "world.hpp"

namespace faults {

/// The timeout the fault tests run with (set by their main through runtime_options): 1 s, times
/// HETERO_TEST_TIME_SCALE where tools/nodes/scale.sh crowds many ranks onto few cores.
inline double timeout_seconds() { return 1.0 * hetero::testing::time_scale(); }

/// How hetero's messages print that limit: "(limit 1 s)".
inline std::string limit_text() { return hetero::testing::limit_text(timeout_seconds()); }

/// The start of how a task graph's report prints it: "1.0" (of "1.000000 s").
inline std::string limit_seconds_text() { return std::to_string(hetero::testing::time_scale()) + ".0"; }

/// What one rank saw.
struct outcome {
  std::string kind = "none";  ///< "none", "deadlock_error", "invalid_argument", "runtime_error", "error" (any
                              ///< other hetero::error), "other"
  std::string text;
  std::vector<int> missing;
  double seconds = 0;
  double waited = 0;  ///< a deadlock_error's waited_seconds()
};

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// A communicator of every rank for one case: an object whose set-up gave up leaves an
/// MPI_Comm_idup on it unmatched, which must not meet the ranks' later collectives on the world.
struct case_comm {
  MPI_Comm comm = MPI_COMM_NULL;
  case_comm() { MPI_Comm_dup(MPI_COMM_WORLD, &comm); }
  ~case_comm() { MPI_Comm_free(&comm); }
  case_comm(const case_comm&) = delete;
  case_comm& operator=(const case_comm&) = delete;
};

/// Runs `f` after all ranks met (so the clocks start together) and records what it raised.
template <class F>
outcome attempt(F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  outcome o;
  const auto start = std::chrono::steady_clock::now();
  try {
    f();
  } catch (const hetero::deadlock_error& e) {
    o.kind = "deadlock_error";
    o.text = e.what();
    o.missing = e.missing_ranks();
    o.waited = e.waited_seconds();
  } catch (const hetero::invalid_argument& e) {
    o.kind = "invalid_argument";
    o.text = e.what();
  } catch (const hetero::runtime_error& e) {
    o.kind = "runtime_error";
    o.text = e.what();
  } catch (const hetero::error& e) {
    o.kind = "error";
    o.text = e.what();
  } catch (const std::exception& e) {
    o.kind = "other";
    o.text = e.what();
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

/// Prints `FAULT <fault> | <module> | np <p> | rank <r> | <kind> | <seconds> s`, then meets the
/// other ranks with MPI's own barrier (after a fault, hetero objects are used again only on one
/// rank, to check that they refuse: no collective on them).
inline void report(const std::string& fault, const std::string& module, const outcome& o) {
  std::printf("FAULT %s | %s | np %d | rank %d | %s | %.2f s\n", fault.c_str(), module.c_str(), world_size(),
              world_rank(), o.kind.c_str(), o.seconds);
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Sleeps past the timeout (the "slow rank" fault): `limits` times it.
inline void oversleep(double limits = 1.5) {
  std::this_thread::sleep_for(std::chrono::duration<double>(limits * timeout_seconds()));
}

/// A fresh random number in [lo, hi], the same on every rank (drawn from the test seed; every
/// rank makes the same sequence of calls).
inline long long shared_random(long long lo, long long hi) {
  static auto gen = hetero::testing::rng(4242);
  return lo + static_cast<long long>(gen() % static_cast<std::uint64_t>(hi - lo + 1));
}

/// Whether `v` holds `x`.
inline bool holds(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

/// Makes this rank's next `MPI_Isend` of at least `min_count` elements fail with `MPI_ERR_OTHER`,
/// sending nothing (main.cpp interposes `MPI_Isend` through MPI's profiling interface; every
/// other call passes through).
void fail_next_isend(int min_count = 0);

/// The same for this rank's next `MPI_Irecv` of at least `min_count` elements (nothing posted).
void fail_next_irecv(int min_count = 0);

/// Makes this rank's next `MPI_Testall` fail with `MPI_ERR_OTHER`, its requests left as they were
/// (interposed by main.cpp as `MPI_Isend` is).
void fail_next_testall();

}  // namespace faults

#endif  // HETERO_TESTS_FAULTS_SUPPORT_HPP

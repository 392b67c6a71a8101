// The main of the fault-injection tests: hetero's test main with a short wait timeout, set
// through the runtime option (so every hetero wait in these tests gives up after 1 s), and an
// MPI_Isend, an MPI_Irecv and an MPI_Testall that a test can make fail once
// (faults::fail_next_isend, faults::fail_next_irecv, faults::fail_next_testall).
#include <hetero/core/runtime.hpp>

#include <mpi.h>

#include <atomic>

#include "catch_mpi.hpp"
#include "faults_support.hpp"

namespace {
std::atomic<int> g_fail_next_isend{-1};  // the least count of the MPI_Isend to fail; -1: none
std::atomic<int> g_fail_next_irecv{-1};  // the same for MPI_Irecv
std::atomic<bool> g_fail_next_testall{false};
}  // namespace

void faults::fail_next_isend(int min_count) { g_fail_next_isend.store(min_count); }
void faults::fail_next_irecv(int min_count) { g_fail_next_irecv.store(min_count); }
void faults::fail_next_testall() { g_fail_next_testall.store(true); }

// The profiling interface: this program's MPI_Isend, which fails once when armed (for a count
// of at least the one armed).
extern "C" int MPI_Isend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  int armed = g_fail_next_isend.load(std::memory_order_relaxed);
  while (armed >= 0 && count >= armed)
    if (g_fail_next_isend.compare_exchange_weak(armed, -1)) return MPI_ERR_OTHER;
  return PMPI_Isend(buffer, count, type, dest, tag, comm, request);
}

// Its MPI_Irecv, the same way.
extern "C" int MPI_Irecv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  int armed = g_fail_next_irecv.load(std::memory_order_relaxed);
  while (armed >= 0 && count >= armed)
    if (g_fail_next_irecv.compare_exchange_weak(armed, -1)) return MPI_ERR_OTHER;
  return PMPI_Irecv(buffer, count, type, source, tag, comm, request);
}

// And its MPI_Testall, which fails once when armed (its requests untouched).
extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (g_fail_next_testall.load(std::memory_order_relaxed) && g_fail_next_testall.exchange(false))
    return MPI_ERR_OTHER;
  return PMPI_Testall(count, requests, flag, statuses);
}

int main(int argc, char** argv) {
  hetero::runtime runtime(argc, argv, {.wait_timeout = std::chrono::duration<double>(faults::timeout_seconds())});
  return hetero::testing::run_catch_session(argc, argv);
}

// The PMPI layer, compiled into this test executable (its one translation unit with the wrappers).
#define HETERO_POWER_PMPI_DEFINE
#include <hetero/power/pmpi.hpp>
#include <hetero/power/pmpi.hpp>  // a second inclusion defines nothing more

#include <hetero/core/timer.hpp>
#include <hetero/power/monitor.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

// Counts begin/end pairs per (kind, label), and checks they nest properly.
class recorder : public hetero::observer {
 public:
  void wait_begin(hetero::wait_kind kind, std::string_view label) noexcept override {
    std::lock_guard lock(m_mutex);
    ++m_open;
    m_begins[{kind, std::string(label)}]++;
  }
  void wait_end(hetero::wait_kind kind, std::string_view label) noexcept override {
    std::lock_guard lock(m_mutex);
    --m_open;
    m_ends[{kind, std::string(label)}]++;
  }
  [[nodiscard]] int begins(hetero::wait_kind kind, const std::string& label) const {
    const auto it = m_begins.find({kind, label});
    return it == m_begins.end() ? 0 : it->second;
  }
  [[nodiscard]] bool balanced() const { return m_open == 0 && m_begins == m_ends; }
  [[nodiscard]] int calls() const {
    int n = 0;
    for (const auto& [key, count] : m_begins) n += count;
    return n;
  }

 private:
  std::mutex m_mutex;
  int m_open = 0;
  std::map<std::pair<hetero::wait_kind, std::string>, int> m_begins, m_ends;
};

int rank_of() {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of() {
  int n = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

}  // namespace

TEST_CASE("point-to-point calls and their completion report one wait each", "[power][pmpi]") {
  const int rank = rank_of(), n = size_of();
  const int right = (rank + 1) % n, left = (rank + n - 1) % n;
  recorder r;
  hetero::set_observer(&r);
  int sent = rank * 10, got = -1;
  MPI_Sendrecv(&sent, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(got == left * 10);
  int value = rank;
  MPI_Sendrecv_replace(&value, 1, MPI_INT, right, 2, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(value == left);
  MPI_Request requests[2];
  int a = rank + 100, b = -1;
  MPI_Irecv(&b, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(&a, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  CHECK(b == left + 100);
  MPI_Irecv(&b, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(&a, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &requests[1]);
  int done = 0, tests = 0;
  while (!done) {
    MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
    ++tests;
  }
  MPI_Irecv(&b, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &requests[0]);
  MPI_Send(&a, 1, MPI_INT, right, 5, MPI_COMM_WORLD);
  MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  MPI_Status status;
  MPI_Irecv(&b, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &requests[0]);
  MPI_Ssend(&a, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
  MPI_Waitany(1, requests, &done, &status);
  MPI_Isend(&a, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &requests[1]);
  MPI_Probe(left, 7, MPI_COMM_WORLD, &status);
  MPI_Recv(&b, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
  hetero::set_observer(nullptr);

  using hetero::wait_kind;
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Sendrecv") == 1);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Sendrecv_replace") == 1);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Waitall") == 1);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Testall") == tests);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Send") == 1);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Ssend") == 1);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Wait") == 2);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Waitany") == 1);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Probe") == 1);
  CHECK(r.begins(wait_kind::point_to_point, "MPI_Recv") == 1);
  CHECK(r.calls() == 10 + tests);  // non-blocking starts are not waits
  CHECK(r.balanced());
}

TEST_CASE("collectives report one wait each and still compute the right result", "[power][pmpi]") {
  const int rank = rank_of(), n = size_of();
  recorder r;
  hetero::set_observer(&r);
  MPI_Barrier(MPI_COMM_WORLD);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == n * (n - 1) / 2);
  int root_value = rank == 0 ? 77 : 0;
  MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(root_value == 77);
  std::vector<int> all(static_cast<std::size_t>(n), -1), expected(static_cast<std::size_t>(n));
  std::iota(expected.begin(), expected.end(), 0);
  MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  CHECK(all == expected);
  MPI_Gather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int mine = -1;
  MPI_Scatter(expected.data(), 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(mine == rank);
  std::vector<int> to(static_cast<std::size_t>(n), rank), from(static_cast<std::size_t>(n), -1);
  MPI_Alltoall(to.data(), 1, MPI_INT, from.data(), 1, MPI_INT, MPI_COMM_WORLD);
  CHECK(from == expected);
  int prefix = -1, before = 0;
  MPI_Scan(&rank, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(&rank, &before, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(prefix == rank * (rank + 1) / 2);
  if (rank > 0) CHECK(before == rank * (rank - 1) / 2);
  std::vector<int> ones(static_cast<std::size_t>(n), 1);
  int block = 0;
  MPI_Reduce_scatter_block(ones.data(), &block, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(block == n);
  long long big = 0, one = 1;
  MPI_Allreduce_c(&one, &big, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(big == n);
  hetero::set_observer(nullptr);
  for (const char* call :
       {"MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Allgather", "MPI_Gather", "MPI_Scatter", "MPI_Alltoall",
        "MPI_Scan", "MPI_Exscan", "MPI_Reduce_scatter_block", "MPI_Allreduce_c"})
    CHECK(r.begins(hetero::wait_kind::collective, call) == 1);
  CHECK(r.calls() == 11);
  CHECK(r.balanced());
}

TEST_CASE("one-sided synchronisation is a wait too", "[power][pmpi]") {
  recorder r;
  int exposed = 0;
  MPI_Win win;
  MPI_Win_create(&exposed, sizeof exposed, sizeof exposed, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  hetero::set_observer(&r);
  MPI_Win_fence(0, win);
  const int one = 1;
  MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  hetero::set_observer(nullptr);
  MPI_Win_free(&win);
  if (rank_of() == 0) CHECK(exposed == size_of());
  CHECK(r.begins(hetero::wait_kind::point_to_point, "MPI_Win_fence") == 2);
  CHECK(r.balanced());
}

TEST_CASE("with the monitor installed, a late sender's time is the receiver's wait", "[power][pmpi]") {
  if (size_of() < 2) SKIP("needs a second rank to wait for");
  hetero::power::monitor m;
  m.install();
  hetero::stopwatch barrier;
  MPI_Barrier(MPI_COMM_WORLD);
  double waited = barrier.seconds();
  int token = 0;
  if (rank_of() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
  } else if (rank_of() == 1) {
    hetero::stopwatch watch;
    MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    waited += watch.seconds();
  }
  m.uninstall();
  m.update_until(m.seconds());
  if (rank_of() == 1) {
    // The monitor counts the time inside the barrier and the receive; the stopwatches also count
    // whatever the scheduler took between a stopwatch and the call it brackets, which on an
    // oversubscribed machine is a few milliseconds now and then. So the monitor's wait is at most
    // the stopwatches' (plus clock granularity), and holds most of the sender's 100 ms delay.
    const double monitored = m.accounted_seconds() - m.active_seconds();
    CHECK(waited > 0.05);
    CHECK(monitored <= waited + 0.001);
    CHECK(monitored > 0.05);
  }
}

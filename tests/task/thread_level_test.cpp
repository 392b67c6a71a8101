// Task graphs where the application initialised MPI below MPI_THREAD_MULTIPLE (funneled): a
// graph whose workers would call MPI from threads other than the caller's is refused, with the
// level MPI provided, where it is declared; one whose workers never call MPI runs.
#include <hetero/task/task_graph.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <random>
#include <string>

#include "funneled.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// A completion source that makes no MPI call: a flag set by another task.
struct flag_source {
  static constexpr bool calls_mpi = false;
  const std::atomic<bool>* flag;
  [[nodiscard]] bool test() const { return flag->load(std::memory_order_acquire); }
};

static_assert(hetero::completion_source_calls_mpi<hetero::mpi_request>);
static_assert(!hetero::completion_source_calls_mpi<flag_source>);

}  // namespace

TEST_CASE("under MPI_THREAD_FUNNELED, several workers on several ranks are refused when the graph is made",
          "[task][thread_level]") {
  if (hetero::testing::provided_multiple()) SKIP("MPI provided MPI_THREAD_MULTIPLE (more than asked)");
  if (hetero::testing::world_size() < 2) SKIP("needs 2 ranks");
  CHECK_THROWS_WITH(hetero::task_graph({.workers = 2}),
                    ContainsSubstring("needs MPI_THREAD_MULTIPLE, " + hetero::testing::provided_text()));
}

TEST_CASE("task graphs under MPI_THREAD_FUNNELED", "[task][thread_level]") {
  if (hetero::testing::provided_multiple()) SKIP("MPI provided MPI_THREAD_MULTIPLE (more than asked)");
  std::mt19937 rng(std::random_device{}());
  int value = std::uniform_int_distribution<int>(1, 1 << 20)(rng);
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);  // rank 0's draw: every rank knows what each sends

  SECTION("one worker on every rank: tasks and an adopted MPI request run on this thread") {
    hetero::task_graph graph({.workers = 1});
    hetero::event arrived = graph.event("arrived");
    const int me = hetero::testing::world_rank();
    const int size = hetero::testing::world_size();
    int sent = value + me, received = -1, seen = -1;
    MPI_Request r[2];
    MPI_Irecv(&received, 1, MPI_INT, (me + size - 1) % size, 7, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(&sent, 1, MPI_INT, (me + 1) % size, 7, MPI_COMM_WORLD, &r[1]);
    graph.adopt(hetero::out(arrived), hetero::mpi_request(r[0]), "receive");
    graph.spawn(hetero::in(arrived), [&] { seen = received; });
    graph.wait();
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    CHECK(seen == value + (me + size - 1) % size);
  }

  SECTION("a one-rank graph with several workers refuses an operation that calls MPI") {
    hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF});
    hetero::event done = graph.event("done");
    int sent = value, received = -1;
    MPI_Request r[2];
    MPI_Irecv(&received, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &r[0]);
    MPI_Isend(&sent, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &r[1]);
    CHECK_THROWS_WITH(graph.adopt(hetero::out(done), hetero::mpi_request(r[0]), "self receive"),
                      ContainsSubstring("task_graph::adopt(..., \"self receive\"): the graph's workers poll") &&
                          ContainsSubstring(hetero::testing::provided_text()) &&
                          ContainsSubstring("static constexpr bool calls_mpi = false"));
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);  // refused before anything was declared: still the caller's
    CHECK(received == value);
    int seen = -1;  // the graph still runs what it is given
    graph.spawn(hetero::out(done), [&] { seen = received; });
    graph.wait();
    CHECK(seen == value);
  }

  SECTION("a one-rank graph with several workers adopts an operation that makes no MPI call") {
    hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF});
    hetero::event set = graph.event("set"), ready = graph.event("ready");
    std::atomic<bool> flag{false};
    int payload = -1, seen = -1;
    graph.spawn(hetero::out(set), [&] {
      payload = value;
      flag.store(true, std::memory_order_release);
    });
    graph.adopt(hetero::out(ready), flag_source{&flag}, "flag");
    graph.spawn(hetero::in(ready), [&] { seen = payload; });
    graph.wait();
    CHECK(seen == value);
  }
}

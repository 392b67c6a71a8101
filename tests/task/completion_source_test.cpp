// Operations completing outside the graph (an MPI request; later a comm or dist handle) adopted
// as the writer of an event, and the waits wait() reports to the observer.
#include <hetero/core/observer.hpp>
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

using Catch::Matchers::ContainsSubstring;

namespace {

// Counts the task waits the observer is told about.
class wait_counter : public hetero::observer {
 public:
  void wait_begin(hetero::wait_kind kind, std::string_view label) noexcept override {
    if (kind != hetero::wait_kind::task) return;
    std::lock_guard lock(m_mutex);
    ++begins;
    labels.emplace_back(label);
    waiting = true;
  }
  void wait_end(hetero::wait_kind kind, std::string_view) noexcept override {
    if (kind != hetero::wait_kind::task) return;
    std::lock_guard lock(m_mutex);
    ++ends;
  }
  std::atomic<bool> waiting{false};
  int begins = 0;
  int ends = 0;
  std::vector<std::string> labels;

 private:
  std::mutex m_mutex;
};

// Completes once the observer saw a wait: wait() must be idle (sleeping) to let it complete.
struct after_a_wait {
  const wait_counter* counter;
  bool test() const noexcept { return counter->waiting.load(); }
};

}  // namespace

TEST_CASE("a task depends on a non-blocking MPI collective adopted as an event", "[task][mpi]") {
  int p = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  hetero::task_graph graph({.workers = 2});
  auto reduced = graph.event("reduced");
  double local = me + 1.0, global = 0.0, seen = -1.0;
  int before = 0;
  graph.spawn("independent", [&] { ++before; });
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
  graph.adopt(hetero::out(reduced), hetero::mpi_request(request), "allreduce");
  graph.spawn("use the sum", hetero::in(reduced), [&] { seen = global; });
  graph.wait();
  CHECK(before == 1);
  CHECK(seen == p * (p + 1) / 2.0);
}

TEST_CASE("wait() tells the observer when it waits idle, as a task wait", "[task]") {
  wait_counter counter;
  hetero::set_observer(&counter);
  {
    hetero::task_graph graph({.workers = 1, .comm = MPI_COMM_SELF});  // only the thread in wait() can idle
    auto ready = graph.event("ready");
    bool ran = false;
    graph.adopt(hetero::out(ready), after_a_wait{&counter}, "released by the observer");
    graph.spawn(hetero::in(ready), [&] { ran = true; });
    graph.wait();
    CHECK(ran);
  }
  hetero::set_observer(nullptr);
  CHECK(counter.begins >= 1);
  CHECK(counter.begins == counter.ends);
  bool from_wait = false;
  for (const auto& label : counter.labels) from_wait = from_wait || label == "task_graph::wait";
  CHECK(from_wait);
}

TEST_CASE("adopt refuses remote targets and foreign events", "[task]") {
  hetero::task_graph graph({.workers = 1, .comm = MPI_COMM_SELF});
  hetero::task_graph other({.workers = 1, .comm = MPI_COMM_SELF});
  auto remote = graph.remote_event("R");
  auto theirs = other.event("theirs");
  CHECK_THROWS_WITH(graph.adopt(hetero::out(remote).to(0), hetero::mpi_request(MPI_REQUEST_NULL)),
                    ContainsSubstring("an adopted operation cannot notify other ranks"));
  CHECK_THROWS_WITH(graph.adopt(hetero::out(theirs), hetero::mpi_request(MPI_REQUEST_NULL)),
                    ContainsSubstring("of another task_graph"));
  int ran = 0;  // a completed request releases its readers at once
  graph.adopt(hetero::out(remote), hetero::mpi_request(MPI_REQUEST_NULL), "done already");
  graph.spawn(hetero::in(remote), [&] { ++ran; });
  graph.wait();
  CHECK(ran == 1);
}

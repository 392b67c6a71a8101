// The runtime's trace (runtime_options::trace_file, HETERO_TRACE): one Chrome trace file with
// every rank's tasks, collectives, split loops' parts and waits, merged by rank 0; and the named
// errors of paths that cannot be written, raised on every rank at the start.
#include <hetero/hetero.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <stdlib.h>  // setenv, unsetenv (POSIX)

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "split_spaces.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using hetero::testing::split_device;
using hetero::testing::split_host;

// A file name in the test's folder, the same on every rank (rank 0's random draw).
std::string shared_path(const hetero::communicator& world, const std::string& stem) {
  unsigned long long draw = world.rank() == 0 ? std::random_device{}() : 0;
  world.broadcast(hetero::send_recv_buf(draw), hetero::root(0));
  return std::string(HETERO_TRACE_TEST_DIR) + "/" + stem + "-" + std::to_string(draw) + ".json";
}

hetero::runtime_options traced_to(std::string path) {
  hetero::runtime_options options;
  options.trace_file = std::move(path);
  return options;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the runtime's trace holds every rank's tasks, collectives, split parts and waits", "[trace]") {
  const hetero::communicator world;
  const std::string path = shared_path(world, "trace");
  std::mt19937_64 rng(static_cast<std::uint64_t>(std::random_device{}()));
  const int tasks = 5 + static_cast<int>(rng() % 20);
  const bool split = split_device().name() != split_host().name();
  {
    hetero::runtime traced(traced_to(path));  // nested: MPI and Kokkos stay up; the trace is its own
    hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF});
    std::vector<int> done(static_cast<std::size_t>(tasks), 0);
    for (int t = 0; t < tasks; ++t)
      graph.spawn("trace task", [&done, t] { done[static_cast<std::size_t>(t)] = t + 1; });
    graph.wait();
    for (int t = 0; t < tasks; ++t) REQUIRE(done[static_cast<std::size_t>(t)] == t + 1);
    const long long mine = static_cast<long long>(rng() % 1000);
    const std::vector<long long> all = world.allgather(hetero::send_buf(mine));
    long long expected = 0;
    for (const long long v : all) expected += v;
    CHECK(world.allreduce(hetero::send_buf(mine), hetero::op(hetero::ops::sum{})) == expected);
    using policy = hetero::split_policy<split_device, split_host>;
    Kokkos::View<double*, split_host::memory_space> x("x", 3000);
    hetero::parallel_for(
        "trace split", policy(0, 3000).weight(0.5),
        KOKKOS_LAMBDA(std::int64_t i) { x(i) = static_cast<double>(i); });
    for (std::int64_t i = 0; i < 3000; ++i) REQUIRE(x(i) == static_cast<double>(i));
    { const hetero::wait_scope waiting(hetero::wait_kind::user, "trace user wait"); }
  }  // the trace is written here
  const int all_tasks = world.allreduce(hetero::send_buf(tasks), hetero::op(hetero::ops::sum{}));
  world.barrier();
  if (world.rank() != 0) return;
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  CHECK(text.starts_with("{\"displayTimeUnit\":\"ms\",\"traceEvents\":["));
  CHECK(text.ends_with("]}\n"));
  for (int r = 0; r < world.size(); ++r) {
    INFO("rank " << r);
    CHECK(count(text, "\"name\":\"process_name\",\"args\":{\"name\":\"rank " + std::to_string(r) + "\"}") == 1);
    CHECK(count(text, "\"pid\":" + std::to_string(r) + ",") > 3);
  }
  // Every rank's tasks, each a complete event with its duration.
  CHECK(count(text, "\"cat\":\"task\",\"name\":\"trace task\",\"ts\":") == static_cast<std::size_t>(all_tasks));
  CHECK(count(text, "\"cat\":\"comm\",\"name\":\"allreduce\",\"ts\":") == static_cast<std::size_t>(world.size()));
  CHECK(count(text, "\"cat\":\"wait\",\"name\":\"trace user wait\"") == static_cast<std::size_t>(world.size()));
  CHECK(count(text, R"("module":"user")") >= static_cast<std::size_t>(world.size()));
  if (split) {
    CHECK(count(text, "\"cat\":\"exec\",\"name\":\"trace split:device\",\"ts\":") ==
          static_cast<std::size_t>(world.size()));
    CHECK(count(text, "\"cat\":\"exec\",\"name\":\"trace split:host\",\"ts\":") ==
          static_cast<std::size_t>(world.size()));
    CHECK(count(text, "\"name\":\"trace split\",\"s\":\"t\"") == static_cast<std::size_t>(world.size()));
    CHECK(count(text, "\"cpu_weight\":0.5000") == static_cast<std::size_t>(world.size()));
  } else {
    SKIP("one execution space in this build: a split loop has no parts to trace");
  }
  std::remove(path.c_str());
}

TEST_CASE("a trace path that cannot be written raises a named error on every rank at the start", "[trace]") {
  const hetero::communicator world;
  const std::string missing_dir = std::string(HETERO_TRACE_TEST_DIR) + "/no such folder/trace.json";
  CHECK_THROWS_AS(hetero::runtime(traced_to(missing_dir)), hetero::io_error);  // a file, as every file
  CHECK_THROWS_WITH(hetero::runtime(traced_to(missing_dir)),
                    ContainsSubstring("the trace file '" + missing_dir +
                                      "' (runtime_options::trace_file) cannot be "
                                      "written: No such file or directory") &&
                        ContainsSubstring("allowed: a path"));
  CHECK_THROWS_WITH(hetero::runtime(traced_to(std::string(HETERO_TRACE_TEST_DIR))),
                    ContainsSubstring("Is a directory"));
  CHECK_THROWS_WITH(hetero::runtime(traced_to(std::string())), ContainsSubstring("the path is empty"));
  setenv("HETERO_TRACE", missing_dir.c_str(), 1);
  CHECK_THROWS_WITH(hetero::runtime(), ContainsSubstring("(HETERO_TRACE) cannot be written"));
  unsetenv("HETERO_TRACE");
  // After the failures a good path still works.
  const std::string path = shared_path(world, "after-errors");
  { const hetero::runtime traced(traced_to(path)); }
  world.barrier();
  if (world.rank() == 0) {
    std::ifstream in(path);
    CHECK(in.good());
    std::remove(path.c_str());
  }
}

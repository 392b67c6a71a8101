// An error MPI finds while completing one of hetero's requests (ranks that passed different
// counts to MPI's own broadcast) raises hetero::mpi_error where MPI finds it, instead of ending
// the job: MPICH hands such errors to MPI_COMM_WORLD's handler, fatal by default, whatever the
// handler of the request's communicator (core/mpi/request_errors.hpp). Runs on one node and on
// emulated nodes, where MPI's own call is the only path.
#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

namespace {

// After a failed call on another communicator, `comm` still works: an allreduce of `n` values
// drawn from `stream` gives the serial reference's sum on every rank.
void check_still_sums(communicator& comm, std::uint64_t stream, std::size_t n) {
  const auto x = values_of<long long>(stream, comm.rank(), n);
  std::vector<long long> sum(n);
  comm.allreduce(send_buf(x), recv_buf(sum), op(ops::sum{}));
  CHECK(sum == serial_fold<long long>(stream, comm.size(), n, [](long long a, long long b) { return a + b; }));
}

}  // namespace

TEST_CASE("a broadcast whose ranks pass different counts to MPI's call raises mpi_error, not MPI_Abort",
          "[comm][errors]") {
  communicator& comm = default_comm();
  if (comm.size() < 2) SKIP("needs 2 or more ranks");
  const auto wait = GENERATE(0.0, 30.0);  // MPI's blocking call (no timeout) and the polled wait
  INFO("wait timeout " << wait << " s");
  communicator_options o;
  o.wait_timeout = wait > 0 ? hetero::timeout(std::chrono::duration<double>(wait)) : hetero::no_timeout;
  o.argument_checks = argument_check::local;  // MPI's call is what finds the mismatch here
  communicator mismatched(o);
  auto gen = rng(4099);
  const std::size_t n = 8 + gen() % 64;
  std::vector<double> data(comm.rank() == 0 ? n : n + 2, 1.5);
  bool raised = false;
  try {
    mismatched.broadcast(send_recv_buf(data), root(0), force_algorithm(comm_algorithm::mpi));
  } catch (const mpi_error& e) {
    raised = true;
    INFO(e.what());
    CHECK(comm.rank() != 0);  // the root sent its data and returned
    CHECK_THAT(std::string(e.what()), ContainsSubstring("MPI_"));
  }
  if (comm.rank() != 0) CHECK(raised);
  // Every rank goes on: the next collective on a communicator gives the serial reference's sum.
  check_still_sums(comm, gen(), 5);
}

TEST_CASE("a count mismatch found in hetero's own messages leaves the communicator refusing every call",
          "[comm][errors]") {
  communicator& comm = default_comm();
  if (comm.size() < 2) SKIP("needs 2 or more ranks");
  auto gen = rng(4111);
  const int bad = static_cast<int>(gen() % static_cast<std::uint64_t>(comm.size()));
  INFO("rank " << bad << " passes one element more");
  communicator_options o;
  o.wait_timeout = hetero::timeout(std::chrono::seconds(2));  // 3 ranks: a rank may wait for one that raised
  o.argument_checks = argument_check::local;  // no agreement first: the ring's messages carry the mismatch
  communicator mismatched(o);
  const std::size_t n = 4 + gen() % 60;
  const std::vector<int> mine(comm.rank() == bad ? n + 1 : n, comm.rank());
  std::vector<int> all(mine.size() * static_cast<std::size_t>(comm.size()));
  std::string raised;  // what this rank's call raised, if anything
  try {
    mismatched.allgather(send_buf(mine), recv_buf(all), force_algorithm(comm_algorithm::ring));
  } catch (const invalid_argument& e) {
    raised = e.what();
    CHECK_THAT(raised, ContainsSubstring("the ranks passed different counts"));
  } catch (const deadlock_error& e) {
    raised = e.what();  // waited for a rank that raised and left the ring
  }
  // On 2 ranks each receives the other's block and finds its count wrong.
  if (comm.size() == 2) CHECK_THAT(raised, ContainsSubstring("the ranks passed different counts"));
  if (!raised.empty()) {
    // Its messages may still be in flight: the next call would take them; it is refused instead.
    INFO(raised);
    const bool counts = raised.find("different counts") != std::string::npos;
    CHECK_THROWS_WITH(mismatched.allreduce(send_buf(1), op(ops::sum{})),
                      ContainsSubstring("out of step since hetero::communicator::allgather") &&
                          ContainsSubstring(counts ? "found ranks that passed different counts"
                                                   : "raised hetero::deadlock_error") &&
                          ContainsSubstring("create a new communicator"));
  }
  // Another communicator is not affected: checked against the serial reference.
  check_still_sums(comm, gen(), 7);
}

TEST_CASE("a non-blocking broadcast whose ranks pass different counts raises mpi_error from test() and wait()",
          "[comm][errors]") {
  communicator& comm = default_comm();
  if (comm.size() < 2) SKIP("needs 2 or more ranks");
  const bool polled = GENERATE(true, false);  // test() in a loop, or wait()
  INFO((polled ? "test()" : "wait()"));
  communicator_options o;
  o.wait_timeout = hetero::timeout(std::chrono::seconds(30));
  o.argument_checks = argument_check::local;  // MPI's call is what finds the mismatch here
  communicator mismatched(o);
  auto gen = rng(4127);
  const std::size_t n = 8 + gen() % 64;
  std::vector<double> data(comm.rank() == 0 ? n : n + 2, 1.5);
  std::string raised;
  try {
    auto request = mismatched.ibroadcast(send_recv_buf(data), root(0), force_algorithm(comm_algorithm::mpi));
    if (polled) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!request.test())
        if (std::chrono::steady_clock::now() > deadline) FAIL("test() still not done after 60 s");
    } else
      request.wait();
  } catch (const mpi_error& e) {
    raised = e.what();
  }
  if (comm.rank() == 0) {
    CHECK(raised.empty());  // the root sent its data
  } else {
    // test() polls inside a request_errors_returned scope, as wait() does. With MPICH 4.0 here
    // this error (and a root's message longer than the buffer) also came back without it
    // (checked by removing the scope): this guards the behaviour, it did not abort before.
    CHECK_THAT(raised, ContainsSubstring("MPI_"));
    CHECK_THROWS_WITH(mismatched.barrier(),
                      ContainsSubstring("out of step since hetero::communicator::ibroadcast") &&
                          ContainsSubstring("raised hetero::mpi_error"));
  }
  // Every rank goes on on another communicator: checked against the serial reference.
  check_still_sums(comm, gen(), 5);
}

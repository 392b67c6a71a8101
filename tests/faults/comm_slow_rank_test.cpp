// Fault injection into hetero::communicator's collectives: a rank that sleeps past the
// timeout before it calls. The ranks that wait for it get a deadlock_error after the timeout
// (1 s, set by this folder's main); the slow rank then finds what the others published and
// finishes on its own.
#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <random>
#include <string>
#include <vector>

#include "faults_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;

namespace {

void check_gave_up(const faults::outcome& o, const std::string& call, int slow) {
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring(call) && ContainsSubstring("(limit 1 s)"));
  CHECK(o.missing == std::vector<int>{slow});
}

}  // namespace

TEST_CASE("a rank that sleeps past the timeout: the ranks that wait for it give up in time", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), slow = p - 1;
  if (p < 2) return;
  const long long value = faults::shared_random(0, 1000);

  SECTION("allreduce") {
    communicator comm;
    long long sum = -1;
    const auto o = faults::attempt([&] {
      if (me == slow) faults::oversleep();
      sum = comm.allreduce(send_buf(value + me), op(ops::sum{}));
    });
    faults::report("slow rank", "comm allreduce", o);
    if (me == slow) {
      CHECK(o.kind == "none");  // everything it reads was published before it came
      CHECK(sum == p * value + p * (p - 1) / 2);
    } else {
      check_gave_up(o, "hetero::communicator::allreduce (8 B)", slow);
    }
  }
  SECTION("gather (root 0)") {
    communicator comm;
    const auto o = faults::attempt([&] {
      if (me == slow) faults::oversleep();
      (void)comm.gather(send_buf(value + me), root(0));
    });
    faults::report("slow rank", "comm gather", o);
    if (me == 0) {
      check_gave_up(o, "hetero::communicator::gather (root 0, 8 B)", slow);
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("broadcast (the root is slow)") {
    communicator comm;
    long long data = me == 0 ? value : -1;
    const auto o = faults::attempt([&] {
      if (me == 0) faults::oversleep();
      comm.broadcast(send_recv_buf(data), root(0));
    });
    faults::report("slow rank", "comm broadcast", o);
    if (me == 0) {
      CHECK(o.kind == "none");
    } else {
      check_gave_up(o, "hetero::communicator::broadcast (root 0, 8 B)", 0);
    }
  }
  SECTION("barrier") {
    communicator comm;
    const auto o = faults::attempt([&] {
      if (me == slow) faults::oversleep();
      comm.barrier();
    });
    faults::report("slow rank", "comm barrier", o);
    if (me == slow) {
      CHECK(o.kind == "none");
    } else {
      check_gave_up(o, "hetero::communicator::barrier", slow);
    }
  }
}

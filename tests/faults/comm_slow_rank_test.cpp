// Fault injection into hetero::communicator's collectives: a rank that sleeps past the
// timeout before it calls. The ranks that wait for it get a deadlock_error after the timeout
// (1 s, set by this folder's main), naming it. On one node the slow rank then finds what the
// others published in the window and finishes on its own; across nodes it finds the records of
// the agreement on the arguments (with a small allreduce's data inline, so that one finishes
// too), but not the others' data of a gather or broadcast: a call that only sends may complete.
// Where some ranks share a node (the node-aware agreement) the ranks wait up to twice the limit
// (docs/results/comm.md), so the slow rank sleeps longer there, and one that does not lead its node
// finds that its leader gave up on it.
#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <random>
#include <string>
#include <vector>

#include "faults_support.hpp"
#include "nodes.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;

namespace {

void check_gave_up(const faults::outcome& o, const std::string& call, int slow) {
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring(call) && ContainsSubstring(faults::limit_text()));
  CHECK(o.missing == std::vector<int>{slow});
}

// The call as the deadlock_error names it: with its bytes on one node (the wait is in the data
// step), without across nodes (the wait is in the agreement, before sizes are known).
std::string call_name(const communicator& comm, const std::string& call, const std::string& root_part) {
  const std::string extra =
      root_part + (comm.has_shared_memory() ? (root_part.empty() ? "" : ", ") + std::string("8 B") : "");
  return "hetero::communicator::" + call + (extra.empty() ? "" : " (" + extra + ")");
}

// Sleeps past every wait of the others: 2 limits and a half where the agreement is node-aware.
void oversleep_for(const communicator& comm) { faults::oversleep(comm.node_aware() ? 2.5 : 1.5); }

// The slow rank that does not lead its node, where the agreement is node-aware: its leader gave
// up on it and told it so.
void check_came_late(const faults::outcome& o, int slow) {
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text,
             ContainsSubstring("this rank (" + std::to_string(slow)) &&
                 ContainsSubstring("had waited the limit (" +
                                   hetero::testing::seconds_text(faults::timeout_seconds()) + " s) for it") &&
                 ContainsSubstring("naming rank " + std::to_string(slow) + ", and no data moved") &&
                 ContainsSubstring("raise it"));
  CHECK(o.missing == std::vector<int>{slow});
}

// The slow rank's outcome where its call only sends across nodes: it may complete alone.
void check_late_sender(const communicator& comm, const faults::outcome& o) {
  INFO(o.text);
  if (comm.has_shared_memory())
    CHECK(o.kind == "none");
  else
    CHECK((o.kind == "none" || o.kind == "deadlock_error"));
}

}  // namespace

TEST_CASE("a rank that sleeps past the timeout: the ranks that wait for it give up in time", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), slow = p - 1;
  if (p < 2) return;
  const long long value = faults::shared_random(0, 1000);

  SECTION("allreduce") {
    communicator comm;
    const bool leads = hetero::testing::node_layout_of(comm.mpi_comm()).leads();
    long long sum = -1;
    const auto o = faults::attempt([&] {
      if (me == slow) oversleep_for(comm);
      sum = comm.allreduce(send_buf(value + me), op(ops::sum{}));
    });
    faults::report("slow rank", "comm allreduce", o);
    if (me == slow && comm.node_aware() && !leads) {
      check_came_late(o, slow);
    } else if (me == slow) {
      // Everything it reads was published before it came: in the window on one node, with the
      // agreement's records across nodes (a small allreduce travels inline with them).
      CHECK(o.kind == "none");
      CHECK(sum == p * value + p * (p - 1) / 2);
    } else {
      check_gave_up(o, call_name(comm, "allreduce", ""), slow);
    }
  }
  SECTION("gather (root 0)") {
    communicator comm;
    const auto o = faults::attempt([&] {
      if (me == slow) oversleep_for(comm);
      (void)comm.gather(send_buf(value + me), root(0));
    });
    faults::report("slow rank", "comm gather", o);
    if (me == 0) {
      check_gave_up(o, call_name(comm, "gather", "root 0"), slow);
    } else if (me == slow) {
      check_late_sender(comm, o);
    } else if (comm.has_shared_memory()) {
      CHECK(o.kind == "none");
    } else {
      check_gave_up(o, call_name(comm, "gather", "root 0"), slow);  // it waits in the agreement
    }
  }
  SECTION("broadcast (the root is slow)") {
    communicator comm;
    long long data = me == 0 ? value : -1;
    const auto o = faults::attempt([&] {
      if (me == 0) oversleep_for(comm);
      comm.broadcast(send_recv_buf(data), root(0));
    });
    faults::report("slow rank", "comm broadcast", o);
    if (me == 0) {
      check_late_sender(comm, o);
    } else {
      check_gave_up(o, call_name(comm, "broadcast", "root 0"), 0);
    }
  }
  SECTION("barrier") {
    communicator comm;
    const bool leads = hetero::testing::node_layout_of(comm.mpi_comm()).leads();
    const auto o = faults::attempt([&] {
      if (me == slow) oversleep_for(comm);
      comm.barrier();
    });
    faults::report("slow rank", "comm barrier", o);
    if (me == slow && comm.node_aware() && !leads) {
      check_came_late(o, slow);
    } else if (me == slow) {
      CHECK(o.kind == "none");
    } else {
      check_gave_up(o, "hetero::communicator::barrier", slow);
    }
  }
}

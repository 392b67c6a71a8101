// Fault injection into hetero::communicator's collectives: a rank that returns early (skips
// the collective), mismatched counts and mismatched roots. Every rank must end within the
// timeout (1 s, set by this folder's main) plus a margin, with the documented outcome; a
// communicator that gave up waiting refuses further use. On one node the ranks meet in the
// shared-memory window (a non-root that published its block leaves); across nodes (no window)
// every rank agrees by message before any data moves, so every rank waits for a missing one
// (named) and every rank raises a mismatch.
#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <random>
#include <string>
#include <vector>

#include "faults_support.hpp"
#include "random.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;

namespace {

// Fresh random values of `n` elements.
std::vector<double> random_values(std::size_t n) {
  static auto gen = hetero::testing::rng(7 + static_cast<std::uint64_t>(faults::world_rank()));
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

// The checks every deadlock_error of a skipped collective passes.
void check_deadlock(const faults::outcome& o, const std::string& call, int size, int rank, int missing) {
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring(call) && ContainsSubstring("on a communicator of " + std::to_string(size) +
                                                                  " rank(s) as rank " + std::to_string(rank)));
  CHECK_THAT(o.text, ContainsSubstring(faults::limit_text()) &&
                         ContainsSubstring("runtime_options::wait_timeout") &&
                         ContainsSubstring("HETERO_WAIT_TIMEOUT"));
  if (missing >= 0) {
    CHECK(o.missing == std::vector<int>{missing});
    CHECK_THAT(o.text, ContainsSubstring("not arrived: rank " + std::to_string(missing)));
  } else {
    CHECK(o.missing.empty());
    CHECK_THAT(o.text, ContainsSubstring("not known"));
  }
}

// The call as a deadlock_error names it: with its bytes where the wait is in the data step (one
// node), without where it is in the agreement on the arguments (across nodes, sizes not yet
// known): "hetero::communicator::<call> (<extra>, <bytes> B)".
std::string call_name(const communicator& comm, const std::string& call, const std::string& extra,
                      std::size_t bytes) {
  std::string text = "hetero::communicator::" + call;
  if (comm.has_shared_memory())
    text += " (" + extra + (extra.empty() ? "" : ", ") + std::to_string(bytes) + " B)";
  else if (!extra.empty())
    text += " (" + extra + ")";
  return text;
}

// A communicator that gave up waiting refuses the next call.
void check_out_of_step(communicator& comm, const std::string& call) {
  CHECK_THROWS_AS(comm.barrier(), hetero::runtime_error);
  CHECK_THROWS_WITH(comm.barrier(), ContainsSubstring("out of step since hetero::communicator::" + call));
}

}  // namespace

TEST_CASE("a rank that never constructs its communicator: the others give up in the set-up", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const faults::case_comm ranks;
  const auto o = faults::attempt([&] {
    if (me == late) return;
    communicator comm(ranks.comm);
    comm.barrier();
  });
  faults::report("skip", "comm construction", o);
  if (me == late)
    CHECK(o.kind == "none");
  else  // MPI_Comm_idup names no rank: which one is missing is not known
    check_deadlock(o, "hetero::communicator construction (communicator set-up)", p, me, -1);
}

TEST_CASE("a rank that skips a collective: the ranks that wait for it get a deadlock_error", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(1, 64));
  const auto mine = random_values(n);

  SECTION("gather (root 0)") {
    communicator comm;
    const auto o = faults::attempt([&] {
      if (me != late) (void)comm.gather(send_buf(mine), root(0));
    });
    faults::report("skip", "comm gather", o);
    if (me == late) {
      CHECK(o.kind == "none");
    } else if (me == 0 || !comm.has_shared_memory()) {
      check_deadlock(o, call_name(comm, "gather", "root 0", n * sizeof(double)), p, me, late);
      check_out_of_step(comm, "gather");
    } else {
      CHECK(o.kind == "none");  // on a node's window a non-root publishes its block and leaves
    }
  }
  SECTION("allreduce") {
    communicator comm;
    std::vector<double> sum(n);
    const auto o = faults::attempt([&] {
      if (me != late) comm.allreduce(send_buf(mine), recv_buf(sum), op(ops::sum{}));
    });
    faults::report("skip", "comm allreduce", o);
    if (me != late) {
      check_deadlock(o, call_name(comm, "allreduce", "", n * sizeof(double)), p, me, late);
      check_out_of_step(comm, "allreduce");
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("allreduce on MPI's own algorithm") {
    communicator comm;
    std::vector<double> sum(n);  // outlives the abandoned request
    const auto o = faults::attempt([&] {
      if (me != late)
        comm.allreduce(send_buf(mine), recv_buf(sum), op(ops::sum{}), force_algorithm(comm_algorithm::mpi));
    });
    faults::report("skip", "comm allreduce (mpi)", o);
    if (me != late) {
      // The consistent checks' status op (shared memory) or agreement (across nodes) comes first
      // and names the late rank.
      check_deadlock(o, "hetero::communicator::allreduce", p, me, late);
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("broadcast (the root skips)") {
    communicator comm;
    auto data = mine;
    const auto o = faults::attempt([&] {
      if (me != 0) comm.broadcast(send_recv_buf(data), root(0));
    });
    faults::report("skip", "comm broadcast", o);
    if (me != 0) {
      check_deadlock(o, call_name(comm, "broadcast", "root 0", n * sizeof(double)), p, me, 0);
      check_out_of_step(comm, "broadcast");
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("barrier") {
    communicator comm;
    const auto o = faults::attempt([&] {
      if (me != late) comm.barrier();
    });
    faults::report("skip", "comm barrier", o);
    if (me != late) {
      check_deadlock(o, "hetero::communicator::barrier", p, me, late);
      check_out_of_step(comm, "barrier");
    } else {
      CHECK(o.kind == "none");
    }
  }
}

TEST_CASE("mismatched counts: the ranks that see the other count get an invalid_argument", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(1, 64));
  const auto mine = random_values(me == late ? n + 1 : n);

  SECTION("allreduce") {
    communicator comm;
    const auto o = faults::attempt([&] { (void)comm.allreduce(send_buf(mine), op(ops::sum{})); });
    faults::report("counts", "comm allreduce", o);
    INFO(o.text);
    CHECK(o.kind == "invalid_argument");
    CHECK_THAT(o.text, ContainsSubstring("different counts"));
  }
  SECTION("gather (root 0)") {
    communicator comm;
    const auto o = faults::attempt([&] { (void)comm.gather(send_buf(mine), root(0)); });
    faults::report("counts", "comm gather", o);
    INFO(o.text);
    // On a window the root reads every block and a non-root checks the root's signature; across
    // nodes every rank hears every count.
    if (me == 0 || me == late || !comm.has_shared_memory()) {
      CHECK(o.kind == "invalid_argument");
      CHECK_THAT(o.text, ContainsSubstring("different counts"));
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("broadcast (root 0)") {
    communicator comm;
    auto data = mine;
    const auto o = faults::attempt([&] { comm.broadcast(send_recv_buf(data), root(0)); });
    faults::report("counts", "comm broadcast", o);
    INFO(o.text);
    if (me == late || !comm.has_shared_memory()) {
      CHECK(o.kind == "invalid_argument");
      CHECK_THAT(o.text, ContainsSubstring("different counts"));
    } else {
      CHECK(o.kind == "none");
    }
  }
}

TEST_CASE("mismatched element types: every rank gets an invalid_argument", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(1, 64));
  const auto doubles = random_values(n);
  const std::vector<float> floats(doubles.begin(), doubles.end());  // the same count, 4-byte elements
  communicator comm;
  const auto o = faults::attempt([&] {
    if (me == late)
      (void)comm.allreduce(send_buf(floats), op(ops::sum{}));
    else
      (void)comm.allreduce(send_buf(doubles), op(ops::sum{}));
  });
  faults::report("element types", "comm allreduce", o);
  INFO(o.text);
  CHECK(o.kind == "invalid_argument");
  // Across nodes the agreement's records carry the element size; on one node the window's
  // signatures carry each rank's bytes.
  CHECK_THAT(o.text,
             ContainsSubstring(comm.has_shared_memory() ? "different counts"
                                                        : "elements of different sizes (from 4 to 8 bytes)"));
}

TEST_CASE("mismatched roots: the ranks that read the other root get an invalid_argument", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(1, 64));
  const auto mine = random_values(n);
  const int my_root = me == late ? late : 0;

  SECTION("gather") {
    communicator comm;
    const auto o = faults::attempt([&] { (void)comm.gather(send_buf(mine), root(my_root)); });
    faults::report("roots", "comm gather", o);
    INFO(o.text);
    if (!comm.has_shared_memory()) {  // every rank hears every root
      CHECK(o.kind == "invalid_argument");
      CHECK_THAT(o.text, ContainsSubstring("different roots (0 and " + std::to_string(late) + ")"));
    } else if (me == 0 || me == late) {
      CHECK(o.kind == "invalid_argument");
      CHECK_THAT(o.text, ContainsSubstring("different counts, roots"));
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("broadcast, with verify_arguments") {
    communicator_options options;
    options.verify_arguments = true;
    communicator comm(options);
    auto data = mine;
    const auto o = faults::attempt([&] { comm.broadcast(send_recv_buf(data), root(my_root)); });
    faults::report("roots", "comm broadcast (verify_arguments)", o);
    INFO(o.text);
    CHECK(o.kind == "invalid_argument");
    CHECK_THAT(o.text, ContainsSubstring("different roots (0 and " + std::to_string(late) + ")"));
  }
}

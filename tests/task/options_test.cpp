// task_options::comm takes hetero's handles as well as an MPI_Comm: a graph on a
// hetero::communicator of every rank runs a random cross-rank program, and graphs on the two
// halves of the ranks (hetero::communicators on a split) each pass a token around their own ranks.
#include <hetero/comm/communicator.hpp>
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "random.hpp"
#include "rounds_program.hpp"
#include "shared_slots.hpp"
#include "world.hpp"

using hetero::testing::world_rank;
using hetero::testing::world_size;

namespace {

bool congruent(MPI_Comm a, MPI_Comm b) {
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(a, b, &result);
  return result == MPI_IDENT || result == MPI_CONGRUENT;
}

}  // namespace

static_assert(std::is_convertible_v<hetero::communicator, hetero::comm_ref>,
              "a hetero::communicator stands for its ranks in task_options::comm");
static_assert(std::is_convertible_v<MPI_Comm, hetero::comm_ref>, "an MPI_Comm still does");
static_assert(!std::is_convertible_v<double*, hetero::comm_ref>);

TEST_CASE("task_options::comm: MPI_COMM_WORLD by default, still usable as an MPI_Comm", "[task][options]") {
  const hetero::task_options defaults;
  const MPI_Comm as_mpi = defaults.comm;  // source written for the MPI_Comm member keeps compiling
  CHECK(as_mpi == MPI_COMM_WORLD);
  CHECK(defaults.comm.get() == MPI_COMM_WORLD);
  const hetero::task_options self{.workers = 1, .comm = MPI_COMM_SELF};
  CHECK(self.comm.get() == MPI_COMM_SELF);
  hetero::task_graph graph(self);
  CHECK(graph.size() == 1);
  CHECK(graph.rank() == 0);
}

TEST_CASE("a graph on a hetero::communicator runs a random cross-rank program", "[task][options][mpi]") {
  const hetero::communicator world;
  hetero::testing::shared_slots slots(8);
  INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window"));
  auto rng = hetero::testing::rng(91);
  hetero::testing::rounds_program program(rng, world.size(), 10, 8);
  hetero::task_graph graph({.workers = 2, .comm = world});
  CHECK(graph.size() == world.size());
  CHECK(graph.rank() == world.rank());
  CHECK(congruent(graph.mpi_comm(), world.mpi_comm()));
  CHECK(graph.mpi_comm() != world.mpi_comm());               // the graph's own duplicate
  CHECK(hetero::comm_ref(graph).get() == graph.mpi_comm());  // a graph is a handle like the others
  auto e = graph.remote_events("E", program.events());
  auto ack = graph.remote_events("ACK", program.events(), world.size());
  std::atomic<int> bad{0}, ran{0};
  program.declare(graph, e, ack, slots, bad, ran);
  graph.wait();
  CHECK(bad.load() == 0);
  CHECK(ran.load() == program.tasks_of(world.rank()));
  CHECK(world.allreduce(hetero::send_buf(bad.load()), hetero::op(hetero::ops::sum{})) == 0);
}

TEST_CASE("graphs on the two halves of the ranks (hetero::communicators) pass tokens on their own ranks",
          "[task][options][mpi]") {
  const int color = world_rank() % 2;
  MPI_Comm split = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, color, world_rank(), &split);
  {
    const hetero::communicator half(split);
    const int n = half.size();
    CHECK(n == (world_size() + 1 - color) / 2);
    const auto world_of = [&](int r) { return 2 * r + color; };  // split kept the world's order
    // Slot `color` of world rank q holds the token q's half sent it; only this half writes it.
    hetero::testing::shared_slots slots(2);
    INFO("slots in " << (slots.shared() ? "node-shared memory" : "an MPI window"));
    auto rng = hetero::testing::rng(93);
    const int steps = 6 + static_cast<int>(rng() % 7);  // the same on every rank
    std::atomic<int> bad{0}, ran{0};
    {
      hetero::task_graph graph({.workers = 2, .comm = half});
      REQUIRE(graph.size() == n);
      REQUIRE(graph.rank() == half.rank());
      auto e = graph.remote_events("token", steps);
      for (int k = 0; k < steps; ++k) {
        const int owner = k % n, next = (k + 1) % n;
        const auto pass = [&slots, &bad, &ran, k, owner, next, color, world_of] {
          if (slots.slot(color, world_of(owner)).load(std::memory_order_acquire) != k) bad.fetch_add(1);
          slots.slot(color, world_of(next)).store(k + 1, std::memory_order_release);
          ran.fetch_add(1);
        };
        const hetero::rank_set to = next == owner ? hetero::rank_set{} : hetero::rank_set{next};
        if (k == 0)
          graph.spawn("pass", hetero::on(owner), hetero::out(e(k)).to(to), pass);
        else
          graph.spawn("pass", hetero::on(owner), hetero::in(e(k - 1)), hetero::out(e(k)).to(to), pass);
      }
      graph.wait();
    }
    CHECK(bad.load() == 0);
    int mine = 0;  // tasks this rank owns: steps k with k % n == its half rank
    for (int k = 0; k < steps; ++k) mine += k % n == half.rank() ? 1 : 0;
    CHECK(ran.load() == mine);
    // The last token sits in the slot of the rank after the last owner.
    half.barrier();
    if (half.rank() == steps % n) CHECK(slots.slot(color, world_rank()).load(std::memory_order_acquire) == steps);
  }
  MPI_Comm_free(&split);
}

// Tuning tables: the text format and its errors (with line numbers), files, the environment
// variable and shapes (the tuning run itself is tested in tools/comm).
#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <stdlib.h>  // setenv, unsetenv

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

namespace {

// A file name every rank agrees on (rank 0's process id), in the temporary directory.
std::string shared_path(const std::string& stem) {
  long id = static_cast<long>(getpid());
  MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return (std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(id) + ".tuning")).string();
}

}  // namespace

TEST_CASE("the default table chooses shared memory for small messages and MPI above", "[comm][tuning]") {
  const comm_tuning t = comm_tuning::defaults(2);
  CHECK(t.choose(collective::allreduce, 8) == comm_algorithm::shm);
  CHECK(t.choose(collective::allreduce, 65536) == comm_algorithm::shm);
  CHECK(comm_tuning::defaults(64).choose(collective::allreduce, 65536) == comm_algorithm::mpi);  // 4 KiB there
  CHECK(comm_tuning::defaults(64).choose(collective::broadcast, 65536) == comm_algorithm::shm);
  CHECK(t.choose(collective::allreduce, std::size_t{1} << 23) == comm_algorithm::mpi);
  CHECK(t.choose(collective::barrier, 0) == comm_algorithm::shm);
  CHECK(comm_tuning{}.choose(collective::broadcast, 8) == comm_algorithm::mpi);
  // Above the window: MPI's call, except where two tuning runs on 2 ranks agreed (docs/results/comm.md);
  // other shapes were not measured.
  constexpr std::size_t mib = std::size_t{1} << 20;
  CHECK(t.choose(collective::allreduce, mib) == comm_algorithm::mpi);
  CHECK(t.choose(collective::reduce, mib) == comm_algorithm::binomial);
  CHECK(t.choose(collective::reduce, 8 * mib) == comm_algorithm::mpi);
  CHECK(t.choose(collective::scatter, 128 * 1024) == comm_algorithm::mpi);
  CHECK(t.choose(collective::scatter, 2 * mib) == comm_algorithm::linear);
  CHECK(t.choose(collective::allgatherv, 8 * mib) == comm_algorithm::ring);
  CHECK(t.choose(collective::gather, 8 * mib) == comm_algorithm::mpi);
  for (collective c : {collective::reduce, collective::scatter, collective::allgatherv})
    CHECK(comm_tuning::defaults(3).choose(c, 2 * mib) == comm_algorithm::mpi);
  // Ranks on several nodes, some sharing one: the node-aware algorithm for reduce and allreduce
  // at every size, for broadcast up to a slot.
  const comm_tuning nodes = comm_tuning::defaults(4, true);
  for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}, 8 * mib}) {
    CHECK(nodes.choose(collective::allreduce, bytes) == comm_algorithm::hierarchical);
    CHECK(nodes.choose(collective::reduce, bytes) == comm_algorithm::hierarchical);
  }
  CHECK(nodes.choose(collective::broadcast, 65536) == comm_algorithm::hierarchical);
  CHECK(nodes.choose(collective::broadcast, 65537) == comm_algorithm::mpi);
  CHECK(nodes.choose(collective::gather, 8) == comm_algorithm::shm);  // no window: MPI's call then
  // The text format reads back what it wrote.
  CHECK(comm_tuning::parse(t.to_text(), "defaults") == t);
  CHECK(comm_tuning::parse(nodes.to_text(), "defaults") == nodes);
}

TEST_CASE("tuning text is parsed with its shape and checked line by line", "[comm][tuning]") {
  const comm_tuning t = comm_tuning::parse(
      "# a comment\nshape 2 1\n\nallreduce 1024 shm  # trailing comment\nallreduce 65536 ring\nallreduce inf mpi\n"
      "gather 100 binomial\n",
      "text");
  CHECK(t.ranks() == 2);
  CHECK(t.nodes() == 1);
  CHECK(t.fits(2, 1));
  CHECK_FALSE(t.fits(3, 1));
  CHECK(t.choose(collective::allreduce, 1024) == comm_algorithm::shm);
  CHECK(t.choose(collective::allreduce, 1025) == comm_algorithm::ring);
  CHECK(t.choose(collective::allreduce, 1 << 20) == comm_algorithm::mpi);
  CHECK(t.choose(collective::gather, 100) == comm_algorithm::binomial);
  CHECK(t.choose(collective::gather, 101) == comm_algorithm::mpi);   // an implicit last rule
  CHECK(t.choose(collective::broadcast, 8) == comm_algorithm::mpi);  // no rules: MPI's call

  CHECK_THROWS_WITH(comm_tuning::parse("allreduce 8 shm\nallreduc 8 shm\n", "f"),
                    ContainsSubstring("f:2: unknown collective 'allreduc'"));
  CHECK_THROWS_WITH(comm_tuning::parse("\n\nbroadcast 8 fast\n", "f"),
                    ContainsSubstring("f:3: unknown algorithm 'fast'"));
  CHECK_THROWS_WITH(comm_tuning::parse("scatterv 8 ring\n", "f"),
                    ContainsSubstring("f:1: scatterv cannot use algorithm 'ring'"));
  CHECK_THROWS_WITH(comm_tuning::parse("reduce 64 shm\nreduce 8 mpi\n", "f"),
                    ContainsSubstring("f:2: rules of reduce must have increasing sizes (8 after 64)"));
  CHECK_THROWS_WITH(comm_tuning::parse("reduce 6x4 shm\n", "f"),
                    ContainsSubstring("f:1: '6x4' is not a byte count (a number or 'inf')"));
  CHECK_THROWS_WITH(comm_tuning::parse("reduce 64\n", "f"),
                    ContainsSubstring("f:1: expected '<collective> <max bytes|inf> <algorithm>'"));
  CHECK_THROWS_WITH(comm_tuning::parse("reduce 64 shm now\n", "f"), ContainsSubstring("f:1: unexpected 'now'"));
  CHECK_THROWS_WITH(comm_tuning::parse("shape two 1\n", "f"),
                    ContainsSubstring("f:1: expected 'shape <ranks> <nodes>'"));
  CHECK_THROWS_WITH(comm_tuning::load("/nonexistent/hetero.tuning"),
                    ContainsSubstring("cannot open the tuning file '/nonexistent/hetero.tuning'"));
  CHECK_THROWS_AS(comm_tuning::load("/nonexistent/hetero.tuning"), hetero::io_error);
  comm_tuning u;
  CHECK_THROWS_WITH(u.set(collective::allreduce, {{64, comm_algorithm::shm}}),
                    ContainsSubstring("must end with one for unbounded sizes"));
}

TEST_CASE("a communicator reads its tuning file or the environment's, if it fits its shape", "[comm][tuning]") {
  communicator& world = default_comm();
  const std::string path = shared_path("hetero-comm-test");
  comm_tuning t;
  t.set(collective::allreduce,
        {{100, comm_algorithm::recursive_doubling}, {comm_tuning::unbounded, comm_algorithm::mpi}});
  t.set_shape(world.size(), world.nodes());
  if (world.rank() == 0) t.save(path);
  world.barrier();
  {
    communicator_options o;
    o.tuning_file = path;
    communicator comm(o);
    CHECK(comm.tuning_source() == "file " + path);
    CHECK(comm.tuning() == t);
    CHECK(comm.algorithm_for(collective::allreduce, 64) == comm_algorithm::recursive_doubling);
    CHECK(comm.algorithm_for(collective::allreduce, 128) == comm_algorithm::mpi);
  }
  {
    setenv("HETERO_COMM_TUNING", path.c_str(), 1);
    communicator comm;
    unsetenv("HETERO_COMM_TUNING");
    CHECK(comm.tuning_source() == "file " + path);
  }
  // A table measured on another shape is not used.
  t.set_shape(world.size() + 1, world.nodes());
  if (world.rank() == 0) t.save(path);
  world.barrier();
  {
    communicator_options o;
    o.tuning_file = path;
    communicator comm(o);
    CHECK_THAT(comm.tuning_source(), ContainsSubstring("built-in defaults (file " + path + " was measured on " +
                                                       std::to_string(world.size() + 1) + " ranks"));
    CHECK(comm.tuning() == comm_tuning::defaults(comm.size(), comm.node_aware()));
  }
  // A bad file raises on every rank (rank 0 reads it, everyone learns the error).
  if (world.rank() == 0) {
    std::ofstream out(path);
    out << "allreduce 64 shm\nallreduce inf warp\n";
  }
  world.barrier();
  communicator_options o;
  o.tuning_file = path;
  CHECK_THROWS_WITH(communicator(o), ContainsSubstring(path + ":2: unknown algorithm 'warp'"));
  CHECK_THROWS_AS(communicator(o), hetero::io_error);  // every rank: a bad file, whatever its format
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove(path);
}

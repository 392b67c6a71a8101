// Weights saved to a file and loaded again; unreadable files and malformed lines are named; the
// collective forms on an MPI_Comm and on hetero's handles (communicator, sub-communicator, grid),
// and a rank that never arrives.
#include <hetero/comm.hpp>
#include <hetero/distarray/process_grid.hpp>
#include <hetero/exec/weights_file.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mpi.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "random.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

std::string temp_path(const char* stem) {
  return std::string("hetero-") + stem + "-" + std::to_string(::getpid()) + ".txt";
}

const std::array<std::string, 3> handle_labels = {"nbody forces", "dgemm", "halo pack"};

// Every rank of `comm` sets its own random weights, saves them through `comm` to `path`, forgets
// them and loads them back; checks what it got, and (at `comm`'s rank 0) every line of the file.
template <class Comm>
void save_and_load_through(const Comm& comm, int rank, int size, const std::string& path, std::uint64_t stream) {
  hetero::forget_split_labels();
  auto gen = hetero::testing::rng(stream);  // the same draws on every rank: rank r uses row r
  std::uniform_real_distribution<double> weight(0, 1);
  std::vector<std::array<double, 3>> table(static_cast<std::size_t>(size));
  for (auto& row : table)
    for (auto& w : row) w = weight(gen);
  const auto& mine = table[static_cast<std::size_t>(rank)];
  for (std::size_t l = 0; l < handle_labels.size(); ++l) hetero::reset_weight(handle_labels[l], mine[l]);
  hetero::save_weights(path, comm);
  if (rank == 0) {
    std::ifstream file(path);
    std::string line;
    REQUIRE(std::getline(file, line));
    CHECK(line == "# hetero cpu weights v2: <rank> <weight> <label>");
    std::vector<std::array<int, 3>> seen(static_cast<std::size_t>(size), {0, 0, 0});
    int lines = 0;
    while (std::getline(file, line)) {
      ++lines;
      std::istringstream fields(line);
      int owner = -1;
      double w = -1;
      fields >> owner >> w;
      std::string label;
      std::getline(fields >> std::ws, label);
      REQUIRE(owner >= 0);
      REQUIRE(owner < size);
      std::size_t l = 0;
      while (l < handle_labels.size() && handle_labels[l] != label) ++l;
      REQUIRE(l < handle_labels.size());
      CHECK(w == table[static_cast<std::size_t>(owner)][l]);
      ++seen[static_cast<std::size_t>(owner)][l];
    }
    CHECK(lines == 3 * size);
    for (const auto& row : seen) CHECK(row == std::array<int, 3>{1, 1, 1});
  }
  hetero::forget_split_labels();
  hetero::load_weights(path, comm);
  for (std::size_t l = 0; l < handle_labels.size(); ++l) CHECK(hetero::cpu_weight(handle_labels[l]) == mine[l]);
  CHECK(hetero::split_labels().size() == handle_labels.size());
}

}  // namespace

TEST_CASE("weights saved to a file come back exactly, labels with spaces included", "[exec][weights]") {
  hetero::forget_split_labels();
  auto gen = hetero::testing::rng(61);
  std::uniform_real_distribution<double> weight(0, 1);
  const double a = weight(gen), b = weight(gen);
  hetero::reset_weight("nbody forces", a);
  hetero::reset_weight("dgemm", b);
  hetero::reset_weight("zero", 0.0);
  const auto path = temp_path("weights");
  hetero::save_weights(path);
  hetero::forget_split_labels();
  hetero::load_weights(path);
  std::remove(path.c_str());
  CHECK(hetero::cpu_weight("nbody forces") == a);
  CHECK(hetero::cpu_weight("dgemm") == b);
  CHECK(hetero::cpu_weight("zero") == 0.0);
  CHECK(hetero::split_labels().size() == 3);
}

TEST_CASE("a work_sharing handle saves and loads its own labels, not the default handle's",
          "[exec][weights][mpi]") {
  hetero::forget_split_labels();
  hetero::reset_weight("default only", 0.25);
  auto gen = hetero::testing::rng(62);
  std::uniform_real_distribution<double> weight(0, 1);
  const double a = weight(gen), b = weight(gen);
  const hetero::work_sharing solver;
  solver.reset_weight("solver axpy", a);
  solver.reset_weight("solver spmv", b);
  const hetero::communicator world;
  int pid = ::getpid();
  world.broadcast(hetero::send_recv_buf(pid), hetero::root(0));
  const std::string path = "hetero-solver-weights-" + std::to_string(pid) + ".txt";  // one file for all ranks
  hetero::save_weights(solver, path, world);  // collective: every rank's lines, rank 0 writes
  const hetero::work_sharing fresh;
  hetero::load_weights(fresh, path, world);
  CHECK(fresh.cpu_weight("solver axpy") == a);
  CHECK(fresh.cpu_weight("solver spmv") == b);
  CHECK(fresh.labels() == std::vector<std::string>{"solver axpy", "solver spmv"});  // not "default only"
  const auto local = temp_path("solver_weights_local");
  hetero::save_weights(solver, local);
  hetero::forget_split_labels();
  hetero::load_weights(local);  // into the default handle
  CHECK(hetero::split_labels() == std::vector<std::string>{"solver axpy", "solver spmv"});
  CHECK(hetero::cpu_weight("solver spmv") == b);
  std::remove(local.c_str());
  world.barrier();
  if (world.rank() == 0) std::remove(path.c_str());
}

TEST_CASE("unreadable files and malformed lines are refused, naming the file and line", "[exec][weights]") {
  hetero::forget_split_labels();
  CHECK_THROWS_AS(hetero::load_weights("/nonexistent/dir/w.txt"), hetero::io_error);
  CHECK_THROWS_WITH(hetero::load_weights("/nonexistent/dir/w.txt"), ContainsSubstring("/nonexistent/dir/w.txt"));
  CHECK_THROWS_AS(hetero::save_weights("/nonexistent/dir/w.txt"), hetero::io_error);

  const auto path = temp_path("bad");
  const auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write("# comment\n0.5 fine\nnot-a-number label\n");
  CHECK_THROWS_WITH(hetero::load_weights(path), ContainsSubstring("line 3") && ContainsSubstring("not-a-number"));
  CHECK_THROWS_AS(hetero::load_weights(path), hetero::io_error);
  CHECK(hetero::split_labels().empty());  // nothing was set
  write("1.5 too much\n");
  CHECK_THROWS_WITH(hetero::load_weights(path),
                    ContainsSubstring("weight 1.5") && ContainsSubstring("'too much'"));
  write("0.25\n");
  CHECK_THROWS_WITH(hetero::load_weights(path), ContainsSubstring("line 1"));
  // A file of every rank's weights is not read as one process's (its lines have three fields).
  write("# hetero cpu weights v2: <rank> <weight> <label>\n0 0.25 forces\n");
  CHECK_THROWS_WITH(hetero::load_weights(path),
                    ContainsSubstring("load it on every rank with load_weights(path, comm)"));
  CHECK(hetero::split_labels().empty());

  // Labels no file can hold are refused before the file is opened: the old file stays whole.
  write("# hetero cpu weights v1: <weight> <label>\n0.5 kept\n");
  for (const std::string& label : {std::string(), std::string("two\nlines")}) {
    hetero::forget_split_labels();
    hetero::reset_weight("fine", 0.5);
    hetero::reset_weight(label, 0.3);
    CHECK_THROWS_WITH(hetero::save_weights(path), ContainsSubstring("cannot be saved in a weights file") &&
                                                      ContainsSubstring("nothing was written"));
    hetero::forget_split_labels();
    hetero::load_weights(path);
    CHECK(hetero::split_labels() == std::vector<std::string>{"kept"});
  }
  hetero::forget_split_labels();
  std::remove(path.c_str());
}

TEST_CASE("every rank's weights go to one file and each rank gets its own back", "[exec][weights][mpi]") {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hetero::forget_split_labels();
  auto gen = hetero::testing::rng(63);  // the same draws on every rank: each takes its own slot
  std::uniform_real_distribution<double> weight(0, 1);
  std::vector<double> forces(static_cast<std::size_t>(size));
  for (auto& w : forces) w = weight(gen);
  hetero::reset_weight("nbody forces", forces[static_cast<std::size_t>(rank)]);
  if (rank == 0) hetero::reset_weight("only on rank 0", 0.75);
  int pid = ::getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const auto path = "hetero-rank-weights-" + std::to_string(pid) + ".txt";
  hetero::save_weights(path, MPI_COMM_WORLD);
  hetero::forget_split_labels();
  hetero::load_weights(path, MPI_COMM_WORLD);
  CHECK(hetero::cpu_weight("nbody forces") == forces[static_cast<std::size_t>(rank)]);
  CHECK(hetero::split_labels().size() == (rank == 0 ? 2u : 1u));
  // A file without ranks applies to every rank.
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::ofstream(path) << "# hetero cpu weights v1: <weight> <label>\n0.25 dgemm\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  hetero::load_weights(path, MPI_COMM_WORLD);
  CHECK(hetero::cpu_weight("dgemm") == 0.25);
  // A bad line is refused on every rank.
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::ofstream(path) << "# hetero cpu weights v2: <rank> <weight> <label>\n0 1.5 dgemm\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_THROWS_WITH(hetero::load_weights(path, MPI_COMM_WORLD),
                    ContainsSubstring("line 2") && ContainsSubstring("allowed: [0, 1]"));
  // A label no file can hold on the last rank: refused on every rank, the file left as it was.
  hetero::reset_weight("nbody forces", 0.5);
  if (rank == size - 1) hetero::reset_weight("", 0.5);
  CHECK_THROWS_WITH(hetero::save_weights(path, MPI_COMM_WORLD),
                    rank == size - 1 ? ContainsSubstring("label '' (on this rank) cannot be saved")
                                     : ContainsSubstring("rank " + std::to_string(size - 1) + " has a label"));
  CHECK_THROWS_WITH(hetero::load_weights(path, MPI_COMM_WORLD), ContainsSubstring("line 2"));  // unchanged
  hetero::forget_split_labels();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::remove(path.c_str());
}

TEST_CASE("hetero handles stand for their ranks: a communicator, a sub-communicator, a grid",
          "[exec][weights][mpi]") {
  const hetero::communicator world;
  int pid = ::getpid();
  world.broadcast(hetero::send_recv_buf(pid), hetero::root(0));
  const std::string stem = "hetero-handle-weights-" + std::to_string(pid);

  save_and_load_through(world, world.rank(), world.size(), stem + ".txt", 71);

  // Ranks split by parity: each half writes its own file, numbered by its ranks in the half.
  MPI_Comm split = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world.rank() % 2, world.rank(), &split);
  {
    const hetero::communicator half(split);
    save_and_load_through(half, half.rank(), half.size(),
                          stem + "-half" + std::to_string(world.rank() % 2) + ".txt",
                          73 + static_cast<std::uint64_t>(world.rank() % 2));
    half.barrier();
    if (half.rank() == 0) std::remove((stem + "-half" + std::to_string(world.rank() % 2) + ".txt").c_str());
  }
  MPI_Comm_free(&split);

  const hetero::process_grid<1> grid({world.size()});
  save_and_load_through(grid, grid.comm().rank(), grid.comm().size(), stem + "-grid.txt", 79);
  world.barrier();
  if (world.rank() == 0) {
    std::remove((stem + ".txt").c_str());
    std::remove((stem + "-grid.txt").c_str());
  }
}

TEST_CASE("save_weights: a rank that never arrives gives the others a deadlock_error, not a hang",
          "[exec][weights][mpi][errors]") {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return;  // one rank waits for nobody
  hetero::forget_split_labels();
  hetero::reset_weight("nbody forces", 0.5);
  const int late = size - 1;
  {
    hetero::communicator_options o;
    const double seconds = 0.3 * hetero::testing::time_scale();  // scale.sh: many ranks on few cores
    o.wait_timeout = std::chrono::duration<double>(seconds);
    const std::string limit = hetero::testing::limit_text(seconds) + " for other ranks";
    const hetero::communicator comm(o);
    const hetero::process_grid<1> grid({size}, comm);  // a handle whose comm() carries the timeout
    CHECK(hetero::comm_ref(grid).wait_timeout() == o.wait_timeout);
    CHECK(hetero::comm_ref(grid).get() == comm.mpi_comm());
    if (rank != late) {
      // The wait names the call and the handle's option; rank 0 waits in the gather, the others
      // for rank 0's outcome.
      CHECK_THROWS_AS(hetero::save_weights(temp_path("never-written"), comm), hetero::deadlock_error);
      CHECK_THROWS_WITH(hetero::save_weights(temp_path("never-written"), grid),
                        ContainsSubstring("hetero::save_weights (root 0)") && ContainsSubstring(limit) &&
                            ContainsSubstring("communicator_options::wait_timeout)"));
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }  // requests left pending on the freed duplicate never complete; nothing waits for them
  if (rank == 0) {
    std::ifstream unwritten(temp_path("never-written"));
    CHECK_FALSE(unwritten.good());
  }
}

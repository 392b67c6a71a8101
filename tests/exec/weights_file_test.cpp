// Weights saved to a file and loaded again; unreadable files and malformed lines are named.
#include <hetero/exec/weights_file.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mpi.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

std::string temp_path(const char* stem) {
  return std::string("hetero-") + stem + "-" + std::to_string(::getpid()) + ".txt";
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

TEST_CASE("unreadable files and malformed lines are refused, naming the file and line", "[exec][weights]") {
  hetero::forget_split_labels();
  CHECK_THROWS_AS(hetero::load_weights("/nonexistent/dir/w.txt"), hetero::runtime_error);
  CHECK_THROWS_WITH(hetero::load_weights("/nonexistent/dir/w.txt"), ContainsSubstring("/nonexistent/dir/w.txt"));
  CHECK_THROWS_AS(hetero::save_weights("/nonexistent/dir/w.txt"), hetero::runtime_error);

  const auto path = temp_path("bad");
  const auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write("# comment\n0.5 fine\nnot-a-number label\n");
  CHECK_THROWS_WITH(hetero::load_weights(path), ContainsSubstring("line 3") && ContainsSubstring("not-a-number"));
  CHECK_THROWS_AS(hetero::load_weights(path), hetero::invalid_argument);
  CHECK(hetero::split_labels().empty());  // nothing was set
  write("1.5 too much\n");
  CHECK_THROWS_WITH(hetero::load_weights(path),
                    ContainsSubstring("weight 1.5") && ContainsSubstring("'too much'"));
  write("0.25\n");
  CHECK_THROWS_WITH(hetero::load_weights(path), ContainsSubstring("line 1"));
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
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::remove(path.c_str());
}

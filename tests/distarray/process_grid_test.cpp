// Process grids: shapes chosen and given, coordinates and ranks round-trip, neighbours, the
// shapes that do not fit the communicator, and the grid's communicator.
#include <hetero/comm.hpp>
#include <hetero/distarray/process_grid.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <limits>
#include <random>
#include <vector>

#include "random.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {
using hetero::testing::world_size;
}  // namespace

TEST_CASE("a process grid holds every rank once, row-major", "[dist][process_grid]") {
  const int p = world_size();
  hetero::process_grid<2> grid({p, 0});
  CHECK(grid.shape() == std::array<int, 2>{p, 1});
  CHECK(grid.size() == p);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  CHECK(grid.rank() == world_rank);
  for (int r = 0; r < p; ++r) CHECK(grid.rank_of(grid.coords_of(r)) == r);
  CHECK(grid.coords() == grid.coords_of(grid.rank()));

  hetero::process_grid<3> cube;  // MPI_Dims_create picks
  CHECK(cube.shape()[0] * cube.shape()[1] * cube.shape()[2] == p);
  hetero::process_grid<2> cols({1, p});
  CHECK(cols.coords() == std::array<int, 2>{0, world_rank});
  CHECK(cols.same_layout(hetero::process_grid<2>({1, p})));
  if (p > 1) CHECK_FALSE(cols.same_layout(grid));
}

TEST_CASE("neighbours along an axis, at the edges and wrapping around", "[dist][process_grid]") {
  const int p = world_size();
  hetero::process_grid<2> grid({1, p});
  const int me = grid.rank();
  CHECK(grid.neighbor(1, -1, false) == (me > 0 ? me - 1 : -1));
  CHECK(grid.neighbor(1, +1, false) == (me < p - 1 ? me + 1 : -1));
  CHECK(grid.neighbor(1, -1, true) == (me + p - 1) % p);
  CHECK(grid.neighbor(1, +1, true) == (me + 1) % p);
  CHECK(grid.neighbor(0, +1, false) == -1);
  CHECK(grid.neighbor(0, +1, true) == me);
}

TEST_CASE("grid shapes that do not fit the communicator are refused", "[dist][process_grid]") {
  const int p = world_size();
  CHECK_THROWS_AS(hetero::process_grid<2>({p + 1, 1}), hetero::distribution_error);
  CHECK_THROWS_WITH(hetero::process_grid<2>({p + 1, 1}),
                    ContainsSubstring("process grid [" + std::to_string(p + 1) + ", 1] does not fit the " +
                                      std::to_string(p) + " ranks"));
  CHECK_THROWS_WITH(hetero::process_grid<2>({p + 1, 0}), ContainsSubstring("which does not divide"));
  CHECK_THROWS_AS(hetero::process_grid<1>({-2}), hetero::invalid_argument);
  hetero::process_grid<1> line;
  CHECK_THROWS_WITH(line.coords_of(p), ContainsSubstring("rank " + std::to_string(p) + " is outside"));
  CHECK_THROWS_WITH(line.rank_of({p}), ContainsSubstring("grid coordinate " + std::to_string(p)));
  CHECK_THROWS_WITH(line.extent(1), ContainsSubstring("axis 1 is outside [0, 1)"));
}

TEST_CASE("a grid's communicator runs hetero's collectives over the grid's ranks", "[dist][process_grid]") {
  const int p = world_size();
  // Every rank draws every rank's values from the shared seed, so each knows the reference.
  auto rng = hetero::testing::rng(71);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<std::vector<double>> drawn(static_cast<std::size_t>(p), std::vector<double>(17));
  for (auto& row : drawn)
    for (double& v : row) v = value(rng);
  hetero::process_grid<2> grid({0, 1});
  const auto& mine = drawn[static_cast<std::size_t>(grid.rank())];
  std::vector<double> sum(mine.size());
  grid.comm().allreduce(hetero::send_buf(mine), hetero::recv_buf(sum), hetero::op(hetero::ops::sum{}));
  for (std::size_t i = 0; i < sum.size(); ++i) {
    double expected = 0;
    for (int r = 0; r < p; ++r) expected += drawn[static_cast<std::size_t>(r)][i];
    // p terms in (-1, 1), which the collective may add in another order.
    CHECK(sum[i] == Catch::Approx(expected).epsilon(0).margin(4 * p * std::numeric_limits<double>::epsilon()));
  }
  CHECK(grid.comm().size() == p);
  CHECK(grid.comm().rank() == grid.rank());
  // A grid made on a communicator shares it; one made on an MPI communicator owns a duplicate.
  const hetero::process_grid<1> same({0}, grid.comm());
  CHECK(same.mpi_comm() == grid.mpi_comm());
  CHECK(hetero::process_grid<1>({0}, grid.mpi_comm()).mpi_comm() != grid.mpi_comm());
  CHECK_THROWS_WITH(hetero::process_grid<1>({p + 1}, grid.comm()), ContainsSubstring("does not fit the"));
}

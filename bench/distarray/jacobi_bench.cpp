// Jacobi sweeps of the 2-D Laplace equation on 2 ranks in block rows: the global-view version
// (distributed arrays, reflect, owner-computes loops with global indices, reduce_owned) against
// a plain MPI + Kokkos version (local Views with halo rows, MPI_Isend/MPI_Irecv of the rows,
// MDRangePolicy kernels in local indices). Both sweep the same n x n grid with the same
// kernels; every 10th sweep also measures the largest update and combines it with
// MPI_Allreduce. One iteration is 10 sweeps; sweeps per second = 10 / time.
#include <hetero/distarray.hpp>

#include <utility>

#include "dist_bench.hpp"

namespace {

constexpr int sweeps = 10;

KOKKOS_INLINE_FUNCTION double distance(double a, double b) { return a > b ? a - b : b - a; }

// The 5-point Jacobi update at (i, j), for a View in local indices or a block_view in global ones.
template <class Grid>
KOKKOS_INLINE_FUNCTION double neighbors_mean(const Grid& u, std::int64_t i, std::int64_t j) {
  return 0.25 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1));
}

void hetero_jacobi(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  hetero::index_space<2> space({n, n}, hetero::process_grid<2>({p, 1}));
  const hetero::array_options<2> options{.shadow = hetero::shadow_width<2>::on_axis(0, 1, 1)};
  hetero::distributed_array<double, 2> u(space, options), next(space, options);
  Kokkos::deep_copy(u.local_with_shadow(), 1.0);
  Kokkos::deep_copy(next.local_with_shadow(), 1.0);
  const hetero::index_box<2> interior{{1, 1}, {n - 1, n - 1}};
  double residual = 0;
  auto run = [&] {
    for (int s = 1; s <= sweeps; ++s) {
      hetero::reflect(u);
      const auto from = u.block_view();
      const auto to = next.block_view();
      if (s < sweeps) {
        hetero::for_each_owned(
            "jacobi", space, interior,
            KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { to(i, j) = neighbors_mean(from, i, j); });
      } else {
        double local = 0;
        hetero::reduce_owned(
            "jacobi_residual", space, interior,
            KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& largest) {
              const double value = neighbors_mean(from, i, j);
              const double change = distance(value, from(i, j));
              largest = change > largest ? change : largest;
              to(i, j) = value;
            },
            Kokkos::Max<double>(local));
        residual = u.comm().allreduce(hetero::send_buf(local), hetero::op(hetero::ops::max{}));
      }
      std::swap(u, next);
    }
  };
  run();
  dist_bench::time_iterations(state, [&] { run(); });
  benchmark::DoNotOptimize(residual);
}

void baseline_mpi_kokkos(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const dist_bench::world_copy world;
  const MPI_Comm comm = world.comm;
  const int me = world.me, p = world.size;
  const hetero::axis_distribution blocks(n, p, hetero::distribution::block());  // the index arithmetic only
  const std::int64_t first = blocks.block_range(me).first, rows = blocks.local_size(me);
  using view = Kokkos::View<double**, Kokkos::LayoutRight>;
  view u("u", rows + 2, n), next("next", rows + 2, n);  // rows 0 and rows + 1: the halo
  Kokkos::deep_copy(u, 1.0);
  Kokkos::deep_copy(next, 1.0);
  const int below = me > 0 ? me - 1 : MPI_PROC_NULL, above = me < p - 1 ? me + 1 : MPI_PROC_NULL;
  // The interior rows 1 .. n-2 of the global grid, in local row numbers (halo row 0 first).
  const std::int64_t lo = std::max<std::int64_t>(1, first) - first + 1;
  const std::int64_t hi = std::min<std::int64_t>(n - 1, first + rows) - first + 1;
  using policy = Kokkos::MDRangePolicy<Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;
  double residual = 0;
  auto run = [&] {
    for (int s = 1; s <= sweeps; ++s) {
      MPI_Request requests[4];
      const int count = static_cast<int>(n);
      MPI_Irecv(&u(0, 0), count, MPI_DOUBLE, below, 0, comm, &requests[0]);
      MPI_Irecv(&u(rows + 1, 0), count, MPI_DOUBLE, above, 1, comm, &requests[1]);
      MPI_Isend(&u(1, 0), count, MPI_DOUBLE, below, 1, comm, &requests[2]);
      MPI_Isend(&u(rows, 0), count, MPI_DOUBLE, above, 0, comm, &requests[3]);
      MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
      const auto from = u;
      const auto to = next;
      if (s < sweeps) {
        Kokkos::parallel_for(
            "jacobi", policy({lo, 1}, {hi, n - 1}),
            KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { to(i, j) = neighbors_mean(from, i, j); });
        Kokkos::fence();
      } else {
        double local = 0;
        Kokkos::parallel_reduce(
            "jacobi_residual", policy({lo, 1}, {hi, n - 1}),
            KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& largest) {
              const double value = neighbors_mean(from, i, j);
              const double change = distance(value, from(i, j));
              largest = change > largest ? change : largest;
              to(i, j) = value;
            },
            Kokkos::Max<double>(local));
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_MAX, comm);
      }
      std::swap(u, next);
    }
  };
  run();
  dist_bench::time_iterations(state, [&] { run(); });
  benchmark::DoNotOptimize(residual);
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (std::int64_t n : {128, 512, 2048}) b->Arg(n);
};
const int registered[] = {
    hetero::bench::add("jacobi_10_sweeps/baseline_mpi_kokkos", baseline_mpi_kokkos, sizes),
    hetero::bench::add("jacobi_10_sweeps/hetero_global_view", hetero_jacobi, sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

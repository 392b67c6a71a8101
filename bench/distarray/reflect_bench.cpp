// reflect against a hand-written MPI halo exchange doing the same transfer, on 2 ranks.
//   reflect_rows: an n x n array in block rows (grid 2 x 1), one shadow row on each side; the
//     baseline sends the boundary rows straight from the array with MPI_Isend/MPI_Irecv.
//   reflect_cols: the same array in block columns (grid 1 x 2), one shadow column on each side
//     (strided in memory); the baseline uses an MPI_Type_vector for a column.
// One iteration is a batch of exchanges (more for small arrays); times are per batch.
#include <hetero/distarray.hpp>

#include <algorithm>

#include "dist_bench.hpp"

namespace {

int batch_for(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>((1 << 16) / n, 1, 64)); }

template <int Axis>
void hetero_reflect(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const int p = dist_bench::world().size;
  hetero::process_grid<2> grid(Axis == 0 ? std::array<int, 2>{p, 1} : std::array<int, 2>{1, p});
  hetero::distributed_array<double, 2, Kokkos::HostSpace> u(
      hetero::index_space<2>({n, n}, grid), {.shadow = hetero::shadow_width<2>::on_axis(Axis, 1, 1)});
  Kokkos::deep_copy(u.local_with_shadow(), 1.0);
  const int batch = batch_for(n);
  for (int warm = 0; warm < 10; ++warm) hetero::reflect(u);
  dist_bench::time_iterations(state, [&] {
    for (int i = 0; i < batch; ++i) hetero::reflect(u);
  });
  benchmark::DoNotOptimize(u.local_with_shadow().data());
}

template <int Axis>
void baseline_isend_irecv(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const dist_bench::world_copy world;
  const MPI_Comm comm = world.comm;
  const int me = world.me, p = world.size;
  const std::int64_t mine = hetero::axis_distribution(n, p, hetero::distribution::block()).local_size(me);
  // Rows: (mine + 2) x n with shadow rows 0 and mine + 1. Columns: n x (mine + 2).
  const std::int64_t rows = Axis == 0 ? mine + 2 : n, cols = Axis == 0 ? n : mine + 2;
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> u("u", rows, cols);
  Kokkos::deep_copy(u, 1.0);
  MPI_Datatype line = MPI_DATATYPE_NULL;
  if (Axis == 0) {
    MPI_Type_contiguous(static_cast<int>(n), MPI_DOUBLE, &line);
  } else {
    MPI_Type_vector(static_cast<int>(n), 1, static_cast<int>(cols), MPI_DOUBLE, &line);
  }
  MPI_Type_commit(&line);
  const int below = me > 0 ? me - 1 : MPI_PROC_NULL, above = me < p - 1 ? me + 1 : MPI_PROC_NULL;
  auto at = [&](std::int64_t k) { return Axis == 0 ? &u(k, 0) : &u(0, k); };  // row or column k
  auto exchange = [&] {
    MPI_Request requests[4];
    MPI_Irecv(at(0), 1, line, below, 0, comm, &requests[0]);
    MPI_Irecv(at(mine + 1), 1, line, above, 1, comm, &requests[1]);
    MPI_Isend(at(1), 1, line, below, 1, comm, &requests[2]);
    MPI_Isend(at(mine), 1, line, above, 0, comm, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
  };
  const int batch = batch_for(n);
  for (int warm = 0; warm < 10; ++warm) exchange();
  dist_bench::time_iterations(state, [&] {
    for (int i = 0; i < batch; ++i) exchange();
  });
  benchmark::DoNotOptimize(u.data());
  MPI_Type_free(&line);
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (std::int64_t n : {64, 512, 4096}) b->Arg(n);
};
const int registered[] = {
    hetero::bench::add("reflect_rows/baseline_isend_irecv", baseline_isend_irecv<0>, sizes),
    hetero::bench::add("reflect_rows/hetero_reflect", hetero_reflect<0>, sizes),
    hetero::bench::add("reflect_cols/baseline_isend_irecv_vector", baseline_isend_irecv<1>, sizes),
    hetero::bench::add("reflect_cols/hetero_reflect", hetero_reflect<1>, sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

// Fetching one b x b tile of doubles from the other of 2 ranks, one call after the other, as
// a tiled factorisation does: the matrix is nt tile rows cyclic over the ranks, a tile row one
// axis of nt * b^2 elements (tile k at [k b^2, (k+1) b^2)). Three ways, times per batch of
// 16 tiles:
// - baseline_mpi_get: MPI_Get of b^2 doubles + MPI_Win_flush on a window created once;
// - hetero_coarray_get: coarray<double, 2>::get of the section {row, tile};
// - hetero_gmove_get: gmove_get from distributed_array<double, 2> {nt, nt b^2} (cyclic x
//   block, one_sided).
// Family tile_fetch_new: every call the next of the other rank's 512 tiles, more than an
// array's plan cache holds, so gmove_get plans each exchange anew; tile_fetch_same: the same
// tile every call (gmove_get's plan cached).
#include <hetero/distarray.hpp>

#include <vector>

#include "dist_bench.hpp"

namespace {

constexpr std::int64_t tile_rows = 32;  // nt; the other rank owns 16 rows: 512 different tiles
constexpr int batch = 16;               // tiles per timed iteration

// The (row, tile) pairs owned by rank `other` of `p`, row by row.
std::vector<std::pair<std::int64_t, std::int64_t>> remote_tiles(int other, int p) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t i = other; i < tile_rows; i += p)
    for (std::int64_t k = 0; k < tile_rows; ++k) out.emplace_back(i, k);
  return out;
}

// Fetches every remote tile once (first touch), then times batches of fetches: the next
// tile each call when New, else always the same one. `sync` runs before and after the timing.
template <bool New, class FetchTile, class Sync>
void time_fetches(benchmark::State& state, int other, int p, FetchTile&& fetch_tile, Sync&& sync) {
  const auto tiles = remote_tiles(other, p);
  std::size_t next = 0;
  auto fetch = [&] {
    const auto [i, k] = New ? tiles[next++ % tiles.size()] : tiles.front();
    fetch_tile(i, k);
  };
  for (std::size_t warm = 0; warm < tiles.size(); ++warm) fetch();
  sync();
  dist_bench::time_iterations(state, [&] {
    for (int t = 0; t < batch; ++t) fetch();
  });
  sync();
}

template <bool New>
void baseline_mpi_get(benchmark::State& state) {
  const std::int64_t b2 = state.range(0) * state.range(0), row = tile_rows * b2;
  const dist_bench::world_copy world;
  const std::int64_t mine = (tile_rows - world.me + world.size - 1) / world.size;
  Kokkos::View<double*, Kokkos::HostSpace> exposed("exposed", static_cast<std::size_t>(mine * row));
  Kokkos::View<double*, Kokkos::HostSpace> tile("tile", static_cast<std::size_t>(b2));
  Kokkos::deep_copy(exposed, 2.0);
  MPI_Win win;
  MPI_Win_create(exposed.data(), static_cast<MPI_Aint>(exposed.size() * sizeof(double)), sizeof(double),
                 MPI_INFO_NULL, world.comm, &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  const int other = (world.me + 1) % world.size;
  time_fetches<New>(
      state, other, world.size,
      [&](std::int64_t i, std::int64_t k) {
        const MPI_Aint at = (i / world.size) * row + k * b2;  // the owner's local row i / p
        MPI_Get(tile.data(), static_cast<int>(b2), MPI_DOUBLE, other, at, static_cast<int>(b2), MPI_DOUBLE, win);
        MPI_Win_flush(other, win);
      },
      [&] { MPI_Barrier(world.comm); });
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  benchmark::DoNotOptimize(tile.data());
}

template <bool New>
void hetero_coarray_get(benchmark::State& state) {
  const std::int64_t b2 = state.range(0) * state.range(0);
  const auto [me, p] = dist_bench::world();
  hetero::coarray<double, 2, Kokkos::HostSpace> rows({(tile_rows + p - 1) / p, tile_rows * b2});
  Kokkos::deep_copy(rows.local(), 2.0);
  Kokkos::View<double**, Kokkos::HostSpace> tile("tile", 1, static_cast<std::size_t>(b2));
  const int other = (me + 1) % p;
  time_fetches<New>(
      state, other, p,
      [&](std::int64_t i, std::int64_t k) {
        rows.get(other, {hetero::slice::at(i / p), hetero::slice{k * b2, (k + 1) * b2}}, tile);
      },
      [&] { rows.sync_all(); });
  benchmark::DoNotOptimize(tile.data());
}

template <bool New>
void hetero_gmove_get(benchmark::State& state) {
  const std::int64_t b2 = state.range(0) * state.range(0);
  const auto [me, p] = dist_bench::world();
  hetero::index_space<2> space({tile_rows, tile_rows * b2}, hetero::process_grid<2>({p, 1}),
                               {hetero::distribution::cyclic(), hetero::distribution::block()});
  hetero::distributed_array<double, 2, Kokkos::HostSpace> a(space, {.one_sided = true});
  Kokkos::deep_copy(a.local(), 2.0);
  a.sync_all();
  Kokkos::View<double**, Kokkos::HostSpace> tile("tile", 1, static_cast<std::size_t>(b2));
  time_fetches<New>(
      state, (me + 1) % p, p,
      [&](std::int64_t i, std::int64_t k) {
        hetero::gmove_get(tile, a.section({hetero::slice::at(i), hetero::slice{k * b2, (k + 1) * b2}}));
      },
      [&] { a.sync_all(); });
  benchmark::DoNotOptimize(tile.data());
}

const auto tile_sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (std::int64_t tile : {64, 128}) b->Arg(tile);
};
const int registered[] = {
    hetero::bench::add("tile_fetch_new/baseline_mpi_get", baseline_mpi_get<true>, tile_sizes),
    hetero::bench::add("tile_fetch_new/hetero_coarray_get", hetero_coarray_get<true>, tile_sizes),
    hetero::bench::add("tile_fetch_new/hetero_gmove_get", hetero_gmove_get<true>, tile_sizes),
    hetero::bench::add("tile_fetch_same/baseline_mpi_get", baseline_mpi_get<false>, tile_sizes),
    hetero::bench::add("tile_fetch_same/hetero_coarray_get", hetero_coarray_get<false>, tile_sizes),
    hetero::bench::add("tile_fetch_same/hetero_gmove_get", hetero_gmove_get<false>, tile_sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

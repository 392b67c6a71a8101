// Bulk coarray get and put against raw MPI_Get / MPI_Put (each followed by MPI_Win_flush) on
// one window created once with MPI_Win_create and locked with MPI_Win_lock_all, on 2 ranks:
// every rank reads (writes) a contiguous block of n doubles from (to) the other rank. One
// iteration is a batch of transfers (more for small blocks); times are per batch.
#include <hetero/distarray.hpp>

#include <algorithm>

#include "dist_bench.hpp"

namespace {

int batch_for(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>((1 << 15) / n, 1, 64)); }

template <bool Get>
void hetero_coarray(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  hetero::coarray<double, 1, Kokkos::HostSpace> a({n});
  Kokkos::View<double*, Kokkos::HostSpace> buffer("buffer", static_cast<std::size_t>(n));
  Kokkos::deep_copy(a.local(), 2.0);
  Kokkos::deep_copy(buffer, 3.0);
  const int other = (a.this_image() + 1) % a.num_images();
  const hetero::section_spec<1> all{hetero::slice{0, n}};
  auto transfer = [&] {
    if constexpr (Get) {
      a.get(other, all, buffer);
    } else {
      a.put(other, all, buffer);
    }
  };
  const int batch = batch_for(n);
  for (int warm = 0; warm < 10; ++warm) transfer();
  a.sync_all();
  dist_bench::time_iterations(state, [&] {
    for (int i = 0; i < batch; ++i) transfer();
  });
  a.sync_all();
  benchmark::DoNotOptimize(buffer.data());
}

template <bool Get>
void baseline_mpi(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const dist_bench::world_copy world;
  const MPI_Comm comm = world.comm;
  const int me = world.me, p = world.size;
  Kokkos::View<double*, Kokkos::HostSpace> exposed("exposed", static_cast<std::size_t>(n));
  Kokkos::View<double*, Kokkos::HostSpace> buffer("buffer", static_cast<std::size_t>(n));
  Kokkos::deep_copy(exposed, 2.0);
  Kokkos::deep_copy(buffer, 3.0);
  MPI_Win win;
  MPI_Win_create(exposed.data(), static_cast<MPI_Aint>(n * sizeof(double)), sizeof(double), MPI_INFO_NULL, comm,
                 &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  const int other = (me + 1) % p;
  auto transfer = [&] {
    if constexpr (Get) {
      MPI_Get(buffer.data(), static_cast<int>(n), MPI_DOUBLE, other, 0, static_cast<int>(n), MPI_DOUBLE, win);
    } else {
      MPI_Put(buffer.data(), static_cast<int>(n), MPI_DOUBLE, other, 0, static_cast<int>(n), MPI_DOUBLE, win);
    }
    MPI_Win_flush(other, win);
  };
  const int batch = batch_for(n);
  for (int warm = 0; warm < 10; ++warm) transfer();
  MPI_Barrier(comm);
  dist_bench::time_iterations(state, [&] {
    for (int i = 0; i < batch; ++i) transfer();
  });
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  benchmark::DoNotOptimize(buffer.data());
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (std::int64_t n : {8, 512, 32768, 524288}) b->Arg(n);
};
const int registered[] = {
    hetero::bench::add("coarray_get/baseline_mpi_get", baseline_mpi<true>, sizes),
    hetero::bench::add("coarray_get/hetero_get", hetero_coarray<true>, sizes),
    hetero::bench::add("coarray_put/baseline_mpi_put", baseline_mpi<false>, sizes),
    hetero::bench::add("coarray_put/hetero_put", hetero_coarray<false>, sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

// Bulk coarray get and put against raw MPI_Get / MPI_Put (each followed by MPI_Win_flush) on
// one window created once with MPI_Win_create and locked with MPI_Win_lock_all, on 2 ranks:
// every rank reads (writes) a contiguous block of n doubles from (to) the other rank. One
// iteration is a batch of transfers (more for small blocks); times are per batch. hetero's
// coarray in host memory copies directly within a node (`hetero_get`, the default); the
// `hetero_mpi_get` cases turn that off (`shared_memory = false`) and use MPI's calls.
//
// Family coarray_get_busy: image 0 gets n doubles from image 1 while image 1 computes for
// 1 ms without calling MPI, as the owner of a tile does in a factorisation; the time is image
// 0's, from the call until the data is in its buffer (MPICH serves MPI_Get only when the target
// next calls MPI).
#include <hetero/distarray.hpp>

#include <algorithm>
#include <chrono>

#include "dist_bench.hpp"

namespace {

int batch_for(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>((1 << 15) / n, 1, 64)); }

template <bool Get, bool Shared = true>
void hetero_coarray(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  hetero::coarray<double, 1, Kokkos::HostSpace> a({n}, {.shared_memory = Shared});
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

// Image 1 computes for `busy` without MPI while image 0 runs `get`; returns image 0's time of
// it (0 on the other images).
template <class Get, class Barrier>
double get_from_busy(int me, Get&& get, Barrier&& barrier) {
  constexpr auto busy = std::chrono::milliseconds(1);
  barrier();
  const auto start = std::chrono::steady_clock::now();
  if (me == 1) {
    volatile double x = 0;
    while (std::chrono::steady_clock::now() - start < busy) x = x + 1;
  }
  if (me != 0) return 0;
  get();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <bool Shared>
void hetero_busy(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  hetero::coarray<double, 1, Kokkos::HostSpace> a({n}, {.shared_memory = Shared});
  Kokkos::View<double*, Kokkos::HostSpace> buffer("buffer", static_cast<std::size_t>(n));
  const hetero::section_spec<1> all{hetero::slice{0, n}};
  for (auto _ : state) {
    const double t = get_from_busy(
        a.this_image(), [&] { a.get(std::min(1, a.num_images() - 1), all, buffer); }, [&] { a.sync_all(); });
    hetero::bench::set_iteration_time(state, t);
  }
  a.sync_all();
  benchmark::DoNotOptimize(buffer.data());
}

void baseline_busy(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const dist_bench::world_copy world;
  Kokkos::View<double*, Kokkos::HostSpace> exposed("exposed", static_cast<std::size_t>(n));
  Kokkos::View<double*, Kokkos::HostSpace> buffer("buffer", static_cast<std::size_t>(n));
  MPI_Win win;
  MPI_Win_create(exposed.data(), static_cast<MPI_Aint>(n * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                 world.comm, &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  for (auto _ : state) {
    const double t = get_from_busy(
        world.me,
        [&] {
          const int target = std::min(1, world.size - 1);
          MPI_Get(buffer.data(), static_cast<int>(n), MPI_DOUBLE, target, 0, static_cast<int>(n), MPI_DOUBLE, win);
          MPI_Win_flush(target, win);
        },
        [&] { MPI_Barrier(world.comm); });
    hetero::bench::set_iteration_time(state, t);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  benchmark::DoNotOptimize(buffer.data());
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (std::int64_t n : {8, 512, 32768, 524288}) b->Arg(n);
};
const auto busy_sizes = [](benchmark::internal::Benchmark* b) {
  // A fixed count: the timed get is far shorter than the 1 ms around it, from which Google
  // Benchmark would otherwise plan thousands of iterations.
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(200);
  for (std::int64_t n : {512, 65536}) b->Arg(n);  // 4 KiB; 512 KiB, four 128 x 128 tiles
};
const int registered[] = {
    hetero::bench::add("coarray_get/baseline_mpi_get", baseline_mpi<true>, sizes),
    hetero::bench::add("coarray_get/hetero_get", hetero_coarray<true>, sizes),
    hetero::bench::add("coarray_get/hetero_mpi_get", hetero_coarray<true, false>, sizes),
    hetero::bench::add("coarray_put/baseline_mpi_put", baseline_mpi<false>, sizes),
    hetero::bench::add("coarray_put/hetero_put", hetero_coarray<false>, sizes),
    hetero::bench::add("coarray_put/hetero_mpi_put", hetero_coarray<false, false>, sizes),
    hetero::bench::add("coarray_get_busy/baseline_mpi_get", baseline_busy, busy_sizes),
    hetero::bench::add("coarray_get_busy/hetero_get", hetero_busy<true>, busy_sizes),
    hetero::bench::add("coarray_get_busy/hetero_mpi_get", hetero_busy<false>, busy_sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

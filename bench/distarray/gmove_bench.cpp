// gmove block -> cyclic of a 1-D array of doubles against a hand-written MPI_Alltoallv version
// of the same redistribution, on 2 ranks. The baseline packs what goes to each rank with one
// strided loop per destination, exchanges with MPI_Alltoallv and receives straight into the
// cyclic array (what arrives from one source is contiguous there); its counts are computed
// once, as gmove's plan is.
// gmove of a block-distributed array into a local View on every rank (XcalableMP's gmove to a
// replicated array, nbody's gather of positions) against MPI_Allgatherv of the blocks (counts
// and displacements computed once); n + 1 elements, so the blocks are uneven.
#include <hetero/distarray.hpp>

#include <vector>

#include "dist_bench.hpp"

namespace {

void hetero_gmove(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  hetero::process_grid<1> grid;
  hetero::distributed_array<double, 1, Kokkos::HostSpace> block(hetero::index_space<1>({n}, grid));
  hetero::distributed_array<double, 1, Kokkos::HostSpace> cyclic(
      hetero::index_space<1>({n}, grid, {hetero::distribution::cyclic()}));
  Kokkos::deep_copy(block.local(), 1.5);
  for (int warm = 0; warm < 3; ++warm) hetero::gmove(cyclic, block);
  dist_bench::time_iterations(state, [&] { hetero::gmove(cyclic, block); });
  benchmark::DoNotOptimize(cyclic.local().data());
}

void baseline_alltoallv(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const dist_bench::world_copy world;
  const MPI_Comm comm = world.comm;
  const int me = world.me, p = world.size;
  const hetero::axis_distribution blocks(n, p, hetero::distribution::block());  // the index arithmetic only
  auto begin_of = [&](std::int64_t r) { return r < p ? blocks.block_range(static_cast<int>(r)).first : n; };
  const std::int64_t first = begin_of(me), last = begin_of(me + 1);
  std::vector<double> source(static_cast<std::size_t>(last - first), 1.5), send(source.size());
  std::vector<double> target(static_cast<std::size_t>(blocks.local_size(me)));
  // Counts and displacements, once: to rank q go my indices g = q mod p; from rank s come its
  // block's indices g = me mod p, which sit from local index ceil((begin_s - me) / p) on.
  auto owned_in = [&](std::int64_t b, std::int64_t e, std::int64_t q) {
    const std::int64_t lo = b + ((q - b) % p + p) % p;
    return lo < e ? (e - lo + p - 1) / p : 0;
  };
  std::vector<int> send_counts(static_cast<std::size_t>(p)), send_at(send_counts.size());
  std::vector<int> recv_counts(send_counts.size()), recv_at(send_counts.size());
  for (int q = 0, at = 0; q < p; ++q) {
    send_counts[static_cast<std::size_t>(q)] = static_cast<int>(owned_in(first, last, q));
    send_at[static_cast<std::size_t>(q)] = at;
    at += send_counts[static_cast<std::size_t>(q)];
    const std::int64_t b = begin_of(q), e = begin_of(q + 1);
    recv_counts[static_cast<std::size_t>(q)] = static_cast<int>(owned_in(b, e, me));
    recv_at[static_cast<std::size_t>(q)] = static_cast<int>(b > me ? (b - me + p - 1) / p : 0);
  }
  auto redistribute = [&] {
    for (int q = 0; q < p; ++q) {
      double* out = send.data() + send_at[static_cast<std::size_t>(q)];
      for (std::int64_t g = first + ((q - first) % p + p) % p; g < last; g += p)
        *out++ = source[static_cast<std::size_t>(g - first)];
    }
    MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_DOUBLE, target.data(), recv_counts.data(),
                  recv_at.data(), MPI_DOUBLE, comm);
  };
  for (int warm = 0; warm < 3; ++warm) redistribute();
  dist_bench::time_iterations(state, [&] { redistribute(); });
  benchmark::DoNotOptimize(target.data());
}

void hetero_gmove_to_replicated(benchmark::State& state) {
  const std::int64_t n = state.range(0) + 1;
  hetero::distributed_array<double, 1, Kokkos::HostSpace> block(
      hetero::index_space<1>({n}, hetero::process_grid<1>()));
  Kokkos::View<double*, Kokkos::HostSpace> everything("everything", static_cast<std::size_t>(n));
  Kokkos::deep_copy(block.local(), 1.5);
  for (int warm = 0; warm < 3; ++warm) hetero::gmove(everything, block);
  dist_bench::time_iterations(state, [&] { hetero::gmove(everything, block); });
  benchmark::DoNotOptimize(everything.data());
}

void baseline_allgatherv(benchmark::State& state) {
  const std::int64_t n = state.range(0) + 1;
  const dist_bench::world_copy world;
  const int me = world.me, p = world.size;
  const hetero::axis_distribution blocks(n, p, hetero::distribution::block());  // the index arithmetic only
  std::vector<int> counts(static_cast<std::size_t>(p)), displs(counts.size());
  for (int q = 0, at = 0; q < p; ++q) {
    counts[static_cast<std::size_t>(q)] = static_cast<int>(blocks.local_size(q));
    displs[static_cast<std::size_t>(q)] = at;
    at += counts[static_cast<std::size_t>(q)];
  }
  std::vector<double> mine(static_cast<std::size_t>(blocks.local_size(me)), 1.5);
  std::vector<double> everything(static_cast<std::size_t>(n));
  auto gather = [&] {
    MPI_Allgatherv(mine.data(), counts[static_cast<std::size_t>(me)], MPI_DOUBLE, everything.data(), counts.data(),
                   displs.data(), MPI_DOUBLE, world.comm);
  };
  for (int warm = 0; warm < 3; ++warm) gather();
  dist_bench::time_iterations(state, [&] { gather(); });
  benchmark::DoNotOptimize(everything.data());
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (std::int64_t n : {1 << 12, 1 << 16, 1 << 20, 1 << 22}) b->Arg(n);
};
const int registered[] = {
    hetero::bench::add("gmove_block_to_cyclic/baseline_alltoallv", baseline_alltoallv, sizes),
    hetero::bench::add("gmove_block_to_cyclic/hetero_gmove", hetero_gmove, sizes),
    hetero::bench::add("gmove_to_replicated/baseline_allgatherv", baseline_allgatherv, sizes),
    hetero::bench::add("gmove_to_replicated/hetero_gmove", hetero_gmove_to_replicated, sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

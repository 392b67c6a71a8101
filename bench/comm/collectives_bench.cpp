// Latency and bandwidth of every collective, hetero's communicator (automatic choice: shared
// memory for small messages, MPI's call above the tuned threshold) against MPI's own call on a
// communicator of its own, per-rank message sizes 8 B to 8 MiB. One iteration is a batch of
// `calls_per_iteration` back-to-back calls, so that clock reads and the per-iteration
// agreement on the slowest rank's time cost little; reported times are per batch (family
// names say "_x8"), bench/comm/latency_table.sh divides them into per-call latencies.
#include <hetero/comm.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "bench_main.hpp"

namespace {

using hetero::collective;

// Every size of the table: 8 B to 8 MiB by factors of 4, and 1 KiB (the end of the
// small-message target).
const std::vector<long> sizes{8, 32, 128, 512, 1024, 2048, 8192, 32768, 131072, 524288, 2097152, 8388608};
constexpr int calls_per_iteration = 8;

hetero::communicator& ours() {
  static hetero::communicator comm;
  return comm;
}

MPI_Comm theirs() {
  static MPI_Comm comm = [] {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    return c;
  }();
  return comm;
}

// Buffers of one case: p blocks of n doubles to send from and receive into.
struct buffers {
  explicit buffers(std::size_t bytes)
      : n(std::max<std::size_t>(1, bytes / sizeof(double))),
        p(static_cast<std::size_t>(ours().size())),
        send(n * p, 1.0),
        recv(n * p, 0.0),
        counts(p, static_cast<int>(n)),
        displs(p) {
    for (std::size_t r = 0; r < p; ++r) displs[r] = static_cast<int>(r * n);
  }
  std::span<double> block(std::vector<double>& v) { return {v.data(), n}; }
  std::size_t n, p;
  std::vector<double> send, recv;
  std::vector<int> counts, displs;
};

// One call of collective C through hetero (Ours) or MPI.
template <collective C, bool Ours>
void call(buffers& b) {
  using namespace hetero;
  communicator& comm = ours();
  const int n = static_cast<int>(b.n);
  if constexpr (C == collective::barrier) {
    if constexpr (Ours)
      comm.barrier();
    else
      MPI_Barrier(theirs());
  } else if constexpr (C == collective::broadcast) {
    if constexpr (Ours)
      comm.broadcast(send_recv_buf(b.block(b.recv)));
    else
      MPI_Bcast(b.recv.data(), n, MPI_DOUBLE, 0, theirs());
  } else if constexpr (C == collective::scatter) {
    if constexpr (Ours)
      comm.scatter(send_buf(b.send), recv_buf(b.block(b.recv)));
    else
      MPI_Scatter(b.send.data(), n, MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, 0, theirs());
  } else if constexpr (C == collective::scatterv) {
    if constexpr (Ours)
      comm.scatterv(send_buf(b.send), send_counts(b.counts), recv_buf(b.block(b.recv)));
    else
      MPI_Scatterv(b.send.data(), b.counts.data(), b.displs.data(), MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, 0,
                   theirs());
  } else if constexpr (C == collective::gather) {
    if constexpr (Ours)
      comm.gather(send_buf(b.block(b.send)), recv_buf(b.recv));
    else
      MPI_Gather(b.send.data(), n, MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, 0, theirs());
  } else if constexpr (C == collective::gatherv) {
    if constexpr (Ours)
      comm.gatherv(send_buf(b.block(b.send)), recv_buf(b.recv), recv_counts(b.counts));
    else
      MPI_Gatherv(b.send.data(), n, MPI_DOUBLE, b.recv.data(), b.counts.data(), b.displs.data(), MPI_DOUBLE, 0,
                  theirs());
  } else if constexpr (C == collective::reduce) {
    if constexpr (Ours)
      comm.reduce(send_buf(b.block(b.send)), recv_buf(b.block(b.recv)), op(ops::sum{}));
    else
      MPI_Reduce(b.send.data(), b.recv.data(), n, MPI_DOUBLE, MPI_SUM, 0, theirs());
  } else if constexpr (C == collective::allgather) {
    if constexpr (Ours)
      comm.allgather(send_buf(b.block(b.send)), recv_buf(b.recv));
    else
      MPI_Allgather(b.send.data(), n, MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, theirs());
  } else if constexpr (C == collective::allgatherv) {
    if constexpr (Ours)
      comm.allgatherv(send_buf(b.block(b.send)), recv_buf(b.recv), recv_counts(b.counts));
    else
      MPI_Allgatherv(b.send.data(), n, MPI_DOUBLE, b.recv.data(), b.counts.data(), b.displs.data(), MPI_DOUBLE,
                     theirs());
  } else {
    if constexpr (Ours)
      comm.allreduce(send_buf(b.block(b.send)), recv_buf(b.block(b.recv)), op(ops::sum{}));
    else
      MPI_Allreduce(b.send.data(), b.recv.data(), n, MPI_DOUBLE, MPI_SUM, theirs());
  }
}

template <collective C, bool Ours>
void run(benchmark::State& state) {
  const auto bytes = C == collective::barrier ? std::size_t{0} : static_cast<std::size_t>(state.range(0));
  buffers b(bytes);
  // Warm up: MPICH switches to its shared-memory collectives after 5 calls on a communicator.
  for (int i = 0; i < 10; ++i) call<C, Ours>(b);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls_per_iteration; ++i) call<C, Ours>(b);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    hetero::bench::set_iteration_time(state, elapsed.count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * calls_per_iteration *
                          static_cast<std::int64_t>(bytes));
}

const auto with_sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (long s : sizes) b->Arg(s);
};
const auto without_size = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
};

template <collective C>
int add_family(const char* family) {
  const auto& configure = C == collective::barrier ? without_size : with_sizes;
  const std::string name = std::string(family) + "_x" + std::to_string(calls_per_iteration);
  hetero::bench::add(name + "/baseline_mpi", run<C, false>, configure);
  return hetero::bench::add(name + "/hetero", run<C, true>, configure);
}

const int registered[] = {
    add_family<collective::allreduce>("allreduce"), add_family<collective::broadcast>("broadcast"),
    add_family<collective::barrier>("barrier"),     add_family<collective::reduce>("reduce"),
    add_family<collective::allgather>("allgather"), add_family<collective::gather>("gather"),
    add_family<collective::scatter>("scatter"),     add_family<collective::allgatherv>("allgatherv"),
    add_family<collective::gatherv>("gatherv"),     add_family<collective::scatterv>("scatterv")};

}  // namespace

HETERO_BENCHMARK_MAIN()

// Latency and bandwidth of every collective, hetero's communicator (automatic choice: shared
// memory for small messages, MPI's call above the tuned threshold) against MPI's own call on a
// communicator of its own, per-rank message sizes 8 B to 8 MiB. One iteration is a batch of
// `calls_per_iteration` back-to-back calls, so that clock reads and the per-iteration
// agreement on the slowest rank's time cost little; reported times are per batch (family
// names say "_x8"), bench/comm/latency_table.sh divides them into per-call latencies.
//
// Each size is registered as its own pair (MPI's call, then hetero's), so in every round the two
// sides of one size run back to back: at the large sizes an iteration lasts milliseconds and a
// slow phase of this machine (vCPU preemption) lasting a second or two would otherwise fall on
// one side only.
//
// The families mpi_path_<collective>_x8 time hetero with MPI's call forced against MPI's call
// at 8 bytes, where a per-call overhead of hetero's front end (argument checks, the choice, the
// wrapper) would show most: the same MPI call runs on both sides. At 8 bytes (and for barrier)
// the variant hetero_timeout_off runs hetero with its wait timeout off (hetero::wait_timeout,
// docs/results/core.md): "hetero" against it is what the default timeout costs. The variant
// hetero_checks_local (on mpi_path_ only) runs with argument_check::local, MPI's own promise
// (a rank's bad arguments raise there only): against MPI it is the front end's overhead alone,
// and "hetero" against it what the default consistent checks' status step costs.
//
// Above 8 KiB the variant hetero_hierarchical (allreduce, broadcast, reduce) forces the node-aware
// algorithm (comm_algorithm::hierarchical) where the ranks span several nodes and some share one
// (docs/results/core.md), so that its time above the sizes it is chosen for shows beside MPI's.
//
// The families checks_<collective>_x8 time hetero's automatic choice under the three argument
// checks (communicator_options::argument_checks): local (the baseline), consistent (the
// default: a root's error reaches every rank) and full (one extra allreduce per call), at 8 B
// (and 1 KiB for gather, 128 KiB for reduce: hetero's own algorithm), so that what the default
// costs shows next to what it saves.
#include <hetero/comm.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "bench_main.hpp"

namespace {

using hetero::collective;
using hetero::comm_algorithm;

// Every size of the table: 8 B to 8 MiB by factors of 4, and 1 KiB (the end of the
// small-message target). The smoke run takes one size per kind of path: shared memory (8 B),
// MPI's call (e.g. allreduce at 128 KiB) and hetero's own algorithms above the window (binomial
// reduce, linear scatter and ring allgatherv at 2 MiB).
const std::vector<long>& sizes() {
  static const std::vector<long> all{8, 32, 128, 512, 1024, 2048, 8192, 32768, 131072, 524288, 2097152, 8388608};
  static const std::vector<long> smoke{8, 131072, 2097152};
  static const bool is_smoke = hetero::bench::smoke_run();
  return is_smoke ? smoke : all;
}
constexpr int calls_per_iteration = 8;

// Both communicators are released by a Kokkos finalize hook, while Kokkos and MPI still run
// (the runtime finalises Kokkos first); kept as plain statics they would outlive MPI and leak.
hetero::communicator& ours() {
  static std::unique_ptr<hetero::communicator> comm;
  if (!comm) {
    comm = std::make_unique<hetero::communicator>();
    Kokkos::push_finalize_hook([] { comm.reset(); });
  }
  return *comm;
}

MPI_Comm theirs() {
  static MPI_Comm comm = MPI_COMM_NULL;
  if (comm == MPI_COMM_NULL) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    Kokkos::push_finalize_hook([] { MPI_Comm_free(&comm); });
  }
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

// A communicator with argument checks `checks`, released like ours().
hetero::communicator& checked(hetero::argument_check checks) {
  static std::unique_ptr<hetero::communicator> comms[3];
  auto& comm = comms[static_cast<int>(checks)];
  if (!comm) {
    hetero::communicator_options o;
    o.argument_checks = checks;
    comm = std::make_unique<hetero::communicator>(o);
    Kokkos::push_finalize_hook([&comm] { comm.reset(); });
  }
  return *comm;
}

// One call of collective C through hetero (Ours, with algorithm A, on `comm`) or MPI.
template <collective C, bool Ours, comm_algorithm A = comm_algorithm::automatic>
void call(buffers& b, hetero::communicator& comm = ours()) {
  using namespace hetero;
  const int n = static_cast<int>(b.n);
  const auto algo = force_algorithm(A);
  if constexpr (C == collective::barrier) {
    if constexpr (Ours)
      comm.barrier(algo);
    else
      MPI_Barrier(theirs());
  } else if constexpr (C == collective::broadcast) {
    if constexpr (Ours)
      comm.broadcast(send_recv_buf(b.block(b.recv)), algo);
    else
      MPI_Bcast(b.recv.data(), n, MPI_DOUBLE, 0, theirs());
  } else if constexpr (C == collective::scatter) {
    if constexpr (Ours)
      comm.scatter(send_buf(b.send), recv_buf(b.block(b.recv)), algo);
    else
      MPI_Scatter(b.send.data(), n, MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, 0, theirs());
  } else if constexpr (C == collective::scatterv) {
    if constexpr (Ours)
      comm.scatterv(send_buf(b.send), send_counts(b.counts), recv_buf(b.block(b.recv)), algo);
    else
      MPI_Scatterv(b.send.data(), b.counts.data(), b.displs.data(), MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, 0,
                   theirs());
  } else if constexpr (C == collective::gather) {
    if constexpr (Ours)
      comm.gather(send_buf(b.block(b.send)), recv_buf(b.recv), algo);
    else
      MPI_Gather(b.send.data(), n, MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, 0, theirs());
  } else if constexpr (C == collective::gatherv) {
    if constexpr (Ours)
      comm.gatherv(send_buf(b.block(b.send)), recv_buf(b.recv), recv_counts(b.counts), algo);
    else
      MPI_Gatherv(b.send.data(), n, MPI_DOUBLE, b.recv.data(), b.counts.data(), b.displs.data(), MPI_DOUBLE, 0,
                  theirs());
  } else if constexpr (C == collective::reduce) {
    if constexpr (Ours)
      comm.reduce(send_buf(b.block(b.send)), recv_buf(b.block(b.recv)), op(ops::sum{}), algo);
    else
      MPI_Reduce(b.send.data(), b.recv.data(), n, MPI_DOUBLE, MPI_SUM, 0, theirs());
  } else if constexpr (C == collective::allgather) {
    if constexpr (Ours)
      comm.allgather(send_buf(b.block(b.send)), recv_buf(b.recv), algo);
    else
      MPI_Allgather(b.send.data(), n, MPI_DOUBLE, b.recv.data(), n, MPI_DOUBLE, theirs());
  } else if constexpr (C == collective::allgatherv) {
    if constexpr (Ours)
      comm.allgatherv(send_buf(b.block(b.send)), recv_buf(b.recv), recv_counts(b.counts), algo);
    else
      MPI_Allgatherv(b.send.data(), n, MPI_DOUBLE, b.recv.data(), b.counts.data(), b.displs.data(), MPI_DOUBLE,
                     theirs());
  } else {
    if constexpr (Ours)
      comm.allreduce(send_buf(b.block(b.send)), recv_buf(b.block(b.recv)), op(ops::sum{}), algo);
    else
      MPI_Allreduce(b.send.data(), b.recv.data(), n, MPI_DOUBLE, MPI_SUM, theirs());
  }
}

template <collective C, bool Ours, comm_algorithm A = comm_algorithm::automatic>
void run(benchmark::State& state) {
  const auto bytes = C == collective::barrier ? std::size_t{0} : static_cast<std::size_t>(state.range(0));
  buffers b(bytes);
  // Warm up: MPICH switches to its shared-memory collectives after 5 calls on a communicator.
  for (int i = 0; i < 10; ++i) call<C, Ours, A>(b);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls_per_iteration; ++i) call<C, Ours, A>(b);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    hetero::bench::set_iteration_time(state, elapsed.count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * calls_per_iteration *
                          static_cast<std::int64_t>(bytes));
}

// `run` with hetero's wait timeout off (0: MPI's blocking calls, no clock): the family's
// "hetero" variant runs with the default timeout, so the two give the timeout's cost.
template <collective C, comm_algorithm A = comm_algorithm::automatic>
void run_timeout_off(benchmark::State& state) {
  const hetero::timeout saved = hetero::wait_timeout();
  hetero::set_wait_timeout(hetero::no_timeout);
  run<C, true, A>(state);
  hetero::set_wait_timeout(saved);
}

// hetero with the node-aware algorithm forced (its automatic choice only up to the shared-memory
// sizes), where the ranks span several nodes and some share one; reported as skipped elsewhere.
template <collective C>
void run_hierarchical(benchmark::State& state) {
  if (!ours().node_aware()) {
    state.SkipWithError(
        "skipped: the hierarchical algorithm needs ranks on several nodes, some sharing one "
        "(docs/nodes.md: emulated nodes)");
    return;
  }
  run<C, true, comm_algorithm::hierarchical>(state);
}

// hetero (algorithm A, automatic by default) for collective C on a communicator with argument
// checks `Checks`.
template <collective C, hetero::argument_check Checks, comm_algorithm A = comm_algorithm::automatic>
void run_checks(benchmark::State& state) {
  const auto bytes = C == collective::barrier ? std::size_t{0} : static_cast<std::size_t>(state.range(0));
  buffers b(bytes);
  hetero::communicator& comm = checked(Checks);
  for (int i = 0; i < 10; ++i) call<C, true, A>(b, comm);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls_per_iteration; ++i) call<C, true, A>(b, comm);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    hetero::bench::set_iteration_time(state, elapsed.count());
  }
}

// Registers the three argument checks for collective C at `size` bytes (-1: none), one triple
// per size so that the three run back to back in every round.
template <collective C>
int add_checks(const std::string& family, long size) {
  using hetero::argument_check;
  const std::string name = "checks_" + family + "_x" + std::to_string(calls_per_iteration);
  const auto with_size = [size](benchmark::internal::Benchmark* b) {
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (size >= 0) b->Arg(size);
  };
  hetero::bench::add(name + "/baseline_local", run_checks<C, argument_check::local>, with_size);
  hetero::bench::add(name + "/consistent", run_checks<C, argument_check::consistent>, with_size);
  return hetero::bench::add(name + "/full", run_checks<C, argument_check::full>, with_size);
}

// Registers MPI's call and hetero's for collective C: one pair per size (see the top), as
// family "<family>_x8" (plus "mpi_path_<family>_x8" at 8 bytes, hetero forced onto MPI's call).
template <collective C>
int add_family(const std::string& family) {
  const std::string name = family + "_x" + std::to_string(calls_per_iteration);
  const auto with_size = [](long size) {
    return [size](benchmark::internal::Benchmark* b) {
      b->UseManualTime()->Unit(benchmark::kMicrosecond);
      if (size >= 0) b->Arg(size);
    };
  };
  const std::vector<long> each = C == collective::barrier ? std::vector<long>{-1} : sizes();
  for (long size : each) {
    hetero::bench::add(name + "/baseline_mpi", run<C, false>, with_size(size));
    hetero::bench::add(name + "/hetero", run<C, true>, with_size(size));
    if (size <= 8) hetero::bench::add(name + "/hetero_timeout_off", run_timeout_off<C>, with_size(size));
    if (hetero::implements(C, comm_algorithm::hierarchical) && size > 8192)
      hetero::bench::add(name + "/hetero_hierarchical", run_hierarchical<C>, with_size(size));
  }
  const long smallest = C == collective::barrier ? -1 : 8;
  hetero::bench::add("mpi_path_" + name + "/baseline_mpi", run<C, false>, with_size(smallest));
  hetero::bench::add("mpi_path_" + name + "/hetero_timeout_off", run_timeout_off<C, comm_algorithm::mpi>,
                     with_size(smallest));
  hetero::bench::add("mpi_path_" + name + "/hetero_checks_local",
                     run_checks<C, hetero::argument_check::local, comm_algorithm::mpi>, with_size(smallest));
  return hetero::bench::add("mpi_path_" + name + "/hetero", run<C, true, comm_algorithm::mpi>,
                            with_size(smallest));
}

const int registered[] = {
    add_family<collective::allreduce>("allreduce"),    add_family<collective::broadcast>("broadcast"),
    add_family<collective::barrier>("barrier"),        add_family<collective::reduce>("reduce"),
    add_family<collective::allgather>("allgather"),    add_family<collective::gather>("gather"),
    add_family<collective::scatter>("scatter"),        add_family<collective::allgatherv>("allgatherv"),
    add_family<collective::gatherv>("gatherv"),        add_family<collective::scatterv>("scatterv"),
    add_checks<collective::allreduce>("allreduce", 8), add_checks<collective::broadcast>("broadcast", 8),
    add_checks<collective::barrier>("barrier", -1),    add_checks<collective::gather>("gather", 8),
    add_checks<collective::gather>("gather", 1024),    add_checks<collective::reduce>("reduce", 8),
    add_checks<collective::reduce>("reduce", 131072)};

}  // namespace

HETERO_BENCHMARK_MAIN()

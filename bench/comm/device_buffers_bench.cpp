// Collectives of GPU buffers (Views in the device's memory) on ranks sharing a GPU, against what
// a user writes with an MPI that does not take device pointers (MPICH here): copy the buffer to
// the host, call MPI there, copy the result back. Per-rank sizes 8 B, 64 KiB, 1 MiB and 8 MiB;
// one iteration is a batch of 8 back-to-back calls (reported per batch; families
// allreduce_device_x8, broadcast_device_x8 from rank 0, allgather_device_x8):
//  - baseline_mpi_staged: Kokkos::deep_copy to a host View, the MPI call, deep_copy back (a
//    broadcast copies to the host on the root and back on the others only);
//  - hetero_automatic: hetero's communicator as it comes (it stages where MPI is not GPU-aware);
//  - hetero_staged (allreduce): device_buffer_path::staged (pinned host buffers, asynchronous
//    copies).
// `direct` (device pointers to MPI) needs a CUDA-aware MPI and is refused by name without one.
// Every case checks its result once against the values every rank put in, computed serially. In
// a run of the GPU kit each case's bound is the batch's copies to the host and back at the
// measured pinned rates (bench/support/bounds.hpp).
#include <hetero/comm.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "bench_main.hpp"

namespace {

using device_memory = Kokkos::DefaultExecutionSpace::memory_space;
using vector = Kokkos::View<double*, device_memory>;
constexpr int calls_per_iteration = 8;

static_assert(!Kokkos::SpaceAccessibility<Kokkos::HostSpace, device_memory>::accessible,
              "hetero: device_buffers_bench needs a device memory the host cannot address");

hetero::communicator& comm_for(hetero::device_buffer_path path) {
  static std::unique_ptr<hetero::communicator> comms[2];
  auto& c = comms[path == hetero::device_buffer_path::staged ? 1 : 0];
  if (!c) {
    hetero::communicator_options o;
    o.device_path = path;
    c = std::make_unique<hetero::communicator>(o);
    Kokkos::push_finalize_hook([&c] { c.reset(); });
  }
  return *c;
}

// x_i = rank + 1 + i % 7 on every rank: the sum over p ranks is p (p + 1) / 2 + p (i % 7).
// (A free function: nvcc takes no device lambda in a constructor.)
vector filled(std::size_t n) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double r = rank;
  vector x("x", n);
  Kokkos::parallel_for(
      "fill", n, KOKKOS_LAMBDA(std::size_t i) { x(i) = r + 1 + static_cast<double>(i % 7); });
  Kokkos::fence();
  return x;
}

int ranks() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

int my_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

enum class collective { allreduce, broadcast, allgather };

// The operands of one collective: x (n, rank-dependent) and the result y (n; a broadcast's result
// is x itself; an allgather's has n per rank), with the serial expectation.
struct operands {
  collective kind;
  std::size_t n;
  int p = ranks();
  vector x, y;
  operands(collective k, std::size_t count)
      : kind(k),
        n(count),
        x(filled(count)),
        y("y", k == collective::allgather ? count * static_cast<std::size_t>(p) : count) {}
  [[nodiscard]] const vector& result() const { return kind == collective::broadcast ? x : y; }
  [[nodiscard]] double expected(std::size_t i) const {
    const double r = p, pattern = static_cast<double>(i % n % 7);
    if (kind == collective::allreduce) return r * (r + 1) / 2 + r * pattern;
    if (kind == collective::broadcast) return 1 + pattern;  // rank 0's values
    return static_cast<double>(i / n) + 1 + pattern;        // block q is rank q's
  }
  void check(const char* what) const {
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, result());
    for (std::size_t i = 0; i < h.extent(0); ++i)
      if (h(i) != expected(i))
        throw std::runtime_error(std::string(what) + ": element " + std::to_string(i) + " is wrong");
  }
  // What one call must copy between the device and the host at least (bench/support/bounds.hpp).
  [[nodiscard]] hetero::bench::device_work work() const {
    const double bytes = static_cast<double>(n * sizeof(double));
    if (kind == collective::allreduce) return hetero::bench::staged_allreduce_work(bytes);
    if (kind == collective::broadcast) return hetero::bench::staged_broadcast_work(bytes);
    return hetero::bench::staged_allgather_work(bytes, p);
  }
};

template <class Call>
void timed(benchmark::State& state, const operands& o, Call&& call) {
  call();
  o.check("the first call");
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < calls_per_iteration; ++k) call();
    hetero::bench::set_iteration_time(
        state, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * calls_per_iteration * state.range(0));
  hetero::bench::device_work batch;
  for (int k = 0; k < calls_per_iteration; ++k) batch += o.work();
  hetero::bench::report_bound(state, batch);
}

std::size_t count_of(const benchmark::State& state) {
  return static_cast<std::size_t>(state.range(0)) / sizeof(double);
}

template <collective Kind>
void mpi_staged(benchmark::State& state) {
  const operands o(Kind, count_of(state));
  auto hx = Kokkos::create_mirror_view(o.x), hy = Kokkos::create_mirror_view(o.y);
  const int n = static_cast<int>(hx.extent(0));
  const bool root = my_rank() == 0;
  timed(state, o, [&] {
    if (Kind != collective::broadcast || root) Kokkos::deep_copy(hx, o.x);
    if constexpr (Kind == collective::allreduce) {
      MPI_Allreduce(hx.data(), hy.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      Kokkos::deep_copy(o.y, hy);
    } else if constexpr (Kind == collective::broadcast) {
      MPI_Bcast(hx.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (!root) Kokkos::deep_copy(o.x, hx);
    } else {
      MPI_Allgather(hx.data(), n, MPI_DOUBLE, hy.data(), n, MPI_DOUBLE, MPI_COMM_WORLD);
      Kokkos::deep_copy(o.y, hy);
    }
  });
}

template <collective Kind, hetero::device_buffer_path Path>
void hetero_collective(benchmark::State& state) {
  const operands o(Kind, count_of(state));
  const auto& comm = comm_for(Path);
  timed(state, o, [&] {
    if constexpr (Kind == collective::allreduce) {
      comm.allreduce(hetero::send_buf(o.x), hetero::recv_buf(o.y), hetero::op(hetero::ops::sum{}));
    } else if constexpr (Kind == collective::broadcast) {
      comm.broadcast(hetero::send_recv_buf(o.x), hetero::root(0));
    } else {
      comm.allgather(hetero::send_buf(o.x), hetero::recv_buf(o.y));
    }
  });
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Arg(8)->Arg(1 << 16)->Arg(1 << 20)->Arg(8 << 20);
};

using path = hetero::device_buffer_path;
const int registered[] = {
    hetero::bench::add("allreduce_device_x8/baseline_mpi_staged", mpi_staged<collective::allreduce>, sizes),
    hetero::bench::add("allreduce_device_x8/hetero_automatic",
                       hetero_collective<collective::allreduce, path::automatic>, sizes),
    hetero::bench::add("allreduce_device_x8/hetero_staged", hetero_collective<collective::allreduce, path::staged>,
                       sizes),
    hetero::bench::add("broadcast_device_x8/baseline_mpi_staged", mpi_staged<collective::broadcast>, sizes),
    hetero::bench::add("broadcast_device_x8/hetero_automatic",
                       hetero_collective<collective::broadcast, path::automatic>, sizes),
    hetero::bench::add("allgather_device_x8/baseline_mpi_staged", mpi_staged<collective::allgather>, sizes),
    hetero::bench::add("allgather_device_x8/hetero_automatic",
                       hetero_collective<collective::allgather, path::automatic>, sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

// Allreduce of GPU buffers (Views in the device's memory) on ranks sharing a GPU, against what
// a user writes with an MPI that does not take device pointers (MPICH here): copy the buffer to
// the host, MPI_Allreduce there, copy the result back. Per-rank sizes 8 B and 1 MiB; one
// iteration is a batch of 8 back-to-back calls (reported per batch; family allreduce_device_x8):
//  - baseline_mpi_staged: Kokkos::deep_copy to a host View, MPI_Allreduce, deep_copy back;
//  - hetero_automatic: hetero's communicator as it comes (it stages where MPI is not GPU-aware);
//  - hetero_staged: device_buffer_path::staged (pinned host buffers, asynchronous copies).
// `direct` (device pointers to MPI) needs a CUDA-aware MPI and is refused by name without one.
// Every case checks its result once against the serial sum of every rank's values. In a run of
// the GPU kit each case's bound is the batch's copies to the host and back at the measured
// pinned rates (bench/support/bounds.hpp).
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

struct operands {
  vector x, y;
  explicit operands(std::size_t n) : x(filled(n)), y("y", n) {}
  void check(const char* what) const {
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const double p = ranks;
    for (std::size_t i = 0; i < h.extent(0); ++i)
      if (h(i) != p * (p + 1) / 2 + p * static_cast<double>(i % 7))
        throw std::runtime_error(std::string(what) + ": element " + std::to_string(i) + " is wrong");
  }
};

template <class Call>
void timed(benchmark::State& state, Call&& call) {
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < calls_per_iteration; ++k) call();
    hetero::bench::set_iteration_time(
        state, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * calls_per_iteration * state.range(0));
  hetero::bench::device_work batch;
  for (int k = 0; k < calls_per_iteration; ++k)
    batch += hetero::bench::staged_allreduce_work(static_cast<double>(state.range(0)));
  hetero::bench::report_bound(state, batch);
}

void mpi_staged(benchmark::State& state) {
  operands o(static_cast<std::size_t>(state.range(0)) / sizeof(double));
  auto hx = Kokkos::create_mirror_view(o.x), hy = Kokkos::create_mirror_view(o.y);
  const int n = static_cast<int>(hx.extent(0));
  auto call = [&] {
    Kokkos::deep_copy(hx, o.x);
    MPI_Allreduce(hx.data(), hy.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    Kokkos::deep_copy(o.y, hy);
  };
  call();
  o.check("MPI on staged host copies");
  timed(state, call);
}

template <hetero::device_buffer_path Path>
void hetero_allreduce(benchmark::State& state) {
  operands o(static_cast<std::size_t>(state.range(0)) / sizeof(double));
  auto& comm = comm_for(Path);
  auto call = [&] {
    comm.allreduce(hetero::send_buf(o.x), hetero::recv_buf(o.y), hetero::op(hetero::ops::sum{}));
  };
  call();
  o.check("hetero");
  timed(state, call);
}

const auto sizes = [](benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Arg(8)->Arg(1 << 20);
};

const int registered[] = {
    hetero::bench::add("allreduce_device_x8/baseline_mpi_staged", mpi_staged, sizes),
    hetero::bench::add("allreduce_device_x8/hetero_automatic",
                       hetero_allreduce<hetero::device_buffer_path::automatic>, sizes),
    hetero::bench::add("allreduce_device_x8/hetero_staged", hetero_allreduce<hetero::device_buffer_path::staged>,
                       sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()

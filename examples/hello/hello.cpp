// hello: what hetero's runtime sees on this machine, and one small parallel computation.
//
// Every rank integrates 4 / (1 + x^2) over its block of [0, 1) with a Kokkos parallel_reduce;
// the communicator's allreduce adds the blocks. Rank 0 repeats the whole sum with a serial loop and checks
// that both agree (and are close to pi).
//   mpiexec -n 2 ./hello [intervals]
#include <hetero/hetero.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <string>
#include <vector>

namespace {

// Midpoint rule on [begin, end) of n intervals of [0, 1).
double integrate(long begin, long end, long n) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "hello_pi", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<long>>(begin, end),
      KOKKOS_LAMBDA(long i, double& s) {
        const double x = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
        s += 4.0 / (1.0 + x * x);
      },
      sum);
  return sum / static_cast<double>(n);
}

double integrate_serial(long n) {
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    const double x = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    sum += 4.0 / (1.0 + x * x);
  }
  return sum / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const hetero::communicator world;  // every rank
  const long n = argc > 1 ? std::stol(argv[1]) : 10'000'000;

  // Where each rank stands: every rank describes itself, rank 0 prints the lines in rank order
  // (output of different ranks is not ordered by mpiexec).
  std::array<char, 160> line{};
  const std::string device = rt.device_count() > 0 ? "device " + std::to_string(rt.device_id()) + " of " +
                                                         std::to_string(rt.device_count())
                                                   : std::string("no device");
  std::snprintf(line.data(), line.size(), "rank %d of %d: node-local rank %d of %d, %d host thread(s), %s",
                rt.world_rank(), rt.world_size(), rt.local_rank(), rt.local_size(), rt.host_threads(),
                device.c_str());
  const std::vector<char> lines = world.gather(hetero::send_buf(line), hetero::root(0));
  for (int r = 0; rt.world_rank() == 0 && r < rt.world_size(); ++r)
    std::printf("%s\n", lines.data() + static_cast<std::size_t>(r) * line.size());
  if (rt.world_rank() == 0) {
    std::string backends;
    for (const auto& b : rt.kokkos_backends()) backends += (backends.empty() ? "" : ", ") + b;
    std::printf("Kokkos %s backends: %s (default first)\n", HETERO_KOKKOS_VERSION_STRING, backends.c_str());
    std::printf("MPI thread level: %s; GPU-aware MPI: CUDA %s, HIP %s\n", hetero::to_string(rt.mpi_thread_level()),
                hetero::to_string(hetero::mpi_gpu_support(hetero::gpu_kind::cuda)),
                hetero::to_string(hetero::mpi_gpu_support(hetero::gpu_kind::hip)));
  }

  // Balanced blocks of [0, n): the first n % p ranks get one interval more.
  const hetero::axis_distribution intervals(n, world.size(), hetero::distribution::block());
  const auto [begin, end] = intervals.block_range(world.rank());
  const double total = world.allreduce(hetero::send_buf(integrate(begin, end, n)), hetero::op(hetero::ops::sum{}));

  int ok = 1;
  if (rt.world_rank() == 0) {
    const double serial = integrate_serial(n);
    const double difference = std::abs(total - serial) / serial;
    ok = difference < 1e-12;
    std::printf("pi by %ld intervals on %d rank(s): parallel %.15f, serial %.15f, relative difference %.1e: %s\n",
                n, rt.world_size(), total, serial, difference, ok ? "agree" : "DISAGREE");
    std::printf("error against pi: %.1e\n", std::abs(total - std::numbers::pi));
  }
  world.broadcast(hetero::send_recv_buf(ok), hetero::root(0));
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

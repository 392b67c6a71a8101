// task with a CUDA device queue: device tasks run on Kokkos::Cuda instances (one graph device
// per instance), pinned or not, with device kernels inside, recorded and replayed.
#include <hetero/task.hpp>

#include <vector>

#include "instantiate.hpp"

void cuda_check::task() {
  Kokkos::View<double*, device_memory> v("v", 1024);
  hetero::task_graph<device> graph({.workers = 2, .comm = MPI_COMM_SELF}, {device()});
  auto e = graph.event("e");
  graph.spawn("fill", hetero::device(), hetero::out(e), [=](const device& space) {
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<device>(space, 0, 1024), KOKKOS_LAMBDA(int i) { v(i) = i; });
  });
  graph.spawn("scale", hetero::device(0), hetero::in(e), [=](const device& space) {
    Kokkos::parallel_for(
        "scale", Kokkos::RangePolicy<device>(space, 0, 1024), KOKKOS_LAMBDA(int i) { v(i) *= 2; });
  });
  graph.spawn("host", hetero::in(e), [] {});
  graph.wait();
  auto step = graph.record([&] {
    graph.spawn("again", hetero::device(), [=](const device& space) {
      Kokkos::parallel_for(
          "again", Kokkos::RangePolicy<device>(space, 0, 1024), KOKKOS_LAMBDA(int i) { v(i) += 1; });
    });
  });
  graph.replay(step);
  graph.wait();
}

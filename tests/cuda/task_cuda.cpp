// task with a CUDA device queue: device tasks run on Kokkos::Cuda instances (one graph device
// per instance), pinned or not, with device kernels inside, recorded and replayed; task data
// (a View, tiles) used by host tasks, device tasks (kernels on CudaSpace copies) and tasks with
// both bodies.
#include <hetero/task.hpp>

#include <cstdint>
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

  using host_vector = Kokkos::View<double*, Kokkos::HostSpace>;
  using on_device = hetero::data_view<device, host_vector>;
  host_vector x("x", 1024);
  auto data = graph.data("x", x);
  graph.spawn("device", hetero::device(), hetero::updates(data), [](const device& space, on_device d) {
    Kokkos::parallel_for(
        "twice", Kokkos::RangePolicy<device>(space, 0, d.extent(0)), KOKKOS_LAMBDA(int i) { d(i) *= 2; });
  });
  graph.spawn("host", hetero::reads(data), [](auto h) { (void)h(0); });
  graph.spawn("either", hetero::updates(data),
              hetero::host_or_device([](auto h) { h(0) += 1; },
                                     [](const device& space, on_device d) {
                                       Kokkos::parallel_for(
                                           "one", Kokkos::RangePolicy<device>(space, 0, 1),
                                           KOKKOS_LAMBDA(int i) { d(i) += 1; });
                                     }));
  std::vector<host_vector> mine{host_vector("t", 8)};
  auto tiles = graph.tiles(
      "T", {1}, {8}, [](std::int64_t) { return 0; }, [&](std::int64_t) { return mine[0]; });
  std::vector<hetero::task_data<host_vector>> row{tiles(0)};
  graph.spawn("tiles", hetero::device(), hetero::reads(row), hetero::updates(data),
              [](const device&, auto parts, auto d) { (void)parts.size(), (void)d; });
  graph.wait(data);
  graph.wait();
  (void)graph.statistics();
}

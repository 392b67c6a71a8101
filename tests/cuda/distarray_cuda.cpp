// dist with arrays in CudaSpace: blocks and shadows in device memory, reflect (blocking and
// asynchronous, rows gathered and scattered by team kernels), gmove between device and host
// arrays and local device Views, one-sided gmove on staged windows, coarrays, owner loops on
// Kokkos::Cuda (direct and through the index map of cyclic axes), the GPU/CPU split executor,
// redistribution.
#include <hetero/distarray.hpp>

#include <array>
#include <cstdint>

#include "instantiate.hpp"

namespace {

template <int Rank>
using device_array = hetero::distributed_array<double, Rank, cuda_check::device_memory>;

template <int Rank>
void arrays_of_rank() {
  std::array<std::int64_t, Rank> extents{};
  extents.fill(64);
  hetero::index_space<Rank> space(extents, hetero::process_grid<Rank>());
  device_array<Rank> u(space, {.shadow = hetero::shadow_width<Rank>::uniform(1), .one_sided = true});
  hetero::distributed_array<double, Rank, Kokkos::HostSpace> h(space);
  hetero::reflect(u);
  auto pending = hetero::reflect_async(u, {.corners = false});
  pending.wait();
  hetero::section_spec<Rank> all{};
  hetero::gmove(h.section(all), u.section(all));
  hetero::gmove(u.section(all), h.section(all));
  hetero::gmove_get(h.section(all), u.section(all));
  hetero::gmove_put(u.section(all), h.section(all));
  // A local View in device memory on every rank, column-major: strided rows on the device.
  using local_view = Kokkos::View<typename hetero::detail::view_data<double, Rank>::type, Kokkos::LayoutLeft,
                                  cuda_check::device_memory>;
  local_view local;
  if constexpr (Rank == 1) local = local_view("local", 64);
  if constexpr (Rank == 2) local = local_view("local", 64, 64);
  if constexpr (Rank == 3) local = local_view("local", 64, 64, 64);
  hetero::gmove(hetero::section(local, all), u.section(all));
  hetero::gmove(u.section(all), hetero::section(local, all));
}

}  // namespace

void cuda_check::dist() {
  arrays_of_rank<1>();
  arrays_of_rank<2>();
  arrays_of_rank<3>();

  // Owner loops on the device: block axes (direct) and cyclic axes (index map).
  hetero::index_space<2> blocks({256, 256}, hetero::process_grid<2>());
  hetero::index_space<2> cyclic({256, 256}, hetero::process_grid<2>(),
                                {hetero::distribution::cyclic(), hetero::distribution::block_cyclic(4)});
  for (const auto& space : {blocks, cyclic}) {
    device_array<2> u(space);
    const auto v = u.global_view();
    hetero::for_each_owned(
        device(), "init", space, space.box(), KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { v(i, j) = i - j; });
    double largest = 0, sum = 0;
    hetero::reduce_owned(
        device(), "max", space, space.box(),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& m) { m = v(i, j) > m ? v(i, j) : m; },
        Kokkos::Max<double>(largest));
    hetero::reduce_owned(
        device(), "sum", space, space.box(),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& s) { s += v(i, j); }, sum);
  }

  // The GPU/CPU split executor: the array must be reachable from both sides (managed memory).
  hetero::distributed_array<double, 2, Kokkos::CudaUVMSpace> shared(cyclic);
  const auto w = shared.global_view();
  const hetero::split_executor<device, host> split;
  hetero::for_each_owned(
      split, "split", cyclic, cyclic.box(), KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { w(i, j) = i + j; });
  double total = 0;
  hetero::reduce_owned(
      split, "split sum", cyclic, cyclic.box(),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& s) { s += w(i, j); }, total);

  // Coarrays in device memory; redistribution of a device array.
  hetero::coarray<double, 2, device_memory> c({32, 32});
  const hetero::section_spec<2> corner{hetero::slice{0, 8}, hetero::slice{0, 8}};
  const auto fetched = c.get((c.this_image() + 1) % c.num_images(), corner);
  c.put(0, corner, fetched);
  c.sync_all();
  device_array<2> a(blocks);
  const auto balanced = hetero::rebalance(a, 0, 1.0);
  const auto moved = hetero::redistribute(balanced, cyclic);
  (void)moved;
}

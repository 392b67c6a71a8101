/// @file
/// `hetero::host_or_device`: a task body for each side. The graph runs each ready task where it
/// would finish first, from the measured time of its label on each side (per data size), the
/// time to move its data there and the work already queued there; each side is tried a few
/// times first, and the slower one now and then again.
#ifndef HETERO_TASK_HOST_OR_DEVICE_HPP
#define HETERO_TASK_HOST_OR_DEVICE_HPP

#include <type_traits>
#include <utility>

namespace hetero {

/// A host body and a device body of one task (made by `host_or_device`).
template <class HostBody, class DeviceBody>
struct host_or_device_body {
  HostBody host;      ///< called as `host(views...)` on a CPU worker
  DeviceBody device;  ///< called as `device(instance, views...)` on a device instance
};

/// The body of a task that may run on either side: the scheduler picks one per run. Both take
/// the task's data Views in clause order (host memory Views for `host`, device memory Views
/// after the instance for `device`).
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// Kokkos::View<double**, Kokkos::HostSpace> va("a", 8, 8), vb("b", 8, 8), vc("c", 8, 8);
/// auto a = graph.data("a", va), b = graph.data("b", vb), c = graph.data("c", vc);
/// static constexpr auto host_gemm = [](auto, auto, auto) {};
/// static constexpr auto device_gemm = [](const auto&, auto, auto, auto) {};
/// -->
/// @code
/// const auto on_host = [](auto a, auto b, auto c) { host_gemm(a, b, c); };
/// const auto on_device = [](const auto& space, auto a, auto b, auto c) { device_gemm(space, a, b, c); };
/// graph.spawn("gemm", hetero::reads(a, b), hetero::updates(c), hetero::host_or_device(on_host, on_device));
/// @endcode
template <class HostBody, class DeviceBody>
[[nodiscard]] host_or_device_body<std::decay_t<HostBody>, std::decay_t<DeviceBody>> host_or_device(
    HostBody&& host, DeviceBody&& device) {
  return {std::forward<HostBody>(host), std::forward<DeviceBody>(device)};
}

namespace detail {
template <class T>
struct is_host_or_device : std::false_type {};
template <class H, class D>
struct is_host_or_device<host_or_device_body<H, D>> : std::true_type {};
}  // namespace detail

}  // namespace hetero

#endif  // HETERO_TASK_HOST_OR_DEVICE_HPP

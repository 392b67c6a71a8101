/// @file
/// `hetero::split_executor`: owner-computes loops (`for_each_owned`, `reduce_owned`) whose owned
/// part is split between a device and the host cores by the exec module's self-balancing
/// `parallel_for`/`parallel_reduce` (XMP-dev's `loop on` with the work-sharing weight).
#ifndef HETERO_DISTARRAY_SPLIT_EXECUTOR_HPP
#define HETERO_DISTARRAY_SPLIT_EXECUTOR_HPP

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "hetero/distarray/loop.hpp"
#include "hetero/distarray/section.hpp"
#include "hetero/exec/parallel_for.hpp"
#include "hetero/exec/split_policy.hpp"
#include "hetero/exec/work_sharing.hpp"

namespace hetero {

namespace detail {

/// Runs `f` over the inner axes of a box for one index of its first axis (the split axis). The
/// inner bounds are plain members: `std::array` is host code. `Device`: host-device code for a
/// GPU device side, host code otherwise (see loop.hpp).
template <int Rank, class F, bool Device>
struct split_rows_body {
  std::int64_t begin1, end1, begin2, end2;
  F f;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    if constexpr (Rank == 1) {
      f(i);
    } else if constexpr (Rank == 2) {
      for (std::int64_t j = begin1; j < end1; ++j) f(i, j);
    } else {
      for (std::int64_t j = begin1; j < end1; ++j)
        for (std::int64_t k = begin2; k < end2; ++k) f(i, j, k);
    }
  }
};

template <int Rank, class F>
struct split_rows_body<Rank, F, false> {
  std::int64_t begin1, end1, begin2, end2;
  F f;

  void operator()(std::int64_t i) const {
    if constexpr (Rank == 1) {
      f(i);
    } else if constexpr (Rank == 2) {
      for (std::int64_t j = begin1; j < end1; ++j) f(i, j);
    } else {
      for (std::int64_t j = begin1; j < end1; ++j)
        for (std::int64_t k = begin2; k < end2; ++k) f(i, j, k);
    }
  }
};

/// The reduction form: `f(i..., acc)` over the inner axes.
template <int Rank, class F, class Value, bool Device>
struct split_rows_reduce_body {
  using value_type = Value;
  std::int64_t begin1, end1, begin2, end2;
  F f;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Value& acc) const {
    if constexpr (Rank == 1) {
      f(i, acc);
    } else if constexpr (Rank == 2) {
      for (std::int64_t j = begin1; j < end1; ++j) f(i, j, acc);
    } else {
      for (std::int64_t j = begin1; j < end1; ++j)
        for (std::int64_t k = begin2; k < end2; ++k) f(i, j, k, acc);
    }
  }
};

template <int Rank, class F, class Value>
struct split_rows_reduce_body<Rank, F, Value, false> {
  using value_type = Value;
  std::int64_t begin1, end1, begin2, end2;
  F f;

  void operator()(std::int64_t i, Value& acc) const {
    if constexpr (Rank == 1) {
      f(i, acc);
    } else if constexpr (Rank == 2) {
      for (std::int64_t j = begin1; j < end1; ++j) f(i, j, acc);
    } else {
      for (std::int64_t j = begin1; j < end1; ++j)
        for (std::int64_t k = begin2; k < end2; ++k) f(i, j, k, acc);
    }
  }
};

/// The inner bounds of `box` (axes 1 and 2; empty where the box has no such axis).
template <int Rank>
std::array<std::int64_t, 4> inner_bounds(const index_box<Rank>& box) {
  std::array<std::int64_t, 4> b{0, 0, 0, 0};
  if constexpr (Rank >= 2) b[0] = box.begin[1], b[1] = box.end[1];
  if constexpr (Rank >= 3) b[2] = box.begin[2], b[3] = box.end[2];
  return b;
}

}  // namespace detail

/// An `owned_loop_executor` that splits the first axis of each owned box between `Device` and
/// `Host` with `hetero::parallel_for` on a `work_sharing` handle (`default_work_sharing()`
/// unless one is given; one weight and tuner per loop label, as for any split loop:
/// `sharing().cpu_weight(label)`, ...). Both sides run the same body, so the
/// arrays it touches must be reachable from both spaces: host memory when the "device" is a
/// host space (as on a CPU-only machine), or memory both can access (e.g. CUDA's
/// `SharedSpace`); a `distributed_array` in plain device memory is not readable by the host side.
/// <!-- snippet: fragment
/// hetero::index_space<2> space({64, 64}, hetero::process_grid<2>());
/// hetero::distributed_array<double, 2> ua(space, {.shadow = hetero::shadow_width<2>::uniform(1)}), va(space);
/// auto u = ua.block_view();
/// auto v = va.block_view();
/// hetero::index_box<2> interior{{1, 1}, {63, 63}};
/// auto stencil = [](const auto& a, std::int64_t i, std::int64_t j) { return a(i - 1, j) + a(i + 1, j); };
/// -->
/// @code
/// hetero::split_executor<Kokkos::OpenMP, Kokkos::Serial> split;
/// hetero::for_each_owned(split, "sweep", space, interior,
///                        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { v(i, j) = stencil(u, i, j); });
/// hetero::work_sharing solver;  // labels, tuners and helper thread of its own
/// hetero::split_executor<Kokkos::OpenMP, Kokkos::Serial> own(solver);
/// @endcode
template <execution_space Device = default_device_space, execution_space Host = default_host_space>
class split_executor {
 public:
  using device_space = Device;  ///< The execution space of the device part of each split.
  using host_space = Host;      ///< The execution space of the host part of each split.

  split_executor() = default;
  /// Uses these instances of the two spaces.
  split_executor(Device device, Host host) : m_device(std::move(device)), m_host(std::move(host)) {}
  /// Splits on `sharing` (its weights, tuners and helper thread), with these instances.
  explicit split_executor(work_sharing sharing, Device device = Device(), Host host = Host())
      : m_sharing(std::move(sharing)), m_device(std::move(device)), m_host(std::move(host)) {}

  /// The work-sharing handle the loops run on.
  [[nodiscard]] const work_sharing& sharing() const noexcept { return m_sharing; }

  /// Runs `f` over `box`, its first axis split between the device and the host.
  template <int Rank, class F>
  void for_each(const std::string& label, const index_box<Rank>& box, const F& f) const {
    if (box.empty()) return;
    const auto b = detail::inner_bounds(box);
    ::hetero::parallel_for(m_sharing, label,
                           split_policy<Device, Host>(m_device, m_host, box.begin[0], box.end[0]),
                           detail::split_rows_body<Rank, F, is_gpu_space<Device>>{b[0], b[1], b[2], b[3], f});
  }

  /// Reduces `f(i..., acc)` over `box` into `result` (a scalar reference: sum; or a Kokkos
  /// reducer), the first axis split between the device and the host.
  template <int Rank, class F, class Result>
  void reduce(const std::string& label, const index_box<Rank>& box, const F& f, Result&& result) const {
    using value = typename detail::reduction_value<Result>::type;
    const auto b = detail::inner_bounds(box);
    const std::int64_t end = box.empty() ? box.begin[0] : box.end[0];  // an empty box may be reversed
    ::hetero::parallel_reduce(
        m_sharing, label, split_policy<Device, Host>(m_device, m_host, box.begin[0], end),
        detail::split_rows_reduce_body<Rank, F, value, is_gpu_space<Device>>{b[0], b[1], b[2], b[3], f},
        std::forward<Result>(result));
  }

 private:
  work_sharing m_sharing = default_work_sharing();
  Device m_device;
  Host m_host;
};

}  // namespace hetero

#endif  // HETERO_DISTARRAY_SPLIT_EXECUTOR_HPP

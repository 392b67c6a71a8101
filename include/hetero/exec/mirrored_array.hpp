/// @file
/// `hetero::mirrored_array`: an array with a device copy and a host copy (like Kokkos'
/// DualView) that records, per row range, which copy is current, and moves only the rows a side
/// lacks. Where both spaces share memory there is one allocation and nothing ever moves.
#ifndef HETERO_EXEC_MIRRORED_ARRAY_HPP
#define HETERO_EXEC_MIRRORED_ARRAY_HPP

#include <Kokkos_Core.hpp>

#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/exec/detail/interval_set.hpp"
#include "hetero/exec/spaces.hpp"

namespace hetero {

/// The view of a mirrored array that a `parallel_for`/`parallel_reduce` body receives, on the
/// device side and on the host side alike: row-major, in `Kokkos::AnonymousSpace` (a view of
/// either copy converts to it, and indexing it costs what indexing the copy costs). Name it in
/// the body's parameters: nvcc accepts no generic (`auto`) `KOKKOS_LAMBDA`. A `const` data type
/// (`loop_view<const double*>`) takes an array read-only.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// hetero::mirrored_array<double*> x("x", n), y("y", n);
/// -->
/// @code
/// hetero::parallel_for("scale", n, hetero::access(hetero::reads(x), hetero::writes(y)),
///                      KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double*> x,
///                                    hetero::loop_view<double*> y) { y(i) = 2 * x(i); });
/// @endcode
template <class DataType>
using loop_view = Kokkos::View<DataType, Kokkos::LayoutRight, Kokkos::AnonymousSpace>;

/// Whether a mirrored array may share one allocation between its sides.
enum class mirror_mode {
  automatic,  ///< one allocation when both spaces use the same memory, two otherwise
  separate    ///< always two copies (lets tests see the row moves on a machine without a GPU)
};

/// An array of rank 1 or more (`double*`, `double**`, `double*[3]`, ...), row-major, with one
/// copy in the device's memory and one in the host's. Rows (the first index) are the unit of
/// partitioning and of moves. A cheap handle: copies share the data and its bookkeeping, which
/// is not locked (use one array from one thread at a time, as a loop's access list does).
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// -->
/// @code
/// hetero::mirrored_array<double*[3], Kokkos::OpenMP, Kokkos::Serial> pos("pos", n);
/// auto h = pos.host_view();       // fill on the host ...
/// pos.modify_host();              // ... and say so: the device copy is now stale
/// @endcode
template <class DataType, execution_space Device = default_device_space, execution_space Host = default_host_space>
class mirrored_array {
 public:
  using device_space = Device;  ///< The execution space of the device copy.
  using host_space = Host;      ///< The execution space of the host copy.
  static_assert(!is_gpu_space<Host>,
                "hetero: the host copy of a mirrored array must live in host memory: give a "
                "host execution space as its third argument, the GPU space as its second");
  /// The device copy's view type.
  using device_view_type = Kokkos::View<DataType, Kokkos::LayoutRight, typename Device::memory_space>;
  /// The host copy's view type.
  using host_view_type = Kokkos::View<DataType, Kokkos::LayoutRight, typename Host::memory_space>;
  /// The view a loop body receives on either side (`hetero::loop_view<DataType>`): one type for
  /// both, so that the body can be a non-generic `KOKKOS_LAMBDA`, as nvcc requires.
  using loop_view_type = loop_view<DataType>;
  /// The element type.
  using value_type = typename device_view_type::non_const_value_type;

  /// An empty handle (no rows).
  mirrored_array() : m_state(std::make_shared<state>()) {}

  /// Allocates `extents` (one per run-time extent of `DataType`), zero-filled on both sides.
  template <std::integral... Extents>
  explicit mirrored_array(const std::string& label, Extents... extents)
      : mirrored_array(mirror_mode::automatic, label, extents...) {}

  /// As above, choosing whether the sides may share one allocation.
  template <std::integral... Extents>
  mirrored_array(mirror_mode mode, const std::string& label, Extents... extents)
      : m_state(std::make_shared<state>()) {
    static_assert(sizeof...(Extents) == device_view_type::rank_dynamic,
                  "hetero: give mirrored_array one extent per '*' of its data type");
    (check_extent(label, extents), ...);
    auto& s = *m_state;
    s.label = label;
    s.device = device_view_type(Kokkos::view_alloc(label + " (device)"), static_cast<std::size_t>(extents)...);
    if constexpr (hetero::shares_memory<Device, Host>) {
      s.shared = mode == mirror_mode::automatic;
      if (s.shared) s.host = s.device;
    }
    if (!s.shared)
      s.host = host_view_type(Kokkos::view_alloc(label + " (host)"), static_cast<std::size_t>(extents)...);
    s.rows = static_cast<std::int64_t>(s.device.extent(0));
    s.row_values = s.rows > 0 ? s.device.span() / s.device.extent(0) : 0;
    s.device_current.add(0, s.rows);  // both copies start zero-filled, so both are current
    s.host_current.add(0, s.rows);
  }

  /// The label given at construction.
  [[nodiscard]] const std::string& label() const noexcept { return m_state->label; }
  /// Rows (extent 0).
  [[nodiscard]] std::int64_t rows() const noexcept { return m_state->rows; }
  /// Extent `r` of the array.
  [[nodiscard]] std::size_t extent(unsigned r) const noexcept { return m_state->device.extent(r); }
  /// Bytes in one row.
  [[nodiscard]] std::size_t row_bytes() const noexcept { return m_state->row_values * sizeof(value_type); }
  /// True when both sides are one allocation (nothing is ever moved).
  [[nodiscard]] bool shares_memory() const noexcept { return m_state->shared; }

  /// The device copy, as it is (no move: call `sync_device` first where needed).
  [[nodiscard]] const device_view_type& device_view() const noexcept { return m_state->device; }
  /// The host copy, as it is (no move: call `sync_host` first where needed).
  [[nodiscard]] const host_view_type& host_view() const noexcept { return m_state->host; }

  /// Makes rows [lo, hi) (all rows by default) current on the device, moving only the rows it
  /// lacks from the host.
  void sync_device(std::int64_t lo = 0, std::int64_t hi = -1) { sync(side::device, lo, hi); }
  /// Makes rows [lo, hi) (all by default) current on the host, moving only what it lacks.
  void sync_host(std::int64_t lo = 0, std::int64_t hi = -1) { sync(side::host, lo, hi); }
  /// Records that rows [lo, hi) (all by default) were written on the device: the host's are stale.
  void modify_device(std::int64_t lo = 0, std::int64_t hi = -1) { modify(side::device, lo, hi); }
  /// Records that rows [lo, hi) (all by default) were written on the host: the device's are stale.
  void modify_host(std::int64_t lo = 0, std::int64_t hi = -1) { modify(side::host, lo, hi); }

  /// True when the device copy of rows [lo, hi) (all by default) is current.
  [[nodiscard]] bool device_current(std::int64_t lo = 0, std::int64_t hi = -1) const {
    return m_state->shared || m_state->device_current.contains(lo, checked_end(lo, hi));
  }
  /// True when the host copy of rows [lo, hi) (all by default) is current.
  [[nodiscard]] bool host_current(std::int64_t lo = 0, std::int64_t hi = -1) const {
    return m_state->shared || m_state->host_current.contains(lo, checked_end(lo, hi));
  }

  /// Copies `values` (row-major, all of the array) into the host copy; the host becomes newest.
  void assign_host(std::span<const value_type> values) {
    auto& s = *m_state;
    HETERO_EXPECTS(values.size() == s.host.span(), "mirrored array '", s.label, "' holds ", s.host.span(),
                   " values; the data given has ", values.size());
    if (!values.empty()) std::memcpy(s.host.data(), values.data(), values.size_bytes());
    modify_host();
  }

  /// Bytes moved host -> device since construction or `reset_transfer_counters`.
  [[nodiscard]] std::uint64_t bytes_to_device() const noexcept { return m_state->bytes_to_device; }
  /// Bytes moved device -> host since construction or `reset_transfer_counters`.
  [[nodiscard]] std::uint64_t bytes_to_host() const noexcept { return m_state->bytes_to_host; }
  /// Sets both byte counters to zero.
  void reset_transfer_counters() noexcept { m_state->bytes_to_device = m_state->bytes_to_host = 0; }

 private:
  enum class side { device, host };

  struct state {
    std::string label;
    device_view_type device;
    host_view_type host;
    bool shared = false;
    std::int64_t rows = 0;
    std::size_t row_values = 0;
    detail::interval_set device_current, host_current;
    std::uint64_t bytes_to_device = 0, bytes_to_host = 0;
  };

  template <class Int>
  static void check_extent(const std::string& label, Int extent) {
    if constexpr (std::is_signed_v<Int>) {
      HETERO_EXPECTS(extent >= 0, "mirrored array '", label, "' extent is ", extent, "; allowed: 0 or more");
    }
  }

  std::int64_t checked_end(std::int64_t lo, std::int64_t hi) const {
    const std::int64_t end = hi == -1 ? m_state->rows : hi;  // -1: to the last row
    HETERO_EXPECTS(0 <= lo && lo <= end && end <= m_state->rows, "rows [", lo, ", ", end, ") of mirrored array '",
                   m_state->label, "' are outside its ", m_state->rows, " rows");
    return end;
  }

  void sync(side to, std::int64_t lo, std::int64_t hi) {
    auto& s = *m_state;
    hi = checked_end(lo, hi);
    if (s.shared) return;
    auto& current = to == side::device ? s.device_current : s.host_current;
    for (const auto& [a, b] : current.missing(lo, hi)) {
      // A row current on neither side was never written since a stale mark: nothing to move.
      auto& source = to == side::device ? s.host_current : s.device_current;
      for (const auto& [c, d] : source.ranges()) {
        const std::int64_t from = std::max(a, c), until = std::min(b, d);
        if (from >= until) continue;
        if (to == side::device) {
          copy_rows(s.device, s.host, from, until);
          s.bytes_to_device += static_cast<std::uint64_t>(until - from) * row_bytes();
        } else {
          copy_rows(s.host, s.device, from, until);
          s.bytes_to_host += static_cast<std::uint64_t>(until - from) * row_bytes();
        }
      }
      current.add(a, b);
    }
  }

  void modify(side written, std::int64_t lo, std::int64_t hi) {
    auto& s = *m_state;
    hi = checked_end(lo, hi);
    if (s.shared) return;
    (written == side::device ? s.device_current : s.host_current).add(lo, hi);
    (written == side::device ? s.host_current : s.device_current).remove(lo, hi);
  }

  template <class Destination, class Source>
  void copy_rows(const Destination& to, const Source& from, std::int64_t lo, std::int64_t hi) const {
    const std::size_t offset = static_cast<std::size_t>(lo) * m_state->row_values;
    const std::size_t count = static_cast<std::size_t>(hi - lo) * m_state->row_values;
    using to_memory = typename Destination::memory_space;
    using from_memory = typename Source::memory_space;
    if constexpr (detail::host_addressable<to_memory> && detail::host_addressable<from_memory>) {
      std::memcpy(to.data() + offset, from.data() + offset, count * sizeof(value_type));
    } else {
      using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
      Kokkos::View<value_type*, to_memory, unmanaged> target(to.data() + offset, count);
      Kokkos::View<const value_type*, from_memory, unmanaged> origin(from.data() + offset, count);
      Kokkos::deep_copy(target, origin);
    }
  }

  std::shared_ptr<state> m_state;
};

}  // namespace hetero

#endif  // HETERO_EXEC_MIRRORED_ARRAY_HPP

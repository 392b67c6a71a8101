/// @file
/// `hetero::split_policy`: the index range of a work-sharing loop with its two execution space
/// instances, and how a range is cut by a CPU weight into one device chunk and per-core host
/// chunks (as many as a `split_config` allows).
#ifndef HETERO_EXEC_SPLIT_POLICY_HPP
#define HETERO_EXEC_SPLIT_POLICY_HPP

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/exec/spaces.hpp"
#include "hetero/exec/split_config.hpp"

namespace hetero {

/// An index range [begin, end) to be shared between a device and a host execution space
/// instance. In Kokkos 4 and later the instances may be any instances (e.g. CUDA streams,
/// `Kokkos::Serial(Kokkos::NewInstance{})`); Kokkos 3 has one instance per space.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// double a = 2;
/// Kokkos::View<double*> x("x", n), y("y", n);
/// -->
/// @code
/// hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial> policy(0, n);
/// hetero::parallel_for("axpy", policy, KOKKOS_LAMBDA(std::int64_t i) { y(i) += a * x(i); });
/// @endcode
template <execution_space Device = default_device_space, execution_space Host = default_host_space>
class split_policy {
 public:
  using device_space = Device;  ///< The execution space of the device part of the range.
  using host_space = Host;      ///< The execution space of the host part of the range.
  static_assert(!is_gpu_space<Host>,
                "hetero: the host side of a split loop must be a host execution space (its "
                "memory addressable by the CPU), e.g. Kokkos::DefaultHostExecutionSpace; "
                "put the GPU space first, as the device side");

  /// [begin, end) on default instances of both spaces.
  template <std::integral Begin, std::integral End>
  split_policy(Begin begin, End end) : split_policy(Device(), begin, end) {}

  /// [begin, end) on the given instances. With one space (`Device` and `Host` the same type) the
  /// whole range runs on `device`, and `host` is not kept.
  template <std::integral Begin, std::integral End>
  split_policy(Device device, Host host, Begin begin, End end) : split_policy(std::move(device), begin, end) {
    if constexpr (!one_space) m_host = std::move(host);
  }

  /// The first index.
  [[nodiscard]] std::int64_t begin() const noexcept { return m_begin; }
  /// One past the last index.
  [[nodiscard]] std::int64_t end() const noexcept { return m_end; }
  /// Iterations in the range.
  [[nodiscard]] std::int64_t size() const noexcept { return m_end - m_begin; }
  /// The device instance.
  [[nodiscard]] const Device& device() const noexcept { return m_device; }
  /// The host instance (with one space, the device instance).
  [[nodiscard]] const Host& host() const noexcept {
    if constexpr (one_space) {
      return m_device;
    } else {
      return m_host;
    }
  }

  /// Cuts the host part into `chunks` chunks (one per core); 0 (the default) decides from
  /// `split_config` and the host space's concurrency.
  split_policy& host_chunks(int chunks) {
    HETERO_EXPECTS(chunks >= 0, "split_policy::host_chunks(", chunks, "); allowed: 0 (automatic) or more");
    m_host_chunks = chunks;
    return *this;
  }
  /// The host chunk count asked for (0: automatic).
  [[nodiscard]] int host_chunks() const noexcept { return m_host_chunks; }

  /// Runs this call with CPU weight `w`, whatever the label's tuner says; the tuner still sees
  /// the measured times.
  split_policy& weight(double w) {
    detail::check_weight(w, "split_policy::weight");
    m_weight = w;
    return *this;
  }
  /// The weight forced for this call, if any.
  [[nodiscard]] std::optional<double> weight() const noexcept { return m_weight; }

 private:
  /// Both sides one space: nothing is split, and no second instance is made (an instance of
  /// Kokkos 4 is a reference-counted handle; a loop of 1e3 elements feels each copy).
  static constexpr bool one_space = std::is_same_v<Device, Host>;
  struct no_host {};

  template <std::integral Begin, std::integral End>
  split_policy(Device device, Begin begin, End end)
      : m_device(std::move(device)), m_begin(to_index(begin, "begin")), m_end(to_index(end, "end")) {
    HETERO_EXPECTS(m_begin <= m_end, "split_policy range [", m_begin, ", ", m_end,
                   ") is negative (begin > end); allowed: 0 <= begin <= end");
  }

  template <std::integral Int>
  static std::int64_t to_index(Int value, const char* what) {
    if constexpr (std::is_signed_v<Int>) {
      HETERO_EXPECTS(value >= 0, "split_policy ", what, " is ", value, "; allowed: an index >= 0");
    }
    HETERO_EXPECTS(std::in_range<std::int64_t>(value), "split_policy ", what, " is ", value,
                   ", more than a 64-bit signed index holds (", INT64_MAX, ")");
    return static_cast<std::int64_t>(value);
  }

  Device m_device;
  [[no_unique_address]] std::conditional_t<one_space, no_host, Host> m_host;
  std::int64_t m_begin;
  std::int64_t m_end;
  int m_host_chunks = 0;
  std::optional<double> m_weight;
};

/// Anything `hetero::parallel_for` accepts as its range: an iteration count or a `split_policy`.
template <class R>
concept split_range = std::integral<R> || requires(const R& r) {
  typename R::device_space;
  typename R::host_space;
  { r.begin() } -> std::convertible_to<std::int64_t>;
  { r.weight() } -> std::same_as<std::optional<double>>;
};

namespace detail {

/// A count `n` becomes [0, n) on the default spaces; a policy stays itself.
template <split_range Range>
auto to_split_policy(const Range& range) {
  if constexpr (std::integral<Range>) {
    if constexpr (std::is_signed_v<Range>) {
      HETERO_EXPECTS(range >= 0, "iteration count is ", range, "; allowed: a count >= 0");
    }
    return split_policy<>(0, range);
  } else {
    return range;
  }
}

/// One run's cut of [begin, end): the device's chunk first, then the host's, cut into chunks.
struct split_plan {
  std::int64_t device_begin = 0, device_end = 0, host_begin = 0, host_end = 0;
  int host_chunks = 1;
  /// Threads the device part is held to while the host part runs beside it on the same cores
  /// (a CPU device); 0: all of the device instance's.
  int device_threads = 0;
  double weight = 0;

  [[nodiscard]] std::int64_t device_items() const noexcept { return device_end - device_begin; }
  [[nodiscard]] std::int64_t host_items() const noexcept { return host_end - host_begin; }

  /// The bounds of host chunk `c`: balanced, sizes differ by at most one.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> host_chunk(int c) const noexcept {
    const std::int64_t n = host_items(), k = host_chunks, base = n / k, extra = n % k;
    const std::int64_t begin = host_begin + c * base + std::min<std::int64_t>(c, extra);
    return {begin, begin + base + (c < extra ? 1 : 0)};
  }
};

/// The host's share rounds to the nearest iteration; no chunk is empty.
inline split_plan make_split_plan(std::int64_t begin, std::int64_t end, double weight, int chunks) {
  const std::int64_t n = end - begin;
  const auto host = std::clamp<std::int64_t>(std::llround(weight * static_cast<double>(n)), 0, n);
  split_plan plan;
  plan.weight = weight;
  plan.device_begin = begin;
  plan.device_end = plan.host_begin = end - host;
  plan.host_end = end;
  plan.host_chunks = static_cast<int>(std::clamp<std::int64_t>(host, 1, std::max(chunks, 1)));
  return plan;
}

/// Host chunks of one run: the policy's request, else the configured cores (less one driving a
/// GPU), never more than the host space runs at once.
template <class Policy>
int host_chunk_count(const Policy& policy, const split_config& config) {
  using Device = typename Policy::device_space;
  const int concurrency = std::max(1, static_cast<int>(policy.host().concurrency()));
  if (policy.host_chunks() > 0) return std::min(policy.host_chunks(), concurrency);
  int cores = config.host_cores > 0 ? config.host_cores : concurrency;
  if (is_gpu_space<Device> && config.leave_core_for_device && cores > 1) --cores;
  return std::clamp(cores, 1, concurrency);
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_EXEC_SPLIT_POLICY_HPP

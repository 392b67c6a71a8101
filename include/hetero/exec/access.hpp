/// @file
/// Access clauses of the mirrored arrays a work-sharing loop uses: partitioned `reads`, `writes`,
/// `updates` (each side needs only the rows it computes) and `reads_all` (each side needs all
/// rows, e.g. all positions in N-body or matrix B in DGEMM); the names and meanings of task data's
/// clauses (docs/conventions.md). Before a run the rows each side
/// lacks are moved; afterwards the rows each side wrote are recorded as newest there.
#ifndef HETERO_EXEC_ACCESS_HPP
#define HETERO_EXEC_ACCESS_HPP

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/core/timer.hpp"
#include "hetero/exec/mirrored_array.hpp"
#include "hetero/exec/split_policy.hpp"

namespace hetero {

/// How a loop uses one mirrored array (the clause that says it: `reads`, `writes`, `updates`,
/// `reads_all`).
enum class access_mode {
  read,        ///< each side reads the rows of its own part
  write,       ///< each side writes the rows of its own part (their old values are not read)
  read_write,  ///< each side reads and writes the rows of its own part
  read_all,    ///< each side reads all rows
  in [[deprecated("hetero: access_mode::read; docs/conventions.md")]] = read,     ///< 0.1's `read`
  out [[deprecated("hetero: access_mode::write; docs/conventions.md")]] = write,  ///< 0.1's `write`
  inout [[deprecated("hetero: access_mode::read_write; docs/conventions.md")]] =
      read_write,  ///< 0.1's `read_write`
  replicated_in [[deprecated("hetero: access_mode::read_all; docs/conventions.md")]] =
      read_all  ///< 0.1's `read_all`
};

/// A mirrored array `Array` used in mode `Mode` by one loop.
template <class Array, access_mode Mode>
struct array_access {
  using array_type = Array;                  ///< The mirrored array's type.
  static constexpr access_mode mode = Mode;  ///< How the loop uses the array.
  Array* array;                              ///< The array (not owned).
};

/// True for a `hetero::mirrored_array`.
template <class T>
inline constexpr bool is_mirrored_array = false;
/// True: a `hetero::mirrored_array`.
template <class D, class Dev, class H>
inline constexpr bool is_mirrored_array<mirrored_array<D, Dev, H>> = true;

/// A `hetero::mirrored_array` of any data type and spaces.
template <class T>
concept mirrored = is_mirrored_array<T>;

/// Rows of `a` partitioned like the loop's iterations, read by each side (the same clause name
/// and meaning as for task data: the work reads `a`, and each side gets a current copy).
template <mirrored Array>
array_access<Array, access_mode::read> reads(Array& a) noexcept {
  return {&a};
}
/// Rows of `a` partitioned like the loop's iterations, written by each side (their old values
/// are not moved).
template <mirrored Array>
array_access<Array, access_mode::write> writes(Array& a) noexcept {
  return {&a};
}
/// Rows of `a` partitioned like the loop's iterations, read and written by each side.
template <mirrored Array>
array_access<Array, access_mode::read_write> updates(Array& a) noexcept {
  return {&a};
}
/// All rows of `a`, read by both sides.
template <mirrored Array>
array_access<Array, access_mode::read_all> reads_all(Array& a) noexcept {
  return {&a};
}

/// `reads(a)`, as 0.1 spelled it.
template <mirrored Array>
[[deprecated(
    "hetero: in/out name events; data a loop reads is hetero::reads(a) (as for task data); "
    "docs/conventions.md")]] array_access<Array, access_mode::read>
in(Array& a) noexcept {
  return {&a};
}
/// `writes(a)`, as 0.1 spelled it.
template <mirrored Array>
[[deprecated(
    "hetero: in/out name events; data a loop writes is hetero::writes(a) (as for task data); "
    "docs/conventions.md")]] array_access<Array, access_mode::write>
out(Array& a) noexcept {
  return {&a};
}
/// `updates(a)`, as 0.1 spelled it.
template <mirrored Array>
[[deprecated(
    "hetero: in/out name events; data a loop reads and writes is hetero::updates(a) (as for task "
    "data); docs/conventions.md")]] array_access<Array, access_mode::read_write>
inout(Array& a) noexcept {
  return {&a};
}
/// `reads_all(a)`, as 0.1 spelled it.
template <mirrored Array>
[[deprecated("hetero: data both sides read whole is hetero::reads_all(a); docs/conventions.md")]] array_access<
    Array, access_mode::read_all>
replicated_in(Array& a) noexcept {
  return {&a};
}

/// The mirrored arrays of one loop with their modes; their views are passed to the loop body
/// after the index, in this order (each side's copies, as `hetero::loop_view`s).
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// hetero::mirrored_array<double* [3]> pos("pos", n), acc("acc", n);
/// -->
/// @code
/// hetero::parallel_for("force", n, hetero::access(hetero::reads_all(pos), hetero::writes(acc)),
///                      KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double* [3]> pos,
///                                    hetero::loop_view<double* [3]> acc) { /* ... */ });
/// @endcode
template <class... Accesses>
struct access_list {
  std::tuple<Accesses...> accesses;  ///< The `array_access`es, in the order their views are passed.
};

/// Groups the accesses of one loop.
template <mirrored... Arrays, access_mode... Modes>
access_list<array_access<Arrays, Modes>...> access(array_access<Arrays, Modes>... accesses) {
  return {std::tuple<array_access<Arrays, Modes>...>(accesses...)};
}

namespace detail {

template <class T>
inline constexpr bool is_access_list = false;
template <class... A>
inline constexpr bool is_access_list<access_list<A...>> = true;

/// Seconds spent moving rows towards each side before a run.
struct move_seconds {
  double to_device = 0, to_host = 0;
};

/// Refuses arrays of other spaces than the loop's, arrays shorter than the loop's range, and an
/// array named twice.
template <class Policy, class... A>
void check_accesses(const Policy& policy, const access_list<A...>& list) {
  std::apply(
      [&](const auto&... a) {
        (
            [&] {
              using array_t = typename std::decay_t<decltype(a)>::array_type;
              static_assert(std::is_same_v<typename array_t::device_space, typename Policy::device_space> &&
                                std::is_same_v<typename array_t::host_space, typename Policy::host_space>,
                            "hetero: a mirrored array must have the same device and host spaces as the loop");
              if (std::decay_t<decltype(a)>::mode != access_mode::read_all)
                HETERO_EXPECTS(a.array->rows() >= policy.end(), "mirrored array '", a.array->label(), "' has ",
                               a.array->rows(), " rows, but the loop's range [", policy.begin(), ", ",
                               policy.end(), ") partitions it and needs at least ", policy.end());
            }(),
            ...);
        if constexpr (sizeof...(A) > 1) {
          // The array's own state, which copies of a handle share (not the handle's address).
          const void* arrays[] = {static_cast<const void*>(&a.array->device_view())...};
          for (std::size_t i = 0; i < sizeof...(A); ++i)
            for (std::size_t j = i + 1; j < sizeof...(A); ++j)
              HETERO_EXPECTS(arrays[i] != arrays[j],
                             "a mirrored array appears twice in one access list (arguments ", i + 1, " and ",
                             j + 1, "); give it once, with the mode that covers both uses (hetero::updates)");
        }
      },
      list.accesses);
}

/// Moves, before a run, the rows each side lacks; returns the seconds spent per side.
template <class... A>
move_seconds prepare_accesses(const access_list<A...>& list, const split_plan& plan) {
  move_seconds spent;
  const bool device_runs = plan.device_items() > 0, host_runs = plan.host_items() > 0;
  auto prepare = [&](const auto& a) {
    constexpr access_mode mode = std::decay_t<decltype(a)>::mode;
    if constexpr (mode == access_mode::write) return;
    stopwatch watch;
    if (mode == access_mode::read_all) {
      if (device_runs) a.array->sync_device();
    } else if (device_runs) {
      a.array->sync_device(plan.device_begin, plan.device_end);
    }
    spent.to_device += watch.restart();
    if (mode == access_mode::read_all) {
      if (host_runs) a.array->sync_host();
    } else if (host_runs) {
      a.array->sync_host(plan.host_begin, plan.host_end);
    }
    spent.to_host += watch.seconds();
  };
  std::apply([&](const auto&... a) { (prepare(a), ...); }, list.accesses);
  return spent;
}

/// Records, after a run, the rows each side wrote as newest there.
template <class... A>
void finish_accesses(const access_list<A...>& list, const split_plan& plan) {
  auto finish = [&](const auto& a) {
    constexpr access_mode mode = std::decay_t<decltype(a)>::mode;
    if constexpr (mode == access_mode::write || mode == access_mode::read_write) {
      a.array->modify_device(plan.device_begin, plan.device_end);
      a.array->modify_host(plan.host_begin, plan.host_end);
    }
  };
  std::apply([&](const auto&... a) { (finish(a), ...); }, list.accesses);
}

/// The views a `parallel_for`/`parallel_reduce` body receives on one side, in access-list
/// order: the side's copies as `loop_view`s, one type on both sides.
template <bool Device, class... A>
auto loop_views(const access_list<A...>& list) {
  return std::apply(
      [](const auto&... a) {
        using std::decay_t;
        if constexpr (Device) {
          return std::make_tuple(typename decay_t<decltype(*a.array)>::loop_view_type(a.array->device_view())...);
        } else {
          return std::make_tuple(typename decay_t<decltype(*a.array)>::loop_view_type(a.array->host_view())...);
        }
      },
      list.accesses);
}

/// The views one side passes to a `split_for` body, in access-list order: that side's copies.
template <bool Device, class... A>
auto side_views(const access_list<A...>& list) {
  return std::apply(
      [](const auto&... a) {
        if constexpr (Device) {
          return std::make_tuple(a.array->device_view()...);
        } else {
          return std::make_tuple(a.array->host_view()...);
        }
      },
      list.accesses);
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_EXEC_ACCESS_HPP

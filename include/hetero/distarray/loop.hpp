/// @file
/// Owner-computes loops (XcalableMP's `loop on`): a loop over a global index box that runs,
/// on every rank, only the iterations that rank owns, handing the body global indices. The
/// executor that runs the owned box is a parameter: Kokkos execution spaces here, and any
/// type with the `owned_loop_executor` shape (e.g. a GPU/CPU work-sharing split).
#ifndef HETERO_DISTARRAY_LOOP_HPP
#define HETERO_DISTARRAY_LOOP_HPP

#include <Kokkos_Core.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/distarray/detail/axis_map.hpp"
#include "hetero/distarray/index_space.hpp"
#include "hetero/distarray/section.hpp"

namespace hetero {

namespace detail {

// hetero's wrappers around a loop body come in two forms: host-device when the executor may
// run the body on a GPU (the body must then be device code, and nvcc checks it), host-only for a
// host executor, where a plain lambda is a valid body and a host-device wrapper around it would
// draw nvcc's cross-space warnings.

/// Whether `Executor` may run a loop body on a GPU: a Kokkos execution space whose memory the
/// host cannot address, an executor whose `device_space` is one, or an executor of unknown kind.
template <class Executor>
constexpr bool runs_on_gpu() {
  if constexpr (Kokkos::is_execution_space<Executor>::value) {
    return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Executor::memory_space>::accessible;
  } else if constexpr (requires { typename Executor::device_space; }) {
    return runs_on_gpu<typename Executor::device_space>();
  } else {
    return true;
  }
}

/// Calls the user's body with global indices for local indices.
template <int Rank, class Body, bool Device = true>
struct owned_body {
  Kokkos::Array<axis_map, Rank> maps;
  Body body;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const requires(Rank == 1) { body(maps[0].to_global(i)); }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const requires(Rank == 2) {
    body(maps[0].to_global(i), maps[1].to_global(j));
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const
      requires(Rank == 3) {
    body(maps[0].to_global(i), maps[1].to_global(j), maps[2].to_global(k));
  }
};

template <int Rank, class Body>
struct owned_body<Rank, Body, false> {
  Kokkos::Array<axis_map, Rank> maps;
  Body body;
  void operator()(std::int64_t i) const requires(Rank == 1) { body(maps[0].to_global(i)); }
  void operator()(std::int64_t i, std::int64_t j) const requires(Rank == 2) {
    body(maps[0].to_global(i), maps[1].to_global(j));
  }
  void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const requires(Rank == 3) {
    body(maps[0].to_global(i), maps[1].to_global(j), maps[2].to_global(k));
  }
};

/// The same for reductions: the body also takes the accumulator.
template <int Rank, class Body, class Value, bool Device = true>
struct owned_reduce_body {
  using value_type = Value;  // Kokkos takes it from here, not from the overloaded operator()
  Kokkos::Array<axis_map, Rank> maps;
  Body body;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Value& acc) const requires(Rank == 1) {
    body(maps[0].to_global(i), acc);
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Value& acc) const requires(Rank == 2) {
    body(maps[0].to_global(i), maps[1].to_global(j), acc);
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k, Value& acc) const
      requires(Rank == 3) {
    body(maps[0].to_global(i), maps[1].to_global(j), maps[2].to_global(k), acc);
  }
};

template <int Rank, class Body, class Value>
struct owned_reduce_body<Rank, Body, Value, false> {
  using value_type = Value;
  Kokkos::Array<axis_map, Rank> maps;
  Body body;
  void operator()(std::int64_t i, Value& acc) const requires(Rank == 1) { body(maps[0].to_global(i), acc); }
  void operator()(std::int64_t i, std::int64_t j, Value& acc) const requires(Rank == 2) {
    body(maps[0].to_global(i), maps[1].to_global(j), acc);
  }
  void operator()(std::int64_t i, std::int64_t j, std::int64_t k, Value& acc) const requires(Rank == 3) {
    body(maps[0].to_global(i), maps[1].to_global(j), maps[2].to_global(k), acc);
  }
};

/// The owned part of the global box `range`, in global indices, when every axis of `space` is
/// block or gen-block (then owned indices are one global box and the body needs no index
/// map: the loop is as fast as one over a plain View); else nothing.
template <int Rank>
std::optional<index_box<Rank>> owned_global_box(const index_space<Rank>& space, const index_box<Rank>& range) {
  auto box = space.local_range(range);
  const auto maps = space.maps();
  for (int d = 0; d < Rank; ++d) {
    if (!space.axis(d).is_contiguous()) return std::nullopt;
    box.begin[d] += maps[d].offset;
    box.end[d] += maps[d].offset;
  }
  return box;
}

/// The user's reduction body with the accumulator type spelled out (Kokkos deduces the
/// reduction's value type from it), called with the indices as they are.
template <int Rank, class Body, class Value, bool Device = true>
struct typed_reduce_body {
  using value_type = Value;
  Body body;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Value& acc) const requires(Rank == 1) { body(i, acc); }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Value& acc) const requires(Rank == 2) {
    body(i, j, acc);
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k, Value& acc) const
      requires(Rank == 3) {
    body(i, j, k, acc);
  }
};

template <int Rank, class Body, class Value>
struct typed_reduce_body<Rank, Body, Value, false> {
  using value_type = Value;
  Body body;
  void operator()(std::int64_t i, Value& acc) const requires(Rank == 1) { body(i, acc); }
  void operator()(std::int64_t i, std::int64_t j, Value& acc) const requires(Rank == 2) { body(i, j, acc); }
  void operator()(std::int64_t i, std::int64_t j, std::int64_t k, Value& acc) const requires(Rank == 3) {
    body(i, j, k, acc);
  }
};

/// A body with the signature executors must accept, for the concept check.
template <int Rank>
struct probe_body {
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t) const requires(Rank == 1) {}
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t, std::int64_t) const requires(Rank == 2) {}
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t, std::int64_t, std::int64_t) const requires(Rank == 3) {}
};

template <class Result>
struct reduction_value {
  using type = std::remove_cvref_t<Result>;
};
template <class Result>
requires Kokkos::is_reducer<std::remove_cvref_t<Result>>::value struct reduction_value<Result> {
  using type = typename std::remove_cvref_t<Result>::value_type;
};

template <int Rank>
void check_loop_range(const index_space<Rank>& space, const index_box<Rank>& range) {
  for (int d = 0; d < Rank; ++d)
    HETERO_EXPECTS(range.begin[d] >= 0 && range.begin[d] <= range.end[d] && range.end[d] <= space.extent(d),
                   "owner loop range [", range.begin[d], ", ", range.end[d], ") on axis ", d,
                   " is outside the index space [0, ", space.extent(d), ")");
}

}  // namespace detail

/// What runs the owned part of an owner-computes loop: `for_each(label, box, f)` calls
/// `f(i_0, ..., i_{Rank-1})` once for every multi-index of `box` (in any order, in parallel),
/// and returns when all calls are done. (The box is the owned part of the loop in global
/// indices on block axes, else in local indices with `f` mapping them to global ones.) A GPU/CPU
/// work-sharing executor splits `box` (its first axis) between the device and the host and
/// calls `f` on both sides. An executor that runs only on the host says so with a host
/// `device_space` type (e.g. `using device_space = Kokkos::DefaultHostExecutionSpace;`): its
/// bodies may then be plain lambdas in a GPU build too; without one, `f` is host-device code.
template <class E, int Rank>
concept owned_loop_executor = requires(const E& e, const std::string& label, const index_box<Rank>& box,
                                       const detail::probe_body<Rank>& f) {
  e.for_each(label, box, f);
};

/// Runs owned boxes with Kokkos on one execution space instance (RangePolicy for 1-D,
/// MDRangePolicy above).
template <class ExecSpace = Kokkos::DefaultExecutionSpace>
requires Kokkos::is_execution_space<ExecSpace>::value class kokkos_executor {
 public:
  /// Runs on the instance `space` (by default, the space's default instance).
  explicit kokkos_executor(ExecSpace space = ExecSpace()) : m_space(std::move(space)) {}

  /// Runs f over `box` and fences the instance.
  template <int Rank, class F>
  void for_each(const std::string& label, const index_box<Rank>& box, const F& f) const {
    if (box.empty()) return;
    Kokkos::parallel_for(label, policy(box), f);
    m_space.fence();
  }

  /// Reduces f over `box` into `result` (a scalar reference or a Kokkos reducer).
  template <int Rank, class F, class Result>
  void reduce(const std::string& label, const index_box<Rank>& box, const F& f, Result&& result) const {
    Kokkos::parallel_reduce(label, policy(box), f, std::forward<Result>(result));
    m_space.fence();
  }

  /// The execution space instance.
  [[nodiscard]] const ExecSpace& space() const noexcept { return m_space; }

 private:
  template <int Rank>
  auto policy(const index_box<Rank>& box) const {
    if constexpr (Rank == 1) {
      return Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(m_space, box.begin[0], box.end[0]);
    } else {
      using policy_type = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<Rank>, Kokkos::IndexType<std::int64_t>>;
      typename policy_type::point_type lower, upper;
      for (int d = 0; d < Rank; ++d) {
        lower[d] = box.begin[d];
        upper[d] = box.end[d];
      }
      return policy_type(m_space, lower, upper);
    }
  }

  ExecSpace m_space;
};

namespace detail {
template <class E>
auto as_executor(const E& e) {
  if constexpr (Kokkos::is_execution_space<E>::value) {
    return kokkos_executor<E>(e);
  } else {
    return e;
  }
}
}  // namespace detail

/// What for_each_owned runs on: an `owned_loop_executor` or a Kokkos execution space instance.
template <class E, int Rank>
concept loop_executor = owned_loop_executor<E, Rank> || Kokkos::is_execution_space<E>::value;

/// What reduce_owned runs on: a Kokkos execution space instance, or an executor with
/// `reduce(label, box, f, result)` (f also takes the accumulator).
template <class E, int Rank, class Body, class Result>
concept reduce_executor = Kokkos::is_execution_space<E>::value ||
    requires(const E& e, const std::string& label, const index_box<Rank>& box, Result&& result,
             const detail::owned_reduce_body<Rank, Body, typename detail::reduction_value<Result>::type>& f) {
  e.reduce(label, box, f, std::forward<Result>(result));
};

/// Runs `body(g_0, ..., g_{Rank-1})` for every global index of `range` this rank owns in
/// `space`, on `executor` (an `owned_loop_executor` or a Kokkos execution space instance).
/// Not collective: each rank runs its own part. The body runs where the executor runs it, so
/// it may only touch memory that space can reach (use `distributed_array::global_view()`).
/// <!-- snippet: fragment
/// hetero::index_space<2> space({64, 64}, hetero::process_grid<2>());
/// hetero::distributed_array<double, 2> array(space);
/// -->
/// @code
/// auto u = array.global_view();
/// hetero::for_each_owned(Kokkos::DefaultExecutionSpace(), "init", space, space.box(),
///                        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { u(i, j) = i + j; });
/// @endcode
template <class Executor, int Rank, class Body>
requires loop_executor<Executor, Rank>
void for_each_owned(const Executor& executor, const std::string& label, const index_space<Rank>& space,
                    const index_box<Rank>& range, const Body& body) {
  detail::check_loop_range(space, range);
  const auto exec = detail::as_executor(executor);
  constexpr bool gpu = detail::runs_on_gpu<Executor>();
  if (const auto owned = detail::owned_global_box(space, range)) {
    exec.for_each(label, *owned, body);
  } else {
    exec.for_each(label, space.local_range(range), detail::owned_body<Rank, Body, gpu>{space.maps(), body});
  }
}

/// The same on Kokkos' default execution space.
template <int Rank, class Body>
void for_each_owned(const std::string& label, const index_space<Rank>& space, const index_box<Rank>& range,
                    const Body& body) {
  for_each_owned(Kokkos::DefaultExecutionSpace(), label, space, range, body);
}

/// Reduces `body(g_0, ..., g_{Rank-1}, acc)` over the global indices of `range` this rank
/// owns into `result` (a scalar reference: sum; or a Kokkos reducer such as
/// `Kokkos::Max<double>(r)`). The result is this rank's part: combine the ranks' parts with
/// an MPI reduction (or the comm module's allreduce).
template <class Executor, int Rank, class Body, class Result>
requires reduce_executor<Executor, Rank, Body, Result>
void reduce_owned(const Executor& executor, const std::string& label, const index_space<Rank>& space,
                  const index_box<Rank>& range, const Body& body, Result&& result) {
  detail::check_loop_range(space, range);
  using value = typename detail::reduction_value<Result>::type;
  constexpr bool gpu = detail::runs_on_gpu<Executor>();
  const auto exec = detail::as_executor(executor);
  if (const auto owned = detail::owned_global_box(space, range)) {
    exec.reduce(label, *owned, detail::typed_reduce_body<Rank, Body, value, gpu>{body},
                std::forward<Result>(result));
  } else {
    exec.reduce(label, space.local_range(range),
                detail::owned_reduce_body<Rank, Body, value, gpu>{space.maps(), body},
                std::forward<Result>(result));
  }
}

/// The same on Kokkos' default execution space.
template <int Rank, class Body, class Result>
void reduce_owned(const std::string& label, const index_space<Rank>& space, const index_box<Rank>& range,
                  const Body& body, Result&& result) {
  reduce_owned(Kokkos::DefaultExecutionSpace(), label, space, range, body, std::forward<Result>(result));
}

}  // namespace hetero

#endif  // HETERO_DISTARRAY_LOOP_HPP

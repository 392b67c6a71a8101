/// @file
/// The element form of work sharing: `hetero::parallel_for` and `hetero::parallel_reduce` run
/// one functor over a range cut into a device part (one contiguous chunk) and a host part (one
/// chunk per core), both at the same time; the CPU weight is the host's share.
#ifndef HETERO_EXEC_PARALLEL_FOR_HPP
#define HETERO_EXEC_PARALLEL_FOR_HPP

#include <Kokkos_Core.hpp>

#include <concepts>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hetero/exec/access.hpp"
#include "hetero/exec/detail/guarded_functor.hpp"
#include "hetero/exec/detail/split_run.hpp"
#include "hetero/exec/detail/view_pack.hpp"
#include "hetero/exec/split_policy.hpp"
#include "hetero/exec/work_sharing.hpp"

namespace hetero {

/// A Kokkos reducer (`Kokkos::Sum<double>`, `Kokkos::Max<int>`, `Kokkos::MinLoc<...>`, ...):
/// it can be rebuilt on another value of its `value_type`, and has `init`, `join`, `reference`.
template <class R>
concept kokkos_reducer = requires(const R& r, typename R::value_type& v, const typename R::value_type& c) {
  typename R::reducer;
  R(v);
  r.init(v);
  r.join(v, c);
  { r.reference() } -> std::same_as<typename R::value_type&>;
};

/// Runs `functor(i)` for every i of `range` (a count n for [0, n), or a `split_policy`), the
/// device part and the host part at the same time, with the CPU weight of `label` (set by its
/// tuner or by `reset_weight`). Returns when both parts are done. With one space (the default in
/// a CPU-only build) the whole range runs on it. An exception thrown by `functor` reaches the
/// caller after both parts have finished: on a host space (OpenMP, Serial, ...) the first
/// element that throws stops the rest of its part; the other part runs to its end. The host
/// part's exception wins over the device part's. A `noexcept` functor runs unguarded; GPU device
/// code cannot throw (docs/results/exec.md, "Exceptions").
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// double s = 2;
/// Kokkos::View<double*> a("a", n), b("b", n), c("c", n);
/// -->
/// @code
/// hetero::parallel_for("triad", n, KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + s * c(i); });
/// @endcode
template <split_range Range, class Functor>
void parallel_for(std::string_view label, const Range& range, const Functor& functor) {
  parallel_for(label, range, access_list<>{}, functor);
}

/// As above, with mirrored arrays: `functor(i, views...)` receives the views of `arrays` (the
/// device copies on the device, the host copies on the host, in the order given, each as a
/// `hetero::loop_view` of the array's data type), and the rows each side lacks are moved
/// before the run.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// hetero::mirrored_array<double*> x("x", n), y("y", n);
/// -->
/// @code
/// hetero::parallel_for("scale", n, hetero::access(hetero::reads(x), hetero::writes(y)),
///                      KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double*> x,
///                                    hetero::loop_view<double*> y) { y(i) = 2 * x(i); });
/// @endcode
template <split_range Range, class... Accesses, class Functor>
void parallel_for(std::string_view label, const Range& range, const access_list<Accesses...>& arrays,
                  const Functor& functor) {
  parallel_for(default_work_sharing(), label, range, arrays, functor);
}

/// `parallel_for` with the labels, settings and helper thread of `sharing` instead of the
/// default handle's.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// double s = 2;
/// Kokkos::View<double*> a("a", n), b("b", n), c("c", n);
/// -->
/// @code
/// hetero::work_sharing solver;
/// hetero::parallel_for(solver, "triad", n, KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + s * c(i); });
/// @endcode
template <split_range Range, class Functor>
void parallel_for(const work_sharing& sharing, std::string_view label, const Range& range,
                  const Functor& functor) {
  parallel_for(sharing, label, range, access_list<>{}, functor);
}

/// `parallel_for` with mirrored arrays, in `sharing`.
template <split_range Range, class... Accesses, class Functor>
void parallel_for(const work_sharing& sharing, std::string_view label, const Range& range,
                  const access_list<Accesses...>& arrays, const Functor& functor) {
  const auto policy = detail::to_split_policy(range);
  using policy_t = std::decay_t<decltype(policy)>;
  using device_space = typename policy_t::device_space;
  using host_space = typename policy_t::host_space;
  detail::split_run(
      sharing, label, policy, arrays,
      [&](const detail::split_plan& plan, const detail::label_state& state) {
        detail::with_device_instance(policy.device(), plan.device_threads, [&](const device_space& space) {
          detail::run_part<void>(state.device_kernel, detail::split_label(plan, state),
                                 detail::part_range<device_space>{space, plan.device_begin, plan.device_end},
                                 functor, detail::loop_views<true>(arrays));
        });
      },
      [&](const detail::split_plan& plan, const detail::label_state& state) {
        detail::run_part<void>(
            state.host_kernel, detail::split_label(plan, state),
            detail::part_range<host_space>{policy.host(), plan.host_begin, plan.host_end, plan.host_chunks},
            functor, detail::loop_views<false>(arrays));
      });
}

namespace detail {

template <split_range Range, class... Accesses, class Functor, kokkos_reducer Reducer>
void split_reduce(const work_sharing& sharing, std::string_view label, const Range& range,
                  const access_list<Accesses...>& arrays, const Functor& functor, const Reducer& reducer) {
  using value_type = typename Reducer::value_type;
  const auto policy = to_split_policy(range);
  using policy_t = std::decay_t<decltype(policy)>;
  using device_space = typename policy_t::device_space;
  using host_space = typename policy_t::host_space;
  value_type device_value, host_value;
  reducer.init(device_value);
  reducer.init(host_value);
  split_run(
      sharing, label, policy, arrays,
      [&](const split_plan& plan, const label_state& state) {
        with_device_instance(policy.device(), plan.device_threads, [&](const device_space& space) {
          run_part<value_type>(state.device_kernel, split_label(plan, state),
                               part_range<device_space>{space, plan.device_begin, plan.device_end}, functor,
                               loop_views<true>(arrays), Reducer(device_value));
        });
      },
      [&](const split_plan& plan, const label_state& state) {
        run_part<value_type>(
            state.host_kernel, split_label(plan, state),
            part_range<host_space>{policy.host(), plan.host_begin, plan.host_end, plan.host_chunks}, functor,
            loop_views<false>(arrays), Reducer(host_value));
      });
  value_type joined;
  reducer.init(joined);
  reducer.join(joined, device_value);
  reducer.join(joined, host_value);
  reducer.reference() = joined;
}

}  // namespace detail

/// Reduces `functor(i, update)` over `range`, split like `parallel_for`: each side reduces its
/// part, and the two partial results are joined into `result`, which is either a scalar (summed)
/// or a Kokkos reducer. Exceptions of `functor` reach the caller as in `parallel_for`; `result`
/// is then left unchanged.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// Kokkos::View<double*> x("x", n);
/// -->
/// @code
/// double sum = 0;
/// hetero::parallel_reduce("sum", n, KOKKOS_LAMBDA(std::int64_t i, double& s) { s += x(i); }, sum);
/// @endcode
template <split_range Range, class Functor, class Result>
void parallel_reduce(std::string_view label, const Range& range, const Functor& functor, Result&& result) {
  parallel_reduce(label, range, access_list<>{}, functor, std::forward<Result>(result));
}

/// As above, with mirrored arrays: `functor(i, views..., update)`, the views as for
/// `parallel_for`.
template <split_range Range, class... Accesses, class Functor, class Result>
void parallel_reduce(std::string_view label, const Range& range, const access_list<Accesses...>& arrays,
                     const Functor& functor, Result&& result) {
  parallel_reduce(default_work_sharing(), label, range, arrays, functor, std::forward<Result>(result));
}

/// `parallel_reduce` with the labels, settings and helper thread of `sharing`.
template <split_range Range, class Functor, class Result>
void parallel_reduce(const work_sharing& sharing, std::string_view label, const Range& range,
                     const Functor& functor, Result&& result) {
  parallel_reduce(sharing, label, range, access_list<>{}, functor, std::forward<Result>(result));
}

/// `parallel_reduce` with mirrored arrays, in `sharing`.
template <split_range Range, class... Accesses, class Functor, class Result>
void parallel_reduce(const work_sharing& sharing, std::string_view label, const Range& range,
                     const access_list<Accesses...>& arrays, const Functor& functor, Result&& result) {
  using result_t = std::remove_cvref_t<Result>;
  if constexpr (kokkos_reducer<result_t>) {
    detail::split_reduce(sharing, label, range, arrays, functor, result);
  } else {
    static_assert(std::is_arithmetic_v<result_t> && !std::is_const_v<std::remove_reference_t<Result>>,
                  "hetero: parallel_reduce's result must be a modifiable arithmetic variable (summed) or a Kokkos "
                  "reducer such as Kokkos::Max<double>(x)");
    detail::split_reduce(sharing, label, range, arrays, functor, Kokkos::Sum<result_t>(result));
  }
}

}  // namespace hetero

#endif  // HETERO_EXEC_PARALLEL_FOR_HPP

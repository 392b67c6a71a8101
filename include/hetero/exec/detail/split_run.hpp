/// @file
/// The steps every split loop form shares: look up the label, cut the range by its weight, move
/// the rows each side lacks, run both parts at once, record what moved and what it measured,
/// and let the label's tuner choose the next weight.
#ifndef HETERO_EXEC_DETAIL_SPLIT_RUN_HPP
#define HETERO_EXEC_DETAIL_SPLIT_RUN_HPP

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "hetero/core/observer.hpp"
#include "hetero/core/timer.hpp"
#include "hetero/exec/access.hpp"
#include "hetero/exec/detail/disjoint_cores.hpp"
#include "hetero/exec/detail/run_sides.hpp"
#include "hetero/exec/detail/running_split.hpp"
#include "hetero/exec/split_policy.hpp"
#include "hetero/exec/work_sharing.hpp"

namespace hetero::detail {

/// The loop's label where both of its sides run (the threads of its parts are then marked,
/// `running_split_scope`), else empty.
inline std::string_view split_label(const split_plan& plan, const label_state& state) noexcept {
  return plan.device_items() > 0 && plan.host_items() > 0 ? std::string_view(state.device_kernel)
                                                          : std::string_view();
}

/// Records one run of `label` in its state and tells the observers.
inline void finish_run(label_state& state, std::string_view label, const split_sample& sample, double step_seconds,
                       bool tune, std::string_view decision) {
  record_run(state, sample, step_seconds, tune, decision);
  notify_split_loop({.label = label,
                     .device_seconds = sample.device_seconds,
                     .host_seconds = sample.host_seconds,
                     .cpu_weight = sample.weight,
                     .device_items = sample.device_items,
                     .host_items = sample.host_items});
}

/// A loop whose two spaces are one: the whole range runs on it as the device part, on this
/// thread, with nothing to split, no helper and no tuner. Kept to what a loop of 1e3 elements
/// can afford beside Kokkos' own launch: the label's state from this thread's cache, no functor
/// copy that counts references, and no clock read unless asked (`split_config::time_one_space`,
/// or an observer of loops).
template <class Policy, class... A, class RunDevice>
void run_on_one_space(const work_sharing& sharing, std::string_view label, const Policy& policy,
                      const access_list<A...>& access, const RunDevice& run_device) {
  const bool timed = sharing.times_one_space_loops();
  const double start = timed ? wall_seconds() : 0.0;
  check_accesses(policy, access);
  label_state& state = sharing.loop_state(label);
  const split_plan plan = make_split_plan(policy.begin(), policy.end(), 0.0, 1);
  (void)prepare_accesses(access, plan);  // within the call's time, which is the part's
  try {
    if (plan.device_items() > 0) run_device(plan, state);
  } catch (...) {
    finish_accesses(access, plan);  // the part may have written some of its rows
    throw;
  }
  finish_accesses(access, plan);
  if (!timed) {
    record_untimed_run(state, plan.device_items());
    return;
  }
  const double seconds = wall_seconds() - start;
  const split_sample sample{plan.device_items(), 0, plan.device_items() > 0 ? seconds : 0.0, 0.0, 0.0, false};
  finish_run(state, label, sample, seconds, false, {});
}

/// Runs `run_device(plan, state)` and `run_host(plan, state)` as one split run of `label` in
/// `sharing`, and tells the observers what it measured. Each part must fence its space before
/// returning (its time ends there).
template <class Policy, class... A, class RunDevice, class RunHost>
void split_run(const work_sharing& sharing, std::string_view label, const Policy& policy,
               const access_list<A...>& access, const RunDevice& run_device, const RunHost& run_host) {
  using device_space = typename Policy::device_space;
  using host_space = typename Policy::host_space;
  if constexpr (is_single_space<device_space, host_space>) {
    run_on_one_space(sharing, label, policy, access, run_device);
  } else {
    stopwatch step;
    check_accesses(policy, access);
    label_state& state = sharing.loop_state(label);
    bool tune = true;
    std::string_view decision;
    bool users_weight = policy.weight().has_value();  // a weight the user chose is obeyed
    double weight = 0;
    if (policy.weight()) {
      weight = *policy.weight();
    } else {
      std::scoped_lock lock(state.mutex);
      weight = state.weight;
      // reset_weight's weight stays the user's until a run is recorded (record_run): a run that
      // throws leaves it for the next one.
      users_weight = state.weight_from_user || state.tuner->keeps_user_weight();
    }
    const split_config config = sharing.config();
    const int chunks = host_chunk_count(policy, config);
    int device_threads = 0;
    if constexpr (device_on_host_cores<device_space> && can_narrow<device_space>) {
      // Both sides on this rank's cores: the device part gets the cores the host part leaves.
      device_threads = device_threads_beside(policy.device(), rank_cores(config.host_cores), chunks);
      if (device_threads == 0 && !users_weight) {
        weight = 0;
        tune = false;
        decision = "not split: the host part's cores are all the device side has (a split would oversubscribe)";
      }
    }
    split_plan plan = make_split_plan(policy.begin(), policy.end(), weight, chunks);
    if (plan.device_items() > 0 && plan.host_items() > 0) {
      plan.device_threads = device_threads;
      refuse_nested_split(label);  // before any copy is marked current
    }
    const move_seconds moved = prepare_accesses(access, plan);
    auto device_part = [&] {
      const region running("exec", label, "device");
      run_device(plan, state);
    };
    auto host_part = [&] {
      const region running("exec", label, "host");
      run_host(plan, state);
    };
    side_seconds spent;
    try {
      const bool both = plan.device_items() > 0 && plan.host_items() > 0;
      spent =
          run_sides<device_space, host_space>(both ? &sharing.helper() : nullptr, label, device_part, host_part,
                                              plan.device_items() > 0, plan.host_items() > 0, plan.device_threads);
    } catch (...) {
      finish_accesses(access, plan);  // a failed part may have written some of its rows
      throw;
    }
    finish_accesses(access, plan);
    const split_sample sample{plan.device_items(),
                              plan.host_items(),
                              plan.device_items() > 0 ? spent.device + moved.to_device : 0.0,
                              plan.host_items() > 0 ? spent.host + moved.to_host : 0.0,
                              weight,
                              device_on_host_cores<device_space> && can_narrow<device_space>};
    finish_run(state, label, sample, step.seconds(), tune, decision);
  }
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_SPLIT_RUN_HPP

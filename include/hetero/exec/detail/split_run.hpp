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
#include "hetero/exec/split_policy.hpp"
#include "hetero/exec/work_sharing.hpp"

namespace hetero::detail {

/// Runs `run_device(plan, state)` and `run_host(plan, state)` as one split run of `label` in
/// `sharing`, and tells the observers what it measured. Each part must fence its space before
/// returning (its time ends there).
template <class Policy, class... A, class RunDevice, class RunHost>
void split_run(const work_sharing& sharing, std::string_view label, const Policy& policy,
               const access_list<A...>& access, const RunDevice& run_device, const RunHost& run_host) {
  using device_space = typename Policy::device_space;
  using host_space = typename Policy::host_space;
  constexpr bool single = is_single_space<device_space, host_space>;
  stopwatch step;
  check_accesses(policy, access);
  const auto state = sharing.state_of(label);
  double weight = 0;  // one space: everything on it, as the device part
  int chunks = 1;
  int device_threads = 0;
  bool tune = !single;
  std::string_view decision;
  if constexpr (!single) {
    bool users_weight = policy.weight().has_value();  // a weight the user chose is obeyed
    if (policy.weight()) {
      weight = *policy.weight();
    } else {
      std::scoped_lock lock(state->mutex);
      weight = state->weight;
      users_weight = state->weight_from_user || state->tuner->keeps_user_weight();
      state->weight_from_user = false;  // this run uses it; the tuner goes on from it
    }
    const split_config config = sharing.config();
    chunks = host_chunk_count(policy, config);
    if constexpr (device_on_host_cores<device_space> && can_narrow<device_space>) {
      // Both sides on this rank's cores: the device part gets the cores the host part leaves.
      device_threads = device_threads_beside(policy.device(), rank_cores(config.host_cores), chunks);
      if (device_threads == 0 && !users_weight) {
        weight = 0;
        tune = false;
        decision = "not split: the host part's cores are all the device side has (a split would oversubscribe)";
      }
    }
  }
  split_plan plan = make_split_plan(policy.begin(), policy.end(), weight, chunks);
  if (plan.device_items() > 0 && plan.host_items() > 0) plan.device_threads = device_threads;
  const move_seconds moved = prepare_accesses(access, plan);
  auto device_part = [&] { run_device(plan, *state); };
  auto host_part = [&] { run_host(plan, *state); };
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
  record_run(*state, sample, step.seconds(), tune, decision);
  notify_split_loop({.label = label,
                     .device_seconds = sample.device_seconds,
                     .host_seconds = sample.host_seconds,
                     .cpu_weight = sample.weight,
                     .device_items = sample.device_items,
                     .host_items = sample.host_items});
}

/// The Kokkos range policy of one side's part.
template <class Space>
using part_policy = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

/// The host part's range policy: with a parallel host space, `chunks` contiguous chunks, one per
/// thread (a static schedule with the chunk size set to the chunk length).
template <class Host>
part_policy<Host> host_part_policy(const Host& host, const split_plan& plan) {
  part_policy<Host> policy(host, plan.host_begin, plan.host_end);
  if (plan.host_chunks > 1) {
    const std::int64_t length = (plan.host_items() + plan.host_chunks - 1) / plan.host_chunks;
    policy.set_chunk_size(static_cast<int>(std::min<std::int64_t>(length, INT_MAX)));
  }
  return policy;
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_SPLIT_RUN_HPP

/// @file
/// What the runs of one labelled work-sharing loop measured (`split_stats`), and which tuner a
/// label uses (`tuner_kind`). A `work_sharing` handle keeps them per label and answers the
/// queries (`work_sharing::statistics`, `hetero::split_statistics` for the default handle).
#ifndef HETERO_EXEC_SPLIT_STATS_HPP
#define HETERO_EXEC_SPLIT_STATS_HPP

#include <algorithm>
#include <cstdint>
#include <string>

namespace hetero {

/// Running statistics of one time series (seconds): last, mean, minimum, maximum, EWMA.
struct time_stats {
  double last = 0;   ///< the last run
  double mean = 0;   ///< over all runs
  double min = 0;    ///< over all runs
  double max = 0;    ///< over all runs
  double ewma = 0;   ///< exponentially weighted, weight 1/4 on the newest run
  double total = 0;  ///< summed over all runs

  /// Adds run number `runs` (1 for the first).
  void add(double seconds, std::uint64_t runs) noexcept {
    last = seconds;
    total += seconds;
    mean = total / static_cast<double>(runs);
    min = runs == 1 ? seconds : std::min(min, seconds);
    max = runs == 1 ? seconds : std::max(max, seconds);
    ewma = runs == 1 ? seconds : 0.75 * ewma + 0.25 * seconds;
  }
};

/// What the runs of one labelled split loop measured.
struct split_stats {
  std::uint64_t runs = 0;  ///< completed runs
  /// Runs whose times were measured, over which `device`, `host` and `step` are taken: every
  /// run of a split loop; of a loop on one space, those run with `split_config::time_one_space`
  /// or while an observer listened for loops. When the last run was not timed, the `last` times
  /// are 0.
  std::uint64_t timed_runs = 0;
  double weight = 0;              ///< the CPU weight the next run will use
  double last_weight = 0;         ///< the CPU weight of the last run
  std::int64_t device_items = 0;  ///< iterations of the last run on the device
  std::int64_t host_items = 0;    ///< iterations of the last run on the host
  time_stats device;              ///< device part, moves to the device included ("GPU time")
  time_stats host;                ///< host part, moves to the host included ("CPU time")
  time_stats step;                ///< the whole call: moves, both parts, bookkeeping
  std::string tuner;              ///< the tuner's name
  std::string decision;           ///< why the next weight is what it is (the tuner's words)
};

/// Which tuner a label uses.
enum class tuner_kind {
  model,       ///< `model_tuner` (the default)
  fixed_step,  ///< `fixed_step_tuner`: the fixed +-0.01 per run rule
  manual       ///< `manual_tuner`: the weight changes only through `reset_weight`
};

}  // namespace hetero

#endif  // HETERO_EXEC_SPLIT_STATS_HPP

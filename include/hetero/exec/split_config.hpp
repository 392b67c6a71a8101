/// @file
/// `hetero::split_config`: how work sharing uses this rank's cores (cores of the host part, a
/// core left to drive a GPU) and the CPU weight a new loop label starts from.
#ifndef HETERO_EXEC_SPLIT_CONFIG_HPP
#define HETERO_EXEC_SPLIT_CONFIG_HPP

#include "hetero/core/error.hpp"

namespace hetero {

/// How work sharing uses this rank's cores; one setting per `work_sharing` handle.
struct split_config {
  /// Cores the host part of a loop may use (one chunk each); 0: the host space's concurrency.
  /// Several ranks on a node divide the node's cores: see `split_config_for(runtime)`.
  int host_cores = 0;
  /// With a GPU device, leave one core out of the host part to drive the GPU (as StarPU does).
  bool leave_core_for_device = true;
  /// The CPU weight of a label's first run (0.2: a fifth of the work on the host, a start that
  /// favours the device, which is the faster side of most GPU nodes).
  double initial_weight = 0.2;
  /// Time the loops whose two spaces are one (no split, so no tuner needs their times). Off, such
  /// a loop costs what a plain Kokkos launch costs: two clock reads (47 ns) were 6 to 9 % of a
  /// 1e3-element loop's time here (docs/results/exec.md, "Overhead on one space"); its statistics count
  /// runs and items, and its times stay 0 (`split_stats::timed_runs`). While an observer listens
  /// for loops (`observer_events::loops`), these loops are timed whatever this says.
  bool time_one_space = false;
};

namespace detail {

inline void check_weight(double w, const char* what) {
  HETERO_EXPECTS(w >= 0.0 && w <= 1.0, what, " is ", w, "; allowed: a CPU weight in [0, 1]");
}

/// Throws `invalid_argument` for negative cores or an initial weight outside [0, 1].
inline void check_config(const split_config& config) {
  HETERO_EXPECTS(config.host_cores >= 0, "split_config::host_cores is ", config.host_cores,
                 "; allowed: 0 (the host space's concurrency) or a positive core count");
  check_weight(config.initial_weight, "split_config::initial_weight");
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_EXEC_SPLIT_CONFIG_HPP

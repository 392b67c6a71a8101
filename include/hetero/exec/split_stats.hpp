/// @file
/// Per-label state of work-sharing loops: the CPU weight, the tuner, the last device and host
/// times and running statistics; and the public queries on them (`reset_weight`, `cpu_weight`,
/// `gpu_seconds`, `cpu_seconds`, `split_statistics`). The power module reads the device and
/// host times here to shift power between GPU and CPU.
#ifndef HETERO_EXEC_SPLIT_STATS_HPP
#define HETERO_EXEC_SPLIT_STATS_HPP

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/exec/model_tuner.hpp"
#include "hetero/exec/split_policy.hpp"
#include "hetero/exec/tuner.hpp"

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
  std::uint64_t runs = 0;         ///< completed runs
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
  fixed_step,  ///< `fixed_step_tuner`: the seed paper's +-0.01 rule
  manual       ///< `manual_tuner`: the weight changes only through `reset_weight`
};

namespace detail {

/// One label's weight, tuner and statistics; guarded by its own mutex.
struct label_state {
  explicit label_state(std::string_view label, double initial_weight)
      : device_kernel(label),
        host_kernel(std::string(label) + " (host)"),
        weight(initial_weight),
        tuner(std::make_unique<model_tuner>()) {}

  std::mutex mutex;
  std::string device_kernel;  ///< the Kokkos label of the device part (the loop's label)
  std::string host_kernel;    ///< the Kokkos label of the host part
  double weight;
  std::unique_ptr<hetero::tuner> tuner;
  split_stats stats;
};

struct label_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// Every label's state in this process.
class label_registry {
 public:
  static label_registry& instance() {
    static label_registry registry;
    return registry;
  }

  /// The state of `label`, created with the configured initial weight on first use.
  std::shared_ptr<label_state> find_or_add(std::string_view label) {
    std::scoped_lock lock(m_mutex);
    if (auto it = m_labels.find(label); it != m_labels.end()) return it->second;
    auto state = std::make_shared<label_state>(label, work_sharing_config().initial_weight);
    m_labels.emplace(std::string(label), state);
    return state;
  }

  /// The state of `label`; throws `invalid_argument` when no loop of that label has run.
  std::shared_ptr<label_state> find(std::string_view label) const {
    std::scoped_lock lock(m_mutex);
    if (auto it = m_labels.find(label); it != m_labels.end()) return it->second;
    raise<invalid_argument>("no split loop labelled '", label, "' has run or been given a weight in this process");
  }

  bool contains(std::string_view label) const {
    std::scoped_lock lock(m_mutex);
    return m_labels.find(label) != m_labels.end();
  }

  std::vector<std::string> labels() const {
    std::scoped_lock lock(m_mutex);
    std::vector<std::string> names;
    for (const auto& entry : m_labels) names.push_back(entry.first);
    std::sort(names.begin(), names.end());
    return names;
  }

  void clear() {
    std::scoped_lock lock(m_mutex);
    m_labels.clear();
  }

 private:
  mutable std::mutex m_mutex;
  std::unordered_map<std::string, std::shared_ptr<label_state>, label_hash, std::equal_to<>> m_labels;
};

/// Records one run in `state`; with `tune`, the label's tuner sets the next weight (and says
/// why), else `decision` says why the weight stayed.
inline void record_run(label_state& state, const split_sample& sample, double step_seconds, bool tune,
                       std::string_view decision = {}) {
  std::scoped_lock lock(state.mutex);
  auto& s = state.stats;
  ++s.runs;
  s.last_weight = sample.weight;
  s.device_items = sample.device_items;
  s.host_items = sample.host_items;
  s.device.add(sample.device_seconds, s.runs);
  s.host.add(sample.host_seconds, s.runs);
  s.step.add(step_seconds, s.runs);
  if (tune) {
    state.weight = std::clamp(state.tuner->next_weight(sample), 0.0, 1.0);
  } else if (!decision.empty()) {
    state.weight = sample.weight;  // hetero chose the weight, and says why
  }
  s.weight = state.weight;
  s.decision = tune ? state.tuner->decision() : std::string(decision);
}

}  // namespace detail

/// Sets the CPU weight (the host's share of the iterations, in [0, 1]) of the next run of the
/// loop labelled `label`: the seed paper's `reset_weight`. The label's tuner continues from it.
inline void reset_weight(std::string_view label, double weight) {
  detail::check_weight(weight, "the CPU weight given to reset_weight");
  auto state = detail::label_registry::instance().find_or_add(label);
  std::scoped_lock lock(state->mutex);
  state->weight = weight;
  state->stats.weight = weight;
  state->tuner->restart(weight);
}

/// The CPU weight the next run of `label` will use (for a label that has not run yet, the
/// configured `split_config::initial_weight`).
inline double cpu_weight(std::string_view label) {
  auto& registry = detail::label_registry::instance();
  if (!registry.contains(label)) return work_sharing_config().initial_weight;
  auto state = registry.find(label);
  std::scoped_lock lock(state->mutex);
  return state->weight;
}

/// Seconds the device part of the last run of `label` took (the seed paper's `xmp_gpu_wtime`).
inline double gpu_seconds(std::string_view label) {
  auto state = detail::label_registry::instance().find(label);
  std::scoped_lock lock(state->mutex);
  return state->stats.device.last;
}

/// Seconds the host part of the last run of `label` took (the seed paper's `xmp_cpu_wtime`).
inline double cpu_seconds(std::string_view label) {
  auto state = detail::label_registry::instance().find(label);
  std::scoped_lock lock(state->mutex);
  return state->stats.host.last;
}

/// A copy of everything measured about `label`.
inline split_stats split_statistics(std::string_view label) {
  auto state = detail::label_registry::instance().find(label);
  std::scoped_lock lock(state->mutex);
  split_stats copy = state->stats;
  copy.weight = state->weight;
  copy.tuner = state->tuner->name();
  return copy;
}

/// The labels of every split loop that has run or been given a weight, sorted.
inline std::vector<std::string> split_labels() { return detail::label_registry::instance().labels(); }

/// Gives `label` its own tuner (e.g. a `model_tuner` with other options, or a user's).
inline void set_tuner(std::string_view label, std::unique_ptr<tuner> chosen) {
  HETERO_EXPECTS(chosen != nullptr, "set_tuner('", label, "') was given a null tuner");
  auto state = detail::label_registry::instance().find_or_add(label);
  std::scoped_lock lock(state->mutex);
  state->tuner = std::move(chosen);
  state->tuner->restart(state->weight);
}

/// Gives `label` a tuner of kind `kind` with default settings.
inline void set_tuner(std::string_view label, tuner_kind kind) {
  switch (kind) {
    case tuner_kind::model: return set_tuner(label, std::make_unique<model_tuner>());
    case tuner_kind::fixed_step: return set_tuner(label, std::make_unique<fixed_step_tuner>());
    case tuner_kind::manual: return set_tuner(label, std::make_unique<manual_tuner>());
  }
  detail::raise<invalid_argument>("set_tuner('", label, "'): unknown tuner kind ", static_cast<int>(kind));
}

/// Forgets every label (weights, tuners, statistics). Call only while no split loop runs.
inline void forget_split_labels() { detail::label_registry::instance().clear(); }

}  // namespace hetero

#endif  // HETERO_EXEC_SPLIT_STATS_HPP

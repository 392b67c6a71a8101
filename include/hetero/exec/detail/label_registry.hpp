/// @file
/// The per-label state of a `work_sharing` handle: each label's CPU weight, tuner and
/// statistics behind its own mutex, the table of labels, and the recording of one run.
#ifndef HETERO_EXEC_DETAIL_LABEL_REGISTRY_HPP
#define HETERO_EXEC_DETAIL_LABEL_REGISTRY_HPP

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/exec/model_tuner.hpp"
#include "hetero/exec/split_stats.hpp"
#include "hetero/exec/tuner.hpp"

namespace hetero::detail {

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
  bool weight_from_user = false;  ///< `reset_weight` set `weight` and no run has used it yet
  std::unique_ptr<hetero::tuner> tuner;
  split_stats stats;
};

struct label_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// Every label's state of one `work_sharing` handle.
class label_registry {
 public:
  /// The state of `label`, created with weight `initial_weight` on first use.
  std::shared_ptr<label_state> find_or_add(std::string_view label, double initial_weight) {
    std::scoped_lock lock(m_mutex);
    if (auto it = m_labels.find(label); it != m_labels.end()) return it->second;
    auto state = std::make_shared<label_state>(label, initial_weight);
    m_labels.emplace(std::string(label), state);
    return state;
  }

  /// The state of `label`; throws `invalid_argument` when no loop of that label has run.
  std::shared_ptr<label_state> find(std::string_view label) const {
    std::scoped_lock lock(m_mutex);
    if (auto it = m_labels.find(label); it != m_labels.end()) return it->second;
    raise<invalid_argument>("no split loop labelled '", label,
                            "' has run or been given a weight in this work sharing");
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

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_LABEL_REGISTRY_HPP

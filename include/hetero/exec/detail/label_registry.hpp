/// @file
/// The per-label state of a `work_sharing` handle: each label's CPU weight, tuner and
/// statistics behind its own mutex, the table of labels, and the recording of one run.
#ifndef HETERO_EXEC_DETAIL_LABEL_REGISTRY_HPP
#define HETERO_EXEC_DETAIL_LABEL_REGISTRY_HPP

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
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
  /// `reset_weight` set `weight` and no run has been recorded since (one that threw was not)
  bool weight_from_user = false;
  std::unique_ptr<hetero::tuner> tuner;
  split_stats stats;  ///< the runs recorded under `mutex` (all timed)
  /// The untimed runs of a loop on one space, counted without the mutex (a loop of 1e3 elements
  /// cannot afford one): how many, the last one's items, and whether the label's last run was one.
  std::atomic<std::uint64_t> untimed_runs{0};
  std::atomic<std::int64_t> untimed_items{0};
  std::atomic<bool> last_untimed{false};

  /// `stats` with the untimed runs folded in; call with `mutex` held.
  [[nodiscard]] split_stats statistics() const {
    split_stats s = stats;
    s.runs += untimed_runs.load(std::memory_order_relaxed);
    if (last_untimed.load(std::memory_order_relaxed)) {
      s.device_items = untimed_items.load(std::memory_order_relaxed);
      s.host_items = 0;
      s.last_weight = 0;
      s.device.last = s.host.last = s.step.last = 0;  // the last run was not timed
    }
    return s;
  }
};

struct label_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// The labels this thread looked up last, so that a loop called again and again finds its
/// state without the registry's mutex (a loop of 1e3 elements takes under a microsecond; a
/// mutex, a hash and a shared_ptr copy were a tenth of that). An entry is valid while its
/// registry's key is unchanged: every registry has its own key, and `clear` gives it a new one.
struct label_cache {
  struct entry {
    std::uint64_t registry_key = 0;  ///< 0: empty
    std::string label;
    label_state* state = nullptr;
  };
  static constexpr std::size_t size = 8;
  std::array<entry, size> entries;
  std::size_t next = 0;  ///< the entry a miss replaces (round robin)
};

inline thread_local label_cache t_label_cache;

/// A key no registry has had.
inline std::uint64_t new_registry_key() noexcept {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

/// Counts one untimed run of a loop on one space over `items` elements; no lock.
inline void record_untimed_run(label_state& state, std::int64_t items) noexcept {
  state.untimed_items.store(items, std::memory_order_relaxed);
  state.last_untimed.store(true, std::memory_order_relaxed);
  state.untimed_runs.fetch_add(1, std::memory_order_relaxed);
}

/// Every label's state of one `work_sharing` handle.
class label_registry {
 public:
  label_registry() = default;
  label_registry(const label_registry&) = delete;
  label_registry& operator=(const label_registry&) = delete;

  /// The state of `label` if this thread looked it up since the last `clear`, else null; no lock.
  [[nodiscard]] label_state* cached(std::string_view label) const noexcept {
    const std::uint64_t key = m_key.load(std::memory_order_acquire);
    for (const auto& e : t_label_cache.entries)
      if (e.registry_key == key && e.label == label) return e.state;
    return nullptr;
  }

  /// `find_or_add`, remembered in this thread's cache. The state stays valid until `clear`
  /// (and after it, until the registry goes: cleared states are kept, not freed, so that a loop
  /// that still holds one does not read freed memory).
  label_state& find_or_add_cached(std::string_view label, double initial_weight) {
    const std::uint64_t key = m_key.load(std::memory_order_acquire);
    label_state* state = find_or_add(label, initial_weight).get();
    auto& cache = t_label_cache;
    auto& e = cache.entries[cache.next];
    cache.next = (cache.next + 1) % label_cache::size;
    e.registry_key = key;
    e.label.assign(label);
    e.state = state;
    return *state;
  }

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
    for (auto& entry : m_labels) m_cleared.push_back(std::move(entry.second));
    m_labels.clear();
    m_key.store(new_registry_key(), std::memory_order_release);
  }

 private:
  mutable std::mutex m_mutex;
  std::atomic<std::uint64_t> m_key{new_registry_key()};
  std::vector<std::shared_ptr<label_state>> m_cleared;
  std::unordered_map<std::string, std::shared_ptr<label_state>, label_hash, std::equal_to<>> m_labels;
};

/// Records one timed run in `state`; with `tune`, the label's tuner sets the next weight (and
/// says why), else `decision` says why the weight stayed.
inline void record_run(label_state& state, const split_sample& sample, double step_seconds, bool tune,
                       std::string_view decision = {}) {
  std::scoped_lock lock(state.mutex);
  auto& s = state.stats;
  ++s.runs;
  s.timed_runs = s.runs;
  s.last_weight = sample.weight;
  s.device_items = sample.device_items;
  s.host_items = sample.host_items;
  s.device.add(sample.device_seconds, s.runs);
  s.host.add(sample.host_seconds, s.runs);
  s.step.add(step_seconds, s.runs);
  state.last_untimed.store(false, std::memory_order_relaxed);
  if (tune) {
    const double next = state.tuner->next_weight(sample);
    // std::clamp keeps a NaN, which would split the next run by an unspecified count.
    if (std::isnan(next))
      raise<invalid_argument>("the tuner of split loop '", state.device_kernel,
                              "' gave the next weight NaN; allowed: a number (clamped to [0, 1]); the weight "
                              "stays ",
                              state.weight);
    state.weight = std::clamp(next, 0.0, 1.0);
    state.weight_from_user = false;  // the tuner's weight now, gone on from the user's
  } else if (!decision.empty()) {
    state.weight = sample.weight;  // hetero chose the weight, and says why
    state.weight_from_user = false;
  }
  s.weight = state.weight;
  if (tune) {
    s.decision = state.tuner->decision();
  } else {
    s.decision.assign(decision);
  }
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_LABEL_REGISTRY_HPP

/// @file
/// `hetero::work_sharing`: a cheap copyable handle on the state of GPU/CPU work sharing — every
/// loop label's CPU weight, tuner and statistics, the `split_config`, and the helper thread that
/// runs one side of a split loop. Copies share one state; two handles made apart know nothing of
/// each other's labels. The free functions (`reset_weight`, `cpu_weight`, `split_statistics`,
/// `set_work_sharing_config`, ...) act on `default_work_sharing()`.
#ifndef HETERO_EXEC_WORK_SHARING_HPP
#define HETERO_EXEC_WORK_SHARING_HPP

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/core/detail/cpu.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/core/runtime.hpp"
#include "hetero/exec/detail/helper_thread.hpp"
#include "hetero/exec/detail/label_registry.hpp"
#include "hetero/exec/model_tuner.hpp"
#include "hetero/exec/split_config.hpp"
#include "hetero/exec/split_stats.hpp"
#include "hetero/exec/tuner.hpp"

namespace hetero {

/// The state of work sharing: labels (weights, tuners, statistics), settings and helper thread.
/// A handle: copies are handles to the same state (like a Kokkos execution space instance).
/// Pass one to `parallel_for`, `parallel_reduce` or `split_for` as the first argument; the forms
/// without it use `default_work_sharing()`.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// double a = 2;
/// Kokkos::View<double*> x("x", n), y("y", n);
/// -->
/// @code
/// hetero::work_sharing solver;                      // its own labels, tuners and helper thread
/// hetero::parallel_for(solver, "axpy", n, KOKKOS_LAMBDA(std::int64_t i) { y(i) += a * x(i); });
/// double w = solver.cpu_weight("axpy");             // unknown to hetero::cpu_weight("axpy")
/// @endcode
class work_sharing {
 public:
  /// A new, independent state with default settings; its helper thread starts on its first split run.
  work_sharing() : work_sharing(split_config{}) {}

  /// A new, independent state with `config`; throws `invalid_argument` for a bad setting.
  explicit work_sharing(const split_config& config) : m_state(std::make_shared<state>()) { set_config(config); }

  /// The settings.
  [[nodiscard]] split_config config() const {
    std::scoped_lock lock(m_state->config_mutex);
    return m_state->config;
  }

  /// Replaces the settings; throws `invalid_argument` for negative cores or an initial weight
  /// outside [0, 1]. Labels that already ran keep their weights.
  void set_config(const split_config& config) const {
    detail::check_config(config);
    std::scoped_lock lock(m_state->config_mutex);
    m_state->config = config;
    m_state->time_one_space.store(config.time_one_space, std::memory_order_relaxed);
  }

  /// Sets the CPU weight (the host's share of the iterations, in [0, 1]) of the next run of the
  /// loop labelled `label`; the label's tuner continues from it.
  void reset_weight(std::string_view label, double weight) const {
    detail::check_weight(weight, "the CPU weight given to reset_weight");
    auto s = state_of(label);
    std::scoped_lock lock(s->mutex);
    s->weight = weight;
    s->weight_from_user = true;
    s->stats.weight = weight;
    s->tuner->restart(weight);
  }

  /// The CPU weight the next run of `label` will use (for a label that has not run yet, the
  /// configured `split_config::initial_weight`).
  [[nodiscard]] double cpu_weight(std::string_view label) const {
    if (!m_state->labels.contains(label)) return config().initial_weight;
    auto s = m_state->labels.find(label);
    std::scoped_lock lock(s->mutex);
    return s->weight;
  }

  /// Seconds the device part of the last run of `label` took; throws `invalid_argument` when
  /// no loop of that label has run. A loop on one space runs as the device part; it is timed
  /// only with `split_config::time_one_space` or an observer of loops, else this is 0.
  [[nodiscard]] double gpu_seconds(std::string_view label) const {
    auto s = m_state->labels.find(label);
    std::scoped_lock lock(s->mutex);
    return s->statistics().device.last;
  }

  /// Seconds the host part of the last run of `label` took; throws as `gpu_seconds`.
  [[nodiscard]] double cpu_seconds(std::string_view label) const {
    auto s = m_state->labels.find(label);
    std::scoped_lock lock(s->mutex);
    return s->statistics().host.last;
  }

  /// A copy of everything measured about `label`; throws as `gpu_seconds`.
  [[nodiscard]] split_stats statistics(std::string_view label) const {
    auto s = m_state->labels.find(label);
    std::scoped_lock lock(s->mutex);
    split_stats copy = s->statistics();
    copy.weight = s->weight;
    copy.tuner = s->tuner->name();
    return copy;
  }

  /// The labels of every split loop that has run or been given a weight, sorted.
  [[nodiscard]] std::vector<std::string> labels() const { return m_state->labels.labels(); }

  /// Gives `label` its own tuner (e.g. a `model_tuner` with other options, or a user's).
  void set_tuner(std::string_view label, std::unique_ptr<tuner> chosen) const {
    HETERO_EXPECTS(chosen != nullptr, "set_tuner('", label, "') was given a null tuner");
    auto s = state_of(label);
    std::scoped_lock lock(s->mutex);
    s->tuner = std::move(chosen);
    s->tuner->restart(s->weight);
  }

  /// Gives `label` a tuner of kind `kind` with default settings.
  void set_tuner(std::string_view label, tuner_kind kind) const {
    switch (kind) {
      case tuner_kind::model: return set_tuner(label, std::make_unique<model_tuner>());
      case tuner_kind::fixed_step: return set_tuner(label, std::make_unique<fixed_step_tuner>());
      case tuner_kind::manual: return set_tuner(label, std::make_unique<manual_tuner>());
    }
    detail::raise<invalid_argument>("set_tuner('", label, "'): unknown tuner kind ", static_cast<int>(kind));
  }

  /// Forgets every label (weights, tuners, statistics). Call only while no split loop of this
  /// state runs.
  void forget_labels() const { m_state->labels.clear(); }

  /// The state of `label`, made with the configured initial weight on first use (for the loops).
  [[nodiscard]] std::shared_ptr<detail::label_state> state_of(std::string_view label) const {
    return m_state->labels.find_or_add(label, config().initial_weight);
  }

  /// The state of `label` for a loop's run, from this thread's cache of recent labels when it is
  /// there (no lock); valid while this handle's state lives.
  [[nodiscard]] detail::label_state& loop_state(std::string_view label) const {
    if (auto* s = m_state->labels.cached(label)) return *s;
    return m_state->labels.find_or_add_cached(label, config().initial_weight);
  }

  /// Whether a loop on one space times itself: `split_config::time_one_space`, or an observer
  /// listens for loops (for the loops).
  [[nodiscard]] bool times_one_space_loops() const noexcept {
    return m_state->time_one_space.load(std::memory_order_relaxed) || detail::listened(observer_events::loops);
  }

  /// The helper thread, started on first use (for the loops).
  [[nodiscard]] detail::helper_thread& helper() const {
    std::call_once(m_state->helper_started, [&] { m_state->helper = std::make_unique<detail::helper_thread>(); });
    return *m_state->helper;
  }

  /// True when both handles share one state.
  friend bool operator==(const work_sharing& a, const work_sharing& b) noexcept { return a.m_state == b.m_state; }

 private:
  struct state {
    mutable std::mutex config_mutex;
    split_config config;
    std::atomic<bool> time_one_space{false};  // config.time_one_space, read without the mutex
    detail::label_registry labels;
    std::once_flag helper_started;
    std::unique_ptr<detail::helper_thread> helper;  // joined when the last handle goes
  };

  std::shared_ptr<state> m_state;
};

/// The handle the loops without a `work_sharing` argument use, made on first use.
inline const work_sharing& default_work_sharing() {
  static const work_sharing shared;
  return shared;
}

/// The default handle's settings.
inline split_config work_sharing_config() { return default_work_sharing().config(); }

/// Replaces the default handle's settings; throws `invalid_argument` for negative cores or an
/// initial weight outside [0, 1].
inline void set_work_sharing_config(const split_config& config) { default_work_sharing().set_config(config); }

/// `base` with `host_cores` set to this rank's share of its node's cores (the node's cores
/// divided among the ranks sharing them, `runtime::machine_size()`, or the launcher's binding).
/// <!-- snippet: fragment
/// hetero::runtime rt;
/// -->
/// @code
/// hetero::set_work_sharing_config(hetero::split_config_for(rt));
/// @endcode
inline split_config split_config_for(const runtime& rt, split_config base = work_sharing_config()) {
  base.host_cores = detail::cores_per_rank(rt.machine_size());
  return base;
}

/// `work_sharing::reset_weight` on the default handle.
inline void reset_weight(std::string_view label, double weight) {
  default_work_sharing().reset_weight(label, weight);
}

/// `work_sharing::cpu_weight` on the default handle.
inline double cpu_weight(std::string_view label) { return default_work_sharing().cpu_weight(label); }

/// `work_sharing::gpu_seconds` on the default handle.
inline double gpu_seconds(std::string_view label) { return default_work_sharing().gpu_seconds(label); }

/// `work_sharing::cpu_seconds` on the default handle.
inline double cpu_seconds(std::string_view label) { return default_work_sharing().cpu_seconds(label); }

/// `work_sharing::statistics` on the default handle.
inline split_stats split_statistics(std::string_view label) { return default_work_sharing().statistics(label); }

/// `work_sharing::labels` of the default handle.
inline std::vector<std::string> split_labels() { return default_work_sharing().labels(); }

/// `work_sharing::set_tuner` on the default handle.
inline void set_tuner(std::string_view label, std::unique_ptr<tuner> chosen) {
  default_work_sharing().set_tuner(label, std::move(chosen));
}

/// `work_sharing::set_tuner` on the default handle.
inline void set_tuner(std::string_view label, tuner_kind kind) { default_work_sharing().set_tuner(label, kind); }

/// `work_sharing::forget_labels` on the default handle.
inline void forget_split_labels() { default_work_sharing().forget_labels(); }

}  // namespace hetero

#endif  // HETERO_EXEC_WORK_SHARING_HPP

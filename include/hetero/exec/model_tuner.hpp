/// @file
/// `hetero::model_tuner`, the default tuner: fits a fixed + per-item cost to each side's runs
/// and sets the weight where both sides are predicted to finish together, so it converges in
/// one to three runs where the fixed 0.01-per-run rule (`fixed_step_tuner`) needs 14 to 18.
#ifndef HETERO_EXEC_MODEL_TUNER_HPP
#define HETERO_EXEC_MODEL_TUNER_HPP

#include <algorithm>
#include <cmath>
#include <string>

#include "hetero/core/error.hpp"
#include "hetero/exec/detail/linear_cost.hpp"
#include "hetero/exec/tuner.hpp"

namespace hetero {

/// Settings of a `model_tuner`.
struct model_tuner_options {
  /// A split must be predicted faster than the best single side by this fraction; otherwise the
  /// loop runs on that side alone (w = 0: the host cannot shorten the step).
  double min_gain = 0.03;
  /// The weight changes only when the change is predicted to shorten the run by more than this
  /// fraction: measurement noise does not make the weight wander.
  double deadband = 0.02;
  /// Runs on one side alone before the other side is tried again; doubled after every probe that
  /// confirms it (up to `max_probe_interval`), reset when a probe finds a gain. Starting short
  /// undoes soon a drop to one side caused by one disturbed run; the doubling makes probes rare
  /// (7 in the first 1000 runs, then one per 4096).
  int probe_interval = 8;
  /// The longest interval between probes.
  int max_probe_interval = 4096;
  /// A side left alone is re-probed only if, at this many times its measured rate per item and
  /// with no fixed cost, it could shorten a run by `min_gain`: its fixed cost may change (other
  /// work on the cores ends), its rate hardly by more. Host cores hundreds of times slower than
  /// the device (an H200's DGEMM) are then never probed again.
  double probe_headroom = 4;
  /// The share a probe gives the other side: while it was never measured, this; later, at most
  /// this, and no more than it runs (at its measured cost per item, fixed cost aside) in the
  /// time of the better side alone, so that a probe costs about one run even where the other
  /// side is hundreds of times slower (a DGEMM whose host is 600x slower than an H200).
  double probe_weight = 0.05;
};

/// The default tuner. Each side's time is modelled as t = a + b * n (`detail::linear_cost`,
/// robust medians over the last runs), so fixed costs (launches, the hand-over to the helper
/// thread, transfer latency) do not bias the ratio as a plain rate would. After every run the
/// weight is set where the two sides' predicted times meet, n_host = (a_d - a_h + b_d n) /
/// (b_d + b_h), unless one side alone is predicted as fast (then w = 0 or 1, and the other side
/// is re-probed rarely), or the predicted gain is inside the deadband.
class model_tuner final : public tuner {
 public:
  /// A tuner with these settings; throws `invalid_argument` for settings outside their allowed ranges.
  explicit model_tuner(model_tuner_options options = {}) : m_options(options), m_interval(options.probe_interval) {
    HETERO_EXPECTS(options.min_gain >= 0 && options.min_gain < 1, "model_tuner min_gain is ", options.min_gain,
                   "; allowed: [0, 1)");
    HETERO_EXPECTS(options.deadband >= 0 && options.deadband < 1, "model_tuner deadband is ", options.deadband,
                   "; allowed: [0, 1)");
    HETERO_EXPECTS(options.probe_interval >= 1 && options.max_probe_interval >= options.probe_interval,
                   "model_tuner probe intervals are ", options.probe_interval, " and ", options.max_probe_interval,
                   "; allowed: 1 <= probe_interval <= max_probe_interval");
    HETERO_EXPECTS(options.probe_weight > 0 && options.probe_weight < 1, "model_tuner probe_weight is ",
                   options.probe_weight, "; allowed: (0, 1)");
    HETERO_EXPECTS(options.probe_headroom >= 1, "model_tuner probe_headroom is ", options.probe_headroom,
                   "; allowed: 1 or more");
  }

  double next_weight(const split_sample& sample) override {
    const double n = static_cast<double>(sample.device_items + sample.host_items);
    if (n <= 0) return sample.weight;
    const bool probing = m_probing;
    m_probing = false;
    m_shared_cores = sample.shared_cores;
    // Sharing the cores, the device alone runs on all of them, in a split on the rest: two costs.
    auto& device = m_shared_cores && sample.host_items == 0 ? m_whole : m_device;
    device.add(static_cast<double>(sample.device_items), sample.device_seconds, probing);
    m_host.add(static_cast<double>(sample.host_items), sample.host_seconds, probing);

    if (!m_device.known() || !m_host.known()) {  // one side never ran: try it now and then
      m_decision = "trying both sides";
      if (++m_single_side_runs < m_interval) return sample.weight;
      return start_probe(m_host.known() ? 1 - m_options.probe_weight : m_options.probe_weight);
    }
    if (m_shared_cores && !m_whole.known()) {  // the device on all the cores: measure it once
      m_decision = "measuring the device side alone on all of the rank's cores";
      return start_probe(0.0);
    }
    const double best = best_weight(n);
    if (best == 0.0 || best == 1.0) {
      // The model says one side alone; but if the split just measured beat that side's predicted
      // time, a disturbed run in the window misled the fit (two runs make an exact line through
      // an outlier): keep the split until more runs settle the fit.
      const double alone = best == 0.0 ? device_alone(n) : m_host.predict(n);
      const double measured = std::max(sample.device_seconds, sample.host_seconds);
      if (sample.weight > 0 && sample.weight < 1 && measured < alone * (1 - m_options.min_gain))
        return sample.weight;
      m_decision = best == 1.0      ? "host alone: the device cannot shorten the step"
                   : m_shared_cores ? "device alone on all cores: a split on disjoint cores is predicted no faster"
                                    : "device alone: the host cannot shorten the step";
      if (probing) m_interval = std::min(2 * m_interval, m_options.max_probe_interval);
      if (sample.weight != best) {
        m_single_side_runs = 0;
        return best;
      }
      if (++m_single_side_runs < m_interval) return best;
      const double other_per_item = (best == 0.0 ? m_host : m_device).seconds_per_item();
      if (!worth_probing(other_per_item, alone, n)) {  // it could not help even much faster: look again later
        m_single_side_runs = 0;
        m_interval = std::min(2 * m_interval, m_options.max_probe_interval);
        return best;
      }
      // The probe gives the other side a share large enough to measure its cost per item, but
      // no larger than it can run in the time of the better side alone (probe_share).
      const double balanced = balanced_weight(n);
      const double share = probe_share(other_per_item, alone, n);
      return start_probe(best == 0.0 ? std::max(balanced, share) : std::min(balanced, 1 - share));
    }
    if (probing) m_interval = m_options.probe_interval;  // the probe found a gain
    m_single_side_runs = 0;
    m_decision = "split: both sides predicted to finish together";
    if (sample.weight > 0 && sample.weight < 1 &&
        predict(n, sample.weight) <= predict(n, best) * (1 + m_options.deadband))
      return sample.weight;
    return best;
  }

  void restart(double weight) override {
    (void)weight;
    m_single_side_runs = 0;
    m_interval = m_options.probe_interval;
    m_probing = false;
  }

  [[nodiscard]] const char* name() const noexcept override { return "model"; }

  [[nodiscard]] std::string decision() const override { return m_decision; }

  /// The fitted device cost (for reports and tests).
  [[nodiscard]] const detail::linear_cost& device_cost() const noexcept { return m_device; }
  /// The fitted host cost (for reports and tests).
  [[nodiscard]] const detail::linear_cost& host_cost() const noexcept { return m_host; }
  /// The fitted cost of the device alone on all cores when the sides share them (for reports).
  [[nodiscard]] const detail::linear_cost& whole_cost() const noexcept { return m_whole; }

  /// The predicted time of the device alone: on all the cores when the sides share them.
  [[nodiscard]] double device_alone(double n) const {
    return m_shared_cores && m_whole.known() ? m_whole.predict(n) : m_device.predict(n);
  }

  /// The predicted time of a run of `n` items with weight `w`: the slower side's.
  [[nodiscard]] double predict(double n, double w) const {
    const double host_items = std::round(w * n);
    if (host_items <= 0) return device_alone(n);
    return std::max(m_device.predict(n - host_items), m_host.predict(host_items));
  }

  /// The weight at which both sides are predicted to finish together, in [1/n, 1 - 1/n].
  [[nodiscard]] double balanced_weight(double n) const {
    const double per_item = m_device.seconds_per_item() + m_host.seconds_per_item();
    const double host_items =
        per_item > 0
            ? (m_device.fixed_seconds() - m_host.fixed_seconds() + m_device.seconds_per_item() * n) / per_item
            : n / 2;
    return std::clamp(host_items, std::min(1.0, n / 2), std::max(n - 1, n / 2)) / n;
  }

  /// The best predicted weight: the balanced split, or one side alone when the split would not
  /// beat it by `min_gain`.
  [[nodiscard]] double best_weight(double n) const {
    const double device = device_alone(n), host = m_host.predict(n);
    const double single = device <= host ? 0.0 : 1.0;
    const double w = balanced_weight(n);
    return predict(n, w) < std::min(device, host) * (1 - m_options.min_gain) ? w : single;
  }

 private:
  // Whether the side not chosen, at `per_item` seconds per item, could shorten a run of `n` items
  // that the chosen side does `alone` in so many seconds by min_gain, at probe_headroom times its
  // rate and with no fixed cost: the two sides then share the items in proportion to their rates.
  [[nodiscard]] bool worth_probing(double per_item, double alone, double n) const {
    if (per_item <= 0 || alone <= 0) return true;
    const double split = n / (n / alone + m_options.probe_headroom / per_item);
    return split < alone * (1 - m_options.min_gain);
  }

  // The share of a probe of the side not chosen, at `per_item` seconds per item: probe_weight,
  // but no more items than it processes in `budget` seconds (the chosen side's predicted time
  // alone), and at least one item.
  [[nodiscard]] double probe_share(double per_item, double budget, double n) const {
    if (per_item <= 0) return m_options.probe_weight;
    return std::min(m_options.probe_weight, std::max(1.0, budget / per_item) / n);
  }

  double start_probe(double weight) {
    m_single_side_runs = 0;
    m_probing = true;
    return weight;
  }

  model_tuner_options m_options;
  detail::linear_cost m_device, m_host, m_whole;
  bool m_shared_cores = false;
  std::string m_decision;
  int m_interval;
  int m_single_side_runs = 0;
  bool m_probing = false;
};

}  // namespace hetero

#endif  // HETERO_EXEC_MODEL_TUNER_HPP

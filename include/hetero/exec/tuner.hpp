/// @file
/// Tuners choose the CPU weight of a labelled work-sharing loop from what its runs measured.
/// The interface, the manual tuner (the weight stays what `reset_weight` set) and the classic
/// fixed-step rule (move the weight 0.01 per step toward equal device and host times), kept as
/// a reference for the default `model_tuner`.
#ifndef HETERO_EXEC_TUNER_HPP
#define HETERO_EXEC_TUNER_HPP

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "hetero/core/error.hpp"

namespace hetero {

/// What one run of a split loop measured: the items and seconds of each side, and the weight
/// it ran with. A side's seconds include moving the rows it lacked.
struct split_sample {
  std::int64_t device_items = 0;  ///< iterations run by the device
  std::int64_t host_items = 0;    ///< iterations run by the host
  double device_seconds = 0;      ///< the device part's time (0 when it had nothing)
  double host_seconds = 0;        ///< the host part's time (0 when it had nothing)
  double weight = 0;              ///< the CPU weight of this run
  /// The two sides share the CPU's cores (a CPU device): in a split the device part ran on the
  /// cores the host part left, alone it ran on all of them, so the two costs differ.
  bool shared_cores = false;
};

/// Chooses the next CPU weight of one label from each run's sample. One tuner per label; calls
/// are serialised by the label's registry entry, so a tuner needs no locking of its own.
class tuner {
 public:
  virtual ~tuner() = default;
  /// The weight for the next run, in [0, 1], after a run that measured `sample`.
  virtual double next_weight(const split_sample& sample) = 0;
  /// The user set the weight by hand (`reset_weight`): restart from `weight`.
  virtual void restart(double weight) { (void)weight; }
  /// A short name for reports ("model", "fixed_step", "manual").
  [[nodiscard]] virtual const char* name() const noexcept = 0;
  /// Why the last weight was chosen, in words for reports (empty: nothing to say).
  [[nodiscard]] virtual std::string decision() const { return {}; }
  /// True when every weight is the user's (`reset_weight`): hetero then never replaces it.
  [[nodiscard]] virtual bool keeps_user_weight() const noexcept { return false; }
};

/// Keeps the weight that `reset_weight` (or the first run) set: the user tunes by hand.
class manual_tuner final : public tuner {
 public:
  double next_weight(const split_sample& sample) override { return sample.weight; }
  [[nodiscard]] const char* name() const noexcept override { return "manual"; }
  [[nodiscard]] bool keeps_user_weight() const noexcept override { return true; }
};

/// The fixed-step rule: after each run, lower the weight by `step` when the host took more than
/// half of the two sides' summed time, raise it otherwise. Converges in |w* - w0| / step runs
/// (14 to 18 runs for typical GPU/CPU speed ratios at step 0.01); kept as the reference the
/// default tuner is measured against.
class fixed_step_tuner final : public tuner {
 public:
  /// `step`: the weight change per run (0.01 by default).
  explicit fixed_step_tuner(double step = 0.01) : m_step(step) {
    HETERO_EXPECTS(step > 0.0 && step <= 1.0, "fixed_step_tuner step is ", step, "; allowed: (0, 1]");
  }

  double next_weight(const split_sample& sample) override {
    const double total = sample.device_seconds + sample.host_seconds;
    const double cpu_ratio = total > 0 ? sample.host_seconds / total : 0.0;
    const double w = cpu_ratio > 0.5 ? sample.weight - m_step : sample.weight + m_step;
    return std::clamp(w, 0.0, 1.0);
  }
  [[nodiscard]] const char* name() const noexcept override { return "fixed_step"; }

 private:
  double m_step;
};

}  // namespace hetero

#endif  // HETERO_EXEC_TUNER_HPP

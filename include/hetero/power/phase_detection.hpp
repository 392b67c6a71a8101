/// @file
/// Phase-length detection from the autocorrelation of a rank's active-time series: the period
/// of the application's main loop, in frames, picked online by rule (no offline test run).
#ifndef HETERO_POWER_PHASE_DETECTION_HPP
#define HETERO_POWER_PHASE_DETECTION_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <span>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero::power {

/// How the period is picked from the autocorrelation.
struct phase_detection_options {
  /// The shortest phase to control, in frames: a shorter period is replaced by its smallest
  /// multiple of at least this length, so that control traffic stays negligible (a loop of 12
  /// frames with `min_frames = 24` is controlled every 2 iterations).
  std::size_t min_frames = 8;
  /// The longest lag examined; 0: half the series.
  std::size_t max_lag = 0;
  /// Among the autocorrelation's peaks, the shortest lag whose peak reaches this fraction of the
  /// highest peak is the period. Multiples of the period peak about as high; a period that is
  /// not a whole number of frames peaks lower at its first lag than at the multiple that falls
  /// on a whole frame (0.75 of it for a 5.5-frame period with noise), hence the wide margin.
  double peak_tolerance = 0.6;
  /// Below this normalised autocorrelation no periodicity is reported.
  double min_correlation = 0.25;
};

/// The longest phase `phase_detection_options::min_frames` may ask for: 2^32 frames (about 200
/// days of 4 ms frames), so that its multiple of a period is exact in a double.
inline constexpr std::size_t most_phase_frames = std::size_t{1} << 32;

/// Throws `hetero::invalid_argument` for options the detection cannot use: `min_frames` 0 or
/// above `most_phase_frames`, a `peak_tolerance` outside (0, 1] or a `min_correlation` outside
/// (0, 1] (at 0 a series with no peak at all would be taken as periodic), naming the field and
/// what is allowed.
inline void check_detection_options(const phase_detection_options& options) {
  HETERO_EXPECTS(options.min_frames >= 1 && options.min_frames <= most_phase_frames,
                 "phase_detection_options::min_frames is ", options.min_frames, "; allowed: 1 to ",
                 most_phase_frames);
  HETERO_EXPECTS(options.peak_tolerance > 0 && options.peak_tolerance <= 1,
                 "phase_detection_options::peak_tolerance is ", options.peak_tolerance,
                 "; allowed: (0, 1], a fraction of the highest peak");
  HETERO_EXPECTS(options.min_correlation > 0 && options.min_correlation <= 1,
                 "phase_detection_options::min_correlation is ", options.min_correlation,
                 "; allowed: (0, 1], a normalised autocorrelation");
}

/// The longest lag the detection examines in a series of `frames` frames: `options.max_lag`
/// (at most frames - 1), or half the series where it is 0.
inline std::size_t longest_lag(std::size_t frames, const phase_detection_options& options) noexcept {
  if (frames == 0) return 0;
  return options.max_lag ? std::min(options.max_lag, frames - 1) : frames / 2;
}

/// What the detection found.
struct phase_estimate {
  bool found = false;          ///< a period was found
  double period_frames = 0.0;  ///< the period, interpolated between frames
  std::size_t frames = 0;      ///< the phase length to use: a multiple of the period, >= min_frames
  double correlation = 0.0;    ///< the normalised autocorrelation at the period (1 = perfectly periodic)
};

/// The autocovariance c(0..max_lag) of `series`: mean removed, each lag averaged over its n - lag
/// products (c(0) is the variance). Several ranks' functions add up to the group's, in which a
/// rank that never changes its activity weighs nothing.
inline std::vector<double> autocovariance(std::span<const double> series, std::size_t max_lag) {
  const std::size_t n = series.size();
  HETERO_EXPECTS(max_lag < n, "autocorrelation up to lag ", max_lag, " of a series of ", n,
                 " frames; the lag must be below the series length");
  double mean = 0.0;
  for (double x : series) mean += x;
  mean /= static_cast<double>(n);
  std::vector<double> c(max_lag + 1, 0.0);
  for (std::size_t lag = 0; lag <= max_lag; ++lag) {
    double sum = 0.0;
    for (std::size_t t = 0; t + lag < n; ++t) sum += (series[t] - mean) * (series[t + lag] - mean);
    c[lag] = sum / static_cast<double>(n - lag);
  }
  return c;
}

/// Normalises an autocovariance (or a sum of them) to the autocorrelation r = c / c(0), so
/// r(0) = 1. A series that is constant up to rounding (relative to `scale`, its typical value)
/// has no period: all zeros.
inline std::vector<double> normalized(std::vector<double> c, double scale = 1.0) {
  const double variance = c.empty() ? 0.0 : c[0];
  if (!(variance > 1e-24 * (1.0 + scale * scale))) return std::vector<double>(c.size(), 0.0);
  for (double& x : c) x /= variance;
  return c;
}

/// `normalized`, spelled as in 0.1.
[[deprecated(
    "hetero: one spelling per word, as the C++ library spells it: write normalized(); "
    "docs/conventions.md")]] inline std::vector<double>
normalised(std::vector<double> c, double scale = 1.0) {
  return normalized(std::move(c), scale);
}

/// The normalised autocorrelation r(0..max_lag) of `series`.
inline std::vector<double> autocorrelation(std::span<const double> series, std::size_t max_lag) {
  double scale = 0.0;
  for (double x : series) scale = std::max(scale, std::abs(x));
  return normalized(autocovariance(series, max_lag), scale);
}

namespace detail {

// The vertex of the parabola through r[lag - 1], r[lag], r[lag + 1], as a fractional lag.
inline double interpolated_peak(std::span<const double> r, std::size_t lag) {
  if (lag == 0 || lag + 1 >= r.size()) return static_cast<double>(lag);
  const double curvature = r[lag - 1] - 2 * r[lag] + r[lag + 1];
  if (curvature >= 0) return static_cast<double>(lag);
  const double shift = std::clamp(0.5 * (r[lag - 1] - r[lag + 1]) / curvature, -0.5, 0.5);
  return static_cast<double>(lag) + shift;
}

inline bool is_peak(std::span<const double> r, std::size_t lag) {
  return lag >= 2 && lag + 1 < r.size() && r[lag] > r[lag - 1] && r[lag] >= r[lag + 1];
}

}  // namespace detail

/// Finds the period in an autocorrelation function `r` (from `autocorrelation`, or the average
/// of several ranks' functions).
inline phase_estimate detect_phase(std::span<const double> r, const phase_detection_options& options = {}) {
  check_detection_options(options);
  double best = 0.0;
  for (std::size_t lag = 2; lag < r.size(); ++lag)
    if (detail::is_peak(r, lag)) best = std::max(best, r[lag]);
  phase_estimate estimate;
  if (best < options.min_correlation) return estimate;
  // best > 0 is a peak's height and peak_tolerance <= 1, so this finds one (the highest at worst).
  std::size_t lag = 2;
  while (lag < r.size() && !(detail::is_peak(r, lag) && r[lag] >= options.peak_tolerance * best)) ++lag;
  if (lag >= r.size()) return estimate;
  double period = detail::interpolated_peak(r, lag);
  // Refine with the farthest clear peak at a multiple of the period: its position divided by
  // the multiple is k times less affected by rounding to whole frames.
  for (std::size_t k = 2; static_cast<double>(k) * period + 2 < static_cast<double>(r.size()); ++k) {
    const auto guess = static_cast<std::size_t>(std::lround(static_cast<double>(k) * period));
    std::size_t at = guess;
    for (std::size_t c = guess - 1; c <= guess + 1; ++c)
      if (r[c] > r[at]) at = c;
    if (!detail::is_peak(r, at) || r[at] < options.peak_tolerance * best) break;
    period = detail::interpolated_peak(r, at) / static_cast<double>(k);
  }
  estimate.found = true;
  estimate.period_frames = period;
  estimate.correlation = r[lag];
  // The smallest whole multiple of the period that rounds to at least min_frames.
  // period >= 1 (a peak at lag 2 or more, interpolated by less than a frame) and min_frames <= 2^32:
  // start from the multiple just below and step up (one or two steps).
  const double least = static_cast<double>(options.min_frames);
  std::size_t frames = 0;
  for (double k = std::max(1.0, std::floor(least / period) - 1); frames < options.min_frames; ++k)
    frames = static_cast<std::size_t>(std::llround(k * period));
  estimate.frames = frames;
  return estimate;
}

/// Finds the period of `series` (active seconds per frame) directly.
/// <!-- snippet: fragment
/// std::vector<double> active_per_frame(32, 1.0);
/// std::size_t phase_frames = 0;
/// -->
/// @code
/// auto estimate = hetero::power::detect_phase_length(active_per_frame);
/// if (estimate.found) phase_frames = estimate.frames;
/// @endcode
inline phase_estimate detect_phase_length(std::span<const double> series,
                                          const phase_detection_options& options = {}) {
  HETERO_EXPECTS(series.size() >= 8, "phase detection needs at least 8 frames; got ", series.size());
  const auto r = autocorrelation(series, longest_lag(series.size(), options));
  return detect_phase(r, options);
}

/// Online detection: keeps the last `window` frames of a rank's active-time series and estimates
/// the phase length from them on request.
class phase_detector {
 public:
  /// Keeps `window_frames` frames (at least 8; the longest detectable period is half of it).
  explicit phase_detector(std::size_t window_frames, phase_detection_options options = {})
      : m_window(window_frames), m_options(options) {
    HETERO_EXPECTS(window_frames >= 8, "phase detector window of ", window_frames, " frames; need at least 8");
    check_detection_options(m_options);
  }
  /// Appends one frame's active time (oldest frames fall out of the window).
  void add(double active_seconds) {
    m_series.push_back(active_seconds);
    if (m_series.size() > m_window) m_series.pop_front();
  }
  /// Whether the window is full.
  [[nodiscard]] bool ready() const noexcept { return m_series.size() == m_window; }
  /// Frames held.
  [[nodiscard]] std::size_t size() const noexcept { return m_series.size(); }
  /// The autocorrelation of the frames held, up to the detection's longest lag.
  [[nodiscard]] std::vector<double> correlation() const {
    const std::vector<double> series(m_series.begin(), m_series.end());
    return autocorrelation(series, longest_lag(series.size(), m_options));
  }
  /// The phase length estimated from the frames held (needs 8 frames at least).
  [[nodiscard]] phase_estimate estimate() const {
    const std::vector<double> series(m_series.begin(), m_series.end());
    return detect_phase_length(series, m_options);
  }

 private:
  std::size_t m_window;
  phase_detection_options m_options;
  std::deque<double> m_series;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_PHASE_DETECTION_HPP

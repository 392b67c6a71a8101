/// @file
/// The cost of one side of a split loop as a fixed part plus a part per item, t = a + b * n,
/// fitted robustly to that side's last few runs.
#ifndef HETERO_EXEC_DETAIL_LINEAR_COST_HPP
#define HETERO_EXEC_DETAIL_LINEAR_COST_HPP

#include <algorithm>
#include <array>
#include <vector>

namespace hetero::detail {

/// The median of `values` (which it reorders); 0 for none.
inline double median_of(std::vector<double>& values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

/// t = fixed + per_item * n over a window of the last `window` runs of one side.
///
/// The fit is Theil-Sen: the slope is the median of the slopes between pairs of runs whose item
/// counts differ by at least `min_spread`, the fixed part the median of t - slope * n. Medians
/// make one preempted run (easily 2x slower on a shared node) move nothing once there are a few
/// runs; a slope <= 0 (time falling as items grow) is not believed. While all runs have
/// about the same n (a converged weight) the slope cannot be separated from the fixed part: the
/// last fixed part is kept and only the slope follows the runs.
class linear_cost {
 public:
  static constexpr int window = 8;
  static constexpr double min_spread = 1.15;

  /// A run that misses the prediction by more than this fraction counts as a miss.
  static constexpr double change = 0.25;

  /// Adds one run of `items` items that took `seconds`. Two misses in a row in the same
  /// direction mean the cost changed (other work on the CPU, a new phase of the application):
  /// the older runs are forgotten. With `fresh` (a probe after a long pause) one miss is enough.
  void add(double items, double seconds, bool fresh = false) {
    if (items <= 0) return;
    if (m_count > 0) {
      const double predicted = predict(items);
      const double miss = predicted > 0 ? (seconds - predicted) / predicted : 0.0;
      const int direction = miss > change ? 1 : miss < -change ? -1 : 0;
      if (direction != 0 && (fresh || direction == m_last_miss)) {
        const std::size_t last = static_cast<std::size_t>((m_next + window - 1) % window);
        const double last_items = m_items[last], last_seconds = m_seconds[last];
        m_count = m_next = 0;
        m_fixed = 0;
        if (!fresh) push(last_items, last_seconds);
      }
      m_last_miss = direction;
    }
    push(items, seconds);
    fit();
  }

  /// Forgets every run.
  void clear() noexcept { *this = linear_cost(); }

  /// True once a run was added.
  [[nodiscard]] bool known() const noexcept { return m_count > 0; }
  /// Runs in the window.
  [[nodiscard]] int samples() const noexcept { return m_count; }
  /// The fixed part a, in seconds.
  [[nodiscard]] double fixed_seconds() const noexcept { return m_fixed; }
  /// The part per item b, in seconds.
  [[nodiscard]] double seconds_per_item() const noexcept { return m_per_item; }
  /// Predicted seconds for `items` items (0 for none: a side with nothing to do costs nothing).
  [[nodiscard]] double predict(double items) const noexcept {
    return items > 0 ? m_fixed + m_per_item * items : 0.0;
  }

 private:
  void push(double items, double seconds) {
    m_items[static_cast<std::size_t>(m_next)] = items;
    m_seconds[static_cast<std::size_t>(m_next)] = std::max(seconds, 0.0);
    m_next = (m_next + 1) % window;
    m_count = std::min(m_count + 1, window);
  }

  void fit() {
    std::vector<double> slopes;
    for (int i = 0; i < m_count; ++i)
      for (int j = i + 1; j < m_count; ++j) {
        const double ni = m_items[static_cast<std::size_t>(i)], nj = m_items[static_cast<std::size_t>(j)];
        if (std::max(ni, nj) < min_spread * std::min(ni, nj)) continue;
        slopes.push_back((m_seconds[static_cast<std::size_t>(j)] - m_seconds[static_cast<std::size_t>(i)]) /
                         (nj - ni));
      }
    std::vector<double> values;
    const double slope = slopes.empty() ? 0.0 : median_of(slopes);
    if (slope > 0) {
      m_per_item = slope;
      for (int i = 0; i < m_count; ++i)
        values.push_back(m_seconds[static_cast<std::size_t>(i)] -
                         m_per_item * m_items[static_cast<std::size_t>(i)]);
      m_fixed = median_of(values);
      if (m_fixed >= 0) return;
    } else if (slopes.empty()) {
      for (int i = 0; i < m_count; ++i)
        values.push_back((m_seconds[static_cast<std::size_t>(i)] - m_fixed) /
                         m_items[static_cast<std::size_t>(i)]);
      m_per_item = median_of(values);
      if (m_per_item > 0) return;
    }
    // The fixed part came out negative or swallowed the whole time, or the time fell as the
    // items grew (loop work does not do that: a disturbed run, and through two runs the line
    // goes exactly through it): fall back to a purely proportional cost.
    m_fixed = 0;
    values.clear();
    for (int i = 0; i < m_count; ++i)
      values.push_back(m_seconds[static_cast<std::size_t>(i)] / m_items[static_cast<std::size_t>(i)]);
    m_per_item = median_of(values);
  }

  std::array<double, window> m_items{};
  std::array<double, window> m_seconds{};
  int m_count = 0;
  int m_next = 0;
  int m_last_miss = 0;
  double m_fixed = 0;
  double m_per_item = 0;
};

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_LINEAR_COST_HPP

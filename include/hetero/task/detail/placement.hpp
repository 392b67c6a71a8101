/// @file
/// Where a task with a host and a device body runs: the side on which it would finish first,
/// from the measured time of its label on each side (per data size), the time to move its data
/// there, and the work already queued on that side (StarPU's dmda, with hetero's own split
/// loop's habits: each side calibrated a few times first, then the slower one re-checked
/// rarely).
#ifndef HETERO_TASK_DETAIL_PLACEMENT_HPP
#define HETERO_TASK_DETAIL_PLACEMENT_HPP

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace hetero::detail {

/// The two sides a task can run on.
enum class task_side : int { host = 0, device = 1 };

/// Measured body times of one label on each side, per data size.
class label_record {
 public:
  /// Runs of each side before the model is trusted, and how often (in decisions) the side
  /// that is not chosen is tried again once, so that a changed cost is noticed.
  static constexpr std::uint64_t calibration_runs = 3;
  static constexpr std::uint64_t recheck_every = 64;

  explicit label_record(std::string label) : m_label(std::move(label)) {}

  [[nodiscard]] const std::string& label() const noexcept { return m_label; }

  /// The size class of `bytes` of data (powers of two).
  [[nodiscard]] static int size_class(std::size_t bytes) noexcept {
    return bytes == 0 ? 0 : static_cast<int>(std::bit_width(bytes));
  }

  /// A body of this label with `bytes` of data ran `seconds` on `side`.
  void record(task_side side, std::size_t bytes, double seconds) {
    const auto s = static_cast<std::size_t>(side);
    m_runs[s].fetch_add(1, std::memory_order_relaxed);
    m_nanoseconds[s].fetch_add(static_cast<std::int64_t>(seconds * 1e9), std::memory_order_relaxed);
    std::lock_guard lock(m_mutex);
    estimate& e = m_by_size[size_class(bytes)][s];
    e.last[e.samples % e.last.size()] = seconds;
    ++e.samples;
  }

  /// What the model says about a task of `bytes`: the expected body time on each side
  /// (negative: not calibrated yet), and whether this decision re-checks the other side.
  struct outlook {
    std::array<double, 2> seconds{-1.0, -1.0};
    bool recheck = false;
  };
  [[nodiscard]] outlook look(std::size_t bytes) {
    outlook o = peek(bytes);
    std::lock_guard lock(m_mutex);
    o.recheck = ++m_decisions % recheck_every == 0;
    return o;
  }

  /// `look` without counting a decision (what a task forced on one side will likely take).
  [[nodiscard]] outlook peek(std::size_t bytes) {
    std::lock_guard lock(m_mutex);
    outlook o;
    const auto& e = m_by_size[size_class(bytes)];
    for (std::size_t s = 0; s < 2; ++s)
      if (e[s].samples >= calibration_runs) o.seconds[s] = e[s].median();
    return o;
  }

  /// The side with fewer runs of this size so far (calibration), the device on a tie.
  /// Counts the decision for it: tasks decided while the first ones still run spread over both
  /// sides rather than all going to one.
  [[nodiscard]] task_side less_tried(std::size_t bytes) {
    std::lock_guard lock(m_mutex);
    auto& e = m_by_size[size_class(bytes)];
    const task_side side = std::max(e[0].samples, e[0].tried) < std::max(e[1].samples, e[1].tried)
                               ? task_side::host
                               : task_side::device;
    ++e[static_cast<std::size_t>(side)].tried;
    return side;
  }

  /// Runs and summed seconds on `side` (for the statistics).
  [[nodiscard]] std::uint64_t runs(task_side side) const noexcept {
    return m_runs[static_cast<std::size_t>(side)].load(std::memory_order_relaxed);
  }
  [[nodiscard]] double seconds(task_side side) const noexcept {
    return static_cast<double>(m_nanoseconds[static_cast<std::size_t>(side)].load(std::memory_order_relaxed)) *
           1e-9;
  }
  void reset_totals() noexcept {
    for (std::size_t s = 0; s < 2; ++s) {
      m_runs[s].store(0, std::memory_order_relaxed);
      m_nanoseconds[s].store(0, std::memory_order_relaxed);
    }
  }

 private:
  // The last runs of one side: their median is the estimate, so that one slow run (a core
  // taken away for a moment) does not send the next tasks to the other side.
  struct estimate {
    std::array<double, 5> last{};
    std::uint64_t samples = 0;
    std::uint64_t tried = 0;  ///< decisions for this side during calibration
    [[nodiscard]] double median() const {
      const std::size_t n = std::min<std::uint64_t>(samples, last.size());
      std::array<double, 5> sorted = last;
      for (std::size_t i = 1; i < n; ++i)  // insertion sort of at most 5
        for (std::size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; --j) std::swap(sorted[j - 1], sorted[j]);
      return sorted[n / 2];
    }
  };
  std::string m_label;
  std::mutex m_mutex;
  std::map<int, std::array<estimate, 2>> m_by_size;
  std::uint64_t m_decisions = 0;
  std::array<std::atomic<std::uint64_t>, 2> m_runs{};
  std::array<std::atomic<std::int64_t>, 2> m_nanoseconds{};
};

/// The choice for one ready task: `busy[s]` is the work queued or running on side `s` per
/// worker (seconds), `move[s]` the time to move the task's data there.
inline task_side choose_side(label_record& label, std::size_t bytes, const std::array<double, 2>& busy,
                             const std::array<double, 2>& move) {
  const label_record::outlook o = label.look(bytes);
  if (o.seconds[0] < 0 || o.seconds[1] < 0) return label.less_tried(bytes);
  std::array<double, 2> finish{};
  for (std::size_t s = 0; s < 2; ++s) finish[s] = busy[s] + move[s] + o.seconds[s];
  const task_side best = finish[0] <= finish[1] ? task_side::host : task_side::device;
  if (!o.recheck) return best;
  return best == task_side::host ? task_side::device : task_side::host;
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_PLACEMENT_HPP

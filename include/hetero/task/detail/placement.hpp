/// @file
/// Where a task with a host and a device body runs: the side on which it would finish first,
/// from the measured time of its label on each side (per data size), the time to move its data
/// there, and the work already queued on that side (StarPU's dmda, with hetero's own split
/// loop's habits: each side calibrated a few times first, then the slower one re-checked
/// rarely). A host side far slower than the device is not run more than it must be: one run
/// says enough about it, and a slower side is re-checked the more rarely the slower it is, and
/// only where it could finish first at a quarter of its time (a host core beside an H200 takes
/// 100-1000x a tile kernel's time there, and each of its runs delays what depends on it), or
/// where one run alone says it is slower (until a second run is back to confirm or correct it).
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
#include <optional>
#include <string>
#include <utility>

namespace hetero::detail {

/// The two sides a task can run on.
enum class task_side : int { host = 0, device = 1 };

/// Measured body times of one label on each side, per data size.
class label_record {
 public:
  /// Runs of each side before the model is trusted, and how often (in decisions, times how
  /// many times slower it is) the side that is not chosen is tried again once, so that a
  /// changed cost is noticed: a re-check then costs about 1/64 of the faster side's work.
  static constexpr std::uint64_t calibration_runs = 3;
  static constexpr std::uint64_t recheck_every = 64;
  /// A host side whose first run took this many times the device's (median) counts as measured
  /// after that one run: more runs would only confirm that it is the slower side.
  static constexpr double decisive_ratio = 4;
  /// The slower side is re-checked only if it would finish first at 1/headroom of its time.
  static constexpr double recheck_headroom = 4;

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
    estimate& e = m_by_size[size_class(bytes)].sides[s];
    e.last[e.samples % e.last.size()] = seconds;
    ++e.samples;
  }

  /// What the model says about a task of `bytes`: the expected body time on each side
  /// (negative: not calibrated yet).
  struct outlook {
    std::array<double, 2> seconds{-1.0, -1.0};
  };
  /// `peek`, counting a decision for data of `bytes`.
  [[nodiscard]] outlook look(std::size_t bytes) {
    outlook o = peek(bytes);
    std::lock_guard lock(m_mutex);
    ++m_by_size[size_class(bytes)].decisions;
    return o;
  }

  /// Whether this decision for data of `bytes` re-checks the slower side, `slowdown` times
  /// slower than the chosen one: `recheck_every * slowdown` decisions for that size after its
  /// last re-check (at least `recheck_every`).
  [[nodiscard]] bool recheck_due(std::size_t bytes, double slowdown) {
    std::lock_guard lock(m_mutex);
    size_entry& e = m_by_size[size_class(bytes)];
    const double every = static_cast<double>(recheck_every) * std::max(1.0, slowdown);
    if (static_cast<double>(e.decisions - e.rechecked_at) < every) return false;
    e.rechecked_at = e.decisions;
    return true;
  }

  /// Whether `side`'s estimate for data of `bytes` rests on one run: a host that its first run
  /// found far slower (`decisive_ratio`). That run may have been slowed (a core taken away for
  /// a moment), so `choose_side` re-checks it rarely even where it could not win.
  [[nodiscard]] bool rests_on_one_run(std::size_t bytes, task_side side) {
    std::lock_guard lock(m_mutex);
    return m_by_size[size_class(bytes)].sides[static_cast<std::size_t>(side)].samples == 1;
  }

  /// `look` without counting a decision (what a task forced on one side will likely take).
  [[nodiscard]] outlook peek(std::size_t bytes) { return medians(bytes, true); }

  /// What the runs so far say, measured or not: the median of each side that ran (negative:
  /// none did).
  [[nodiscard]] outlook known(std::size_t bytes) { return medians(bytes, false); }

  /// A side to try for calibration with data of `bytes`, the decision counted for it; none when
  /// no side may take one more try now. A side not measured yet may: up to `calibration_runs`
  /// decisions for it, but while its first run has not come back, no second one (a burst of
  /// ready tasks would otherwise send several to a side that may be 1000x slower before any
  /// came back); nor the host a second one before the device's first run is back (which may
  /// make the host's one run enough). Of two such sides the one with fewer runs, the device on
  /// a tie.
  [[nodiscard]] std::optional<task_side> calibration_side(std::size_t bytes) {
    std::lock_guard lock(m_mutex);
    auto& e = m_by_size[size_class(bytes)].sides;
    constexpr auto host = static_cast<std::size_t>(task_side::host), device = 1 - host;
    std::array<bool, 2> open{};
    for (std::size_t s = 0; s < 2; ++s)
      open[s] = !measured(e, s) && std::max(e[s].samples, e[s].tried) < calibration_runs &&
                !(e[s].samples == 0 && e[s].tried > 0);
    if (e[host].samples > 0 && e[device].samples == 0) open[host] = false;
    if (!open[0] && !open[1]) return std::nullopt;
    task_side side = open[0] ? task_side::host : task_side::device;
    if (open[0] && open[1] && std::max(e[0].samples, e[0].tried) >= std::max(e[1].samples, e[1].tried))
      side = task_side::device;
    ++e[static_cast<std::size_t>(side)].tried;
    return side;
  }

  /// A calibration try on `side` (calibration_side) whose task never ran (skipped after an
  /// error): the side may be tried again.
  void abandon_try(task_side side, std::size_t bytes) {
    std::lock_guard lock(m_mutex);
    estimate& e = m_by_size[size_class(bytes)].sides[static_cast<std::size_t>(side)];
    if (e.tried > 0) --e.tried;
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
  // The last runs of one side: their median is the estimate (the lower of the middle two for
  // an even count), so that one slow run (a core taken away for a moment, a first run paying a
  // start) does not send the next tasks to the other side.
  struct estimate {
    std::array<double, 5> last{};
    std::uint64_t samples = 0;
    std::uint64_t tried = 0;  ///< decisions for this side during calibration
    [[nodiscard]] double median() const {
      const std::size_t n = std::min<std::uint64_t>(samples, last.size());
      if (n == 0) return 0;
      std::array<double, 5> sorted = last;
      for (std::size_t i = 1; i < n; ++i)  // insertion sort of at most 5
        for (std::size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; --j) std::swap(sorted[j - 1], sorted[j]);
      return sorted[(n - 1) / 2];
    }
  };
  // Whether side `s` has runs enough: `calibration_runs`; or, for the host, one run that took
  // decisive_ratio times the device's. (Not the other way round: a device's first runs may pay
  // its start, a module loaded or a library's handle made, and one such run must not keep it
  // from the tasks it is faster at.)
  static bool measured(const std::array<estimate, 2>& e, std::size_t s) {
    if (e[s].samples >= calibration_runs) return true;
    constexpr auto host = static_cast<std::size_t>(task_side::host), device = 1 - host;
    return s == host && e[host].samples > 0 && e[device].samples > 0 &&
           e[host].median() >= decisive_ratio * e[device].median();
  }

  // The median of each side (negative where it has not run, or with `measured_only`, where it
  // is not measured yet).
  outlook medians(std::size_t bytes, bool measured_only) {
    std::lock_guard lock(m_mutex);
    outlook o;
    const auto& e = m_by_size[size_class(bytes)].sides;
    for (std::size_t s = 0; s < 2; ++s)
      if (measured_only ? measured(e, s) : e[s].samples > 0) o.seconds[s] = e[s].median();
    return o;
  }

  std::string m_label;
  std::mutex m_mutex;
  // One data size's runs of both sides, and its decisions (for the re-checks).
  struct size_entry {
    std::array<estimate, 2> sides;
    std::uint64_t decisions = 0, rechecked_at = 0;
  };
  std::map<int, size_entry> m_by_size;
  std::array<std::atomic<std::uint64_t>, 2> m_runs{};
  std::array<std::atomic<std::int64_t>, 2> m_nanoseconds{};
};

/// Where one ready task runs, and whether that is a calibration try (label_record::abandon_try
/// takes it back if the task never runs).
struct placement_choice {
  task_side side = task_side::device;
  bool trying = false;
};

/// The choice for one ready task: `busy[s]` is the work queued or running on side `s` per
/// worker (seconds), `move[s]` the time to move the task's data there. While a side is not
/// measured it is tried (label_record::calibration_side); when it may not be tried now, the
/// runs so far decide as the model would once both sides have run, and the device takes the
/// task while one has not (its first run is out: the tasks wait for it there).
inline placement_choice choose_side(label_record& label, std::size_t bytes, const std::array<double, 2>& busy,
                                    const std::array<double, 2>& move) {
  label_record::outlook o = label.look(bytes);
  const bool calibrated = o.seconds[0] >= 0 && o.seconds[1] >= 0;
  if (!calibrated) {
    if (const auto side = label.calibration_side(bytes)) return {*side, true};
    o = label.known(bytes);
    if (o.seconds[0] < 0 || o.seconds[1] < 0) return {task_side::device};
  }
  std::array<double, 2> finish{};
  for (std::size_t s = 0; s < 2; ++s) finish[s] = busy[s] + move[s] + o.seconds[s];
  const task_side best = finish[0] <= finish[1] ? task_side::host : task_side::device;
  const auto b = static_cast<std::size_t>(best), other = 1 - b;
  // The other side once in a while, where a changed cost could make it the faster one, or where
  // one run alone made it the slower (else one slowed host run would keep the host from this
  // label for good; a second run that confirms it ends those re-checks).
  if (!calibrated) return {best};
  const bool could_win =
      busy[other] + move[other] + o.seconds[other] / label_record::recheck_headroom < finish[b] ||
      label.rests_on_one_run(bytes, static_cast<task_side>(other));
  if (!could_win) return {best};
  if (!label.recheck_due(bytes, o.seconds[b] > 0 ? o.seconds[other] / o.seconds[b] : 1.0)) return {best};
  return {best == task_side::host ? task_side::device : task_side::host};
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_PLACEMENT_HPP

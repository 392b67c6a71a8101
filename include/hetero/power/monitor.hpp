/// @file
/// `hetero::power::monitor`: the observer that records when this rank computes and when it
/// waits, in fixed frames, from hetero's own blocking calls, the
/// optional PMPI layer (`hetero/power/pmpi.hpp`) and the user's `hetero::wait_scope`.
#ifndef HETERO_POWER_MONITOR_HPP
#define HETERO_POWER_MONITOR_HPP

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/power/activity_timeline.hpp"
#include "hetero/power/detail/thread_slots.hpp"

namespace hetero::power {

/// Which threads' waits count.
enum class tracked_threads {
  reporting,  ///< every thread that reports a wait (the rank waits when all of them wait)
  first       ///< only the first thread that reports (typically the thread calling MPI)
};

/// How a monitor records.
struct monitor_options {
  double frame_seconds = 0.004;          ///< frame length (4 ms: short next to a phase); must be positive
  std::size_t frames_kept = 4096;        ///< finished frames (and phase marks) kept: 16 s at 4 ms
  std::size_t events_per_thread = 8192;  ///< ring capacity per thread between two `update()`s
  std::size_t max_threads = 64;          ///< threads tracked at once; more are not seen
  tracked_threads threads = tracked_threads::reporting;  ///< whose waits count
  double frequency_ghz = 1.0;                            ///< the frequency in effect until `set_frequency`
};

/// Records this rank's active and waiting time. Writers (any thread that waits) are lock-free:
/// each tracked thread appends its transitions to its own ring; `update()` (one reader at a
/// time, e.g. the controller's helper thread, every frame) merges the rings into frames of
/// active time and work (frequency x active: the amount of computation done), and phase marks.
///
/// Install it as one of hetero's observers so that hetero's blocking calls report to it; mark waits by
/// hand with `hetero::wait_scope(hetero::wait_kind::user, "label")` and phases with
/// `hetero::mark_phase()`. Keep the monitor alive while any thread may still be inside a wait
/// scope that began while it was installed.
/// <!-- snippet: fragment
/// int steps = 10;
/// auto compute = [] {};
/// auto exchange = [] {};
/// -->
/// @code
/// hetero::power::monitor m;
/// m.install();
/// for (int step = 0; step < steps; ++step) {
///   compute();
///   { hetero::wait_scope w(hetero::wait_kind::user, "exchange"); exchange(); }
///   hetero::mark_phase();
/// }
/// m.update();
/// double busy = m.active_seconds() / m.seconds();
/// @endcode
class monitor final : public observer {
 public:
  /// A monitor with its clock starting now; throws `hetero::invalid_argument` for a frame length
  /// that is not positive, or no frames or threads kept.
  explicit monitor(monitor_options options = {})
      : m_options(options),
        m_shared(std::make_shared<detail::thread_slots>(options.max_threads, options.events_per_thread,
                                                        options.threads == tracked_threads::first)),
        m_timeline(options.frame_seconds, options.frames_kept, options.frequency_ghz) {}

  ~monitor() override {
    uninstall();
    m_shared->close();  // the threads' entries bound to its slots may serve other monitors now
  }
  monitor(const monitor&) = delete;
  monitor& operator=(const monitor&) = delete;

  /// Registers this monitor as one of hetero's observers (`hetero::add_observer`, not owned):
  /// other observers (a tracer, another monitor) keep listening beside it. Installing twice
  /// has no effect.
  void install() { add_observer(static_cast<observer&>(*this)); }
  /// Unregisters this monitor, if it is registered.
  void uninstall() noexcept {
    try {
      remove_observer(*this);
    } catch (...) {  // only a failed lock, which leaves it registered: nothing better to do here
    }
  }
  /// Whether this monitor is registered now.
  [[nodiscard]] bool installed() const { return has_observer(*this); }

  /// Waits and phases only: loops are not this monitor's business.
  [[nodiscard]] observer_events events() const noexcept override {
    return observer_events::waits | observer_events::phases;
  }

  /// The calling thread starts waiting (nested waits count once).
  void wait_begin(wait_kind kind, std::string_view) noexcept override {
    if (detail::thread_slot* slot = m_shared->slot_of_this_thread(m_shared)) {
      if (slot->depth++ == 0)
        m_shared->record(*slot, detail::activity_event_type::wait_begin, static_cast<std::uint32_t>(kind));
    }
  }
  /// The calling thread stops waiting.
  void wait_end(wait_kind, std::string_view) noexcept override {
    if (detail::thread_slot* slot = m_shared->slot_of_this_thread(m_shared)) {
      if (slot->depth > 0 && --slot->depth == 0) m_shared->record(*slot, detail::activity_event_type::wait_end, 0);
    }
  }
  /// The application ends a phase (one call per time step, from one thread).
  void phase_end() noexcept override {
    if (detail::thread_slot* slot = m_shared->slot_of_this_thread(m_shared))
      m_shared->record(*slot, detail::activity_event_type::phase_mark, 0);
  }

  /// The rank runs at `ghz` from now on (actuators' owners call it when they apply a setting).
  void set_frequency(double ghz) {
    HETERO_EXPECTS(ghz > 0, "frequency ", ghz, " GHz; must be positive");
    std::lock_guard lock(m_frequency_mutex);
    m_frequency_changes.emplace_back(m_shared->seconds_now(), ghz);
  }

  /// Counts frames from `steady_seconds` (a `hetero::wall_seconds()` value) on, e.g. a moment
  /// agreed by all ranks, so that their frames line up.
  void align_frames(double steady_seconds) {
    std::lock_guard lock(m_reader_mutex);
    m_timeline.set_origin(steady_seconds - m_shared->epoch_seconds());
  }

  /// Merges what the threads recorded up to one frame ago (later transitions may still be on
  /// their way) into the frames and marks. One reader at a time; cheap: call it every frame.
  void update() { update_until(m_shared->seconds_now() - m_options.frame_seconds); }

  /// `update()` up to `seconds` on the monitor's clock (a controller's start, tests, and a final
  /// flush).
  void update_until(double seconds) {
    std::lock_guard lock(m_reader_mutex);
    std::vector<std::pair<double, double>> frequencies;
    {
      std::lock_guard frequency_lock(m_frequency_mutex);
      auto split = std::partition_point(m_frequency_changes.begin(), m_frequency_changes.end(),
                                        [&](const auto& c) { return c.first <= seconds; });
      frequencies.assign(m_frequency_changes.begin(), split);
      m_frequency_changes.erase(m_frequency_changes.begin(), split);
    }
    m_shared->drain(seconds, frequencies, m_timeline);
  }

  /// Seconds since the monitor was made, on its clock.
  [[nodiscard]] double seconds() const noexcept { return m_shared->seconds_now(); }
  /// The frame length.
  [[nodiscard]] double frame_seconds() const noexcept { return m_options.frame_seconds; }
  /// Finished frames (and phase marks) kept (`monitor_options::frames_kept`).
  [[nodiscard]] std::size_t frames_kept() const noexcept { return m_options.frames_kept; }

  /// Reads the merged activity under the reader's lock: `fn(const activity_timeline&)`.
  template <class Fn>
  decltype(auto) read(Fn&& fn) const {
    std::lock_guard lock(m_reader_mutex);
    return std::forward<Fn>(fn)(std::as_const(m_timeline));
  }
  /// Finished frames with ids in [first, finished_frames()) that are still kept.
  [[nodiscard]] std::vector<frame> frames_since(std::int64_t first) const {
    return read([&](const activity_timeline& t) {
      std::vector<frame> out;
      for (std::int64_t id = std::max(first, t.first_kept_frame()); id < t.finished_frames(); ++id)
        out.push_back(t.frame_at(id));
      return out;
    });
  }
  /// Frames finished so far (ids 0 .. n - 1).
  [[nodiscard]] std::int64_t finished_frames() const {
    return read([](const activity_timeline& t) { return t.finished_frames(); });
  }
  /// Kept phase marks with index >= first.
  [[nodiscard]] std::vector<phase_mark> marks_since(std::uint64_t first) const {
    return read([&](const activity_timeline& t) {
      std::vector<phase_mark> out;
      for (const auto& m : t.marks())
        if (m.index >= first) out.push_back(m);
      return out;
    });
  }
  /// Cumulative active seconds (as of the last update).
  [[nodiscard]] double active_seconds() const {
    return read([](const activity_timeline& t) { return t.active_seconds(); });
  }
  /// Cumulative work in GHz * s (as of the last update).
  [[nodiscard]] double work_ghz_seconds() const {
    return read([](const activity_timeline& t) { return t.work_ghz_seconds(); });
  }
  /// Seconds accounted by the last update.
  [[nodiscard]] double accounted_seconds() const {
    return read([](const activity_timeline& t) { return t.now(); });
  }
  /// Transitions lost because a thread's ring was full (update() was not called often enough).
  [[nodiscard]] std::uint64_t lost_events() const noexcept { return m_shared->lost_events(); }
  /// Threads that reported while all `max_threads` slots were taken (not tracked).
  [[nodiscard]] std::uint64_t untracked_threads() const noexcept { return m_shared->untracked_threads(); }

  /// The calling thread's waits are not recorded by any monitor from now on (or again, with
  /// false): for helper threads such as the controller's, whose MPI calls are not the
  /// application's waits.
  static void ignore_calling_thread(bool ignore = true) noexcept { detail::t_thread_ignored = ignore; }

 private:
  monitor_options m_options;
  std::shared_ptr<detail::thread_slots> m_shared;
  mutable std::mutex m_reader_mutex;
  activity_timeline m_timeline;
  std::mutex m_frequency_mutex;
  std::vector<std::pair<double, double>> m_frequency_changes;  // (seconds, GHz), in time order
};

}  // namespace hetero::power

#endif  // HETERO_POWER_MONITOR_HPP

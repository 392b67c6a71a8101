/// @file
/// `hetero::power::controller`: the power-shifting control loop. Every phase each group's
/// leader gathers its ranks' criticalities, runs Algorithm 1 and sends each rank its setting,
/// which the rank's actuator applies; all of it on a helper thread, with non-blocking
/// collectives polled once per frame, off the application's critical path.
#ifndef HETERO_POWER_CONTROLLER_HPP
#define HETERO_POWER_CONTROLLER_HPP

#include <mpi.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/comm_ref.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/power/actuators/actuator.hpp"
#include "hetero/power/allocator.hpp"
#include "hetero/power/detail/control_channel.hpp"
#include "hetero/power/monitor.hpp"
#include "hetero/power/phase_detection.hpp"

namespace hetero::power {

/// What the controller does with the budget.
enum class policy {
  even,    ///< every rank at the highest frequency the budget allows all of them ("policy off")
  dynamic  ///< Algorithm 1 on the last phase's criticalities, every phase
};

/// Where phases come from.
enum class phase_source {
  automatic,  ///< the application's phase marks if every rank made some while learning, else detected
  markers,    ///< `hetero::mark_phase()` (one call per time step), from the start
  detected    ///< the period of the active-time series found while learning
};

/// How a controller runs. Must be the same on every rank.
struct controller_options {
  double budget_watts = 0.0;      ///< for all ranks of the communicator together; >= N * P(f_min)
  policy mode = policy::dynamic;  ///< dynamic shifting, or the even setting ("policy off")
  int group_size = 0;  ///< ranks controlled together (e.g. 8, to spread the leaders' work); 0: all in one group
  phase_source phases = phase_source::automatic;  ///< marks, detection, or marks when all ranks make them
  /// Frames run at the even setting while the phase length is learnt online (250: 1 s at 4 ms
  /// frames). The longest detectable period is half of it.
  std::size_t learning_frames = 250;
  phase_detection_options detection = {};  ///< how the period is picked (min_frames: shortest phase)
  std::size_t fallback_phase_frames = 25;  ///< the phase length when no period is found
  /// Frames between two wake-ups of the helper thread; 0: every frame under the dynamic policy
  /// (phase ends are seen within a frame), every 16 frames under the even one (it only drains
  /// the monitor's rings, and waking less often costs the application less).
  std::size_t tick_frames = 0;
};

/// What a controller knows now.
struct controller_status {
  bool planned = false;          ///< phases are known (learning done, or markers from the start)
  bool markers = false;          ///< phases come from phase marks (else from frames)
  std::size_t phase_frames = 0;  ///< the phase length in frames, when detected
  double period_frames = 0.0;    ///< the detected period (0: none found)
  std::uint64_t settings = 0;    ///< settings received from the leader
  power_setting setting = {};    ///< the setting in effect on this rank
  /// Phases never measured: they began before the oldest frame or mark the monitor keeps
  /// (`monitor_options::frames_kept`), the controller having fallen that far behind (marks
  /// made faster than the group exchanges); it went on from the oldest phase still kept.
  std::uint64_t skipped_phases = 0;
};

/// Runs the power-shifting loop for the ranks of `comm` (collective construction and `stop()`):
/// a hetero handle (`hetero::communicator`, `process_grid`, ...; its wait timeout, if it has
/// one, bounds the controller's waits) or an `MPI_Comm`. The controller makes communicators of
/// its own from it at construction, so the handle need only live until then.
/// The monitor must be fed (installed as hetero's observer, or the PMPI layer, or both) and
/// keep running while the controller does; the actuator's table is the one allocated from. The
/// dynamic policy needs MPI_THREAD_MULTIPLE (hetero::runtime asks for it).
/// <!-- snippet: fragment
/// auto run_time_steps = [] {};
/// -->
/// @code
/// hetero::power::monitor m;
/// m.install();
/// hetero::power::emulated_actuator cpu(hetero::power::frequency_table({1.2, 1.6, 2.0}, {73.0, 83.0, 95.0}));
/// const hetero::communicator world;
/// hetero::power::controller control(m, cpu, world, {.budget_watts = 2 * 83.0});  // or MPI_COMM_WORLD
/// run_time_steps();  // hetero::mark_phase() once per step, optionally
/// control.stop();
/// @endcode
class controller {
 public:
  /// Starts the loop (collective over `comm`); throws `hetero::invalid_argument` for a budget below
  /// N * P(f_min) or bad options, `hetero::runtime_error` without MPI_THREAD_MULTIPLE (dynamic).
  controller(monitor& activity, actuator& device, comm_ref comm, controller_options options)
      : m_monitor(activity), m_actuator(device), m_table(device.table()), m_options(options) {
    int ranks = 0;
    HETERO_MPI_CHECK(MPI_Comm_size, comm.get(), &ranks);
    m_table.check_budget(m_options.budget_watts, static_cast<std::size_t>(ranks));
    HETERO_EXPECTS(m_options.group_size >= 0, "controller_options::group_size is ", m_options.group_size,
                   "; allowed: 0 (one group) or a positive number of ranks");
    HETERO_EXPECTS(m_options.phases == phase_source::markers || m_options.learning_frames >= 16,
                   "controller_options::learning_frames is ", m_options.learning_frames, "; need at least 16");
    HETERO_EXPECTS(m_options.fallback_phase_frames >= 1, "controller_options::fallback_phase_frames is 0");
    check_frame_counts();
    check_detection_options(m_options.detection);  // used on the leader's helper thread, where it could not raise
    if (m_options.mode == policy::dynamic)
      ::hetero::detail::require_thread_multiple("the dynamic power policy calls MPI from a helper thread and");
    m_channel = std::make_unique<detail::control_channel>(comm, m_options.group_size);
    m_group_budget = m_options.budget_watts * m_channel->size() / ranks;
    // Every rank starts at the even setting (the phase length is learnt there) and counts
    // frames from a moment the group agrees on.
    m_channel->synchronize();
    m_origin = std::chrono::steady_clock::now();
    m_monitor.align_frames(std::chrono::duration<double>(m_origin.time_since_epoch()).count());
    // Marks made before now (a warm-up's) are not this controller's phases: all of them merged,
    // not only those older than a frame (update()), or the last frame's would become phases 0,
    // 1, ... here and pair with the other ranks' later phases for the whole run.
    m_monitor.update_until(m_monitor.seconds());
    m_first_mark = m_monitor.read([](const activity_timeline& t) { return t.mark_count(); });
    const std::size_t even = m_table.even_step(m_options.budget_watts, static_cast<std::size_t>(ranks));
    m_history.push_back({even, m_table.frequency(even), m_options.budget_watts / ranks});
    apply(m_history.back());
    if (m_options.mode == policy::dynamic && m_options.phases == phase_source::markers) plan(true, 0, 0, 0.0);
    m_helper = std::thread([this] { run(); });
  }

  /// Stops the loop (collective: call it on every rank of the communicator, as the destructor
  /// does). Rethrows the first error the helper thread met (an actuator's, say).
  void stop() {
    if (m_stopped) return;
    m_stopped = true;
    {
      std::lock_guard lock(m_wake_mutex);
      m_stop = true;
    }
    m_wake.notify_all();
    if (m_helper.joinable()) m_helper.join();
    if (m_options.mode == policy::dynamic && !m_channel_broken) {
      try {
        drain();
      } catch (const deadlock_error&) {
        // A late rank may still complete the abandoned exchanges, writing their buffers: the
        // channel (its buffers, requests and communicators) is left to MPI.
        ::hetero::detail::keep_for_mpi(std::move(m_channel));
        throw;
      }
    }
    if (m_channel_broken)  // a control step failed with its exchanges posted: left to MPI as above
      ::hetero::detail::keep_for_mpi(std::move(m_channel));
    m_channel.reset();
    if (m_error) std::rethrow_exception(m_error);
  }

  /// The same on every rank of MPI_COMM_WORLD.
  controller(monitor& activity, actuator& device, controller_options options)
      : controller(activity, device, MPI_COMM_WORLD, options) {}

  /// The communicator first, as in 0.1.
  [[deprecated(
      "hetero: the communicator comes after what the object works with and before the options: "
      "controller(monitor, actuator, comm, options); docs/conventions.md")]] controller(comm_ref comm,
                                                                                        monitor& activity,
                                                                                        actuator& device,
                                                                                        controller_options options)
      : controller(activity, device, comm, options) {}

  ~controller() {
    try {
      stop();
    } catch (...) {  // reported by an explicit stop(); a destructor must not throw
    }
  }
  controller(const controller&) = delete;
  controller& operator=(const controller&) = delete;

  /// A copy of what the controller knows now.
  [[nodiscard]] controller_status status() const {
    std::lock_guard lock(m_status_mutex);
    return m_status;
  }
  /// This rank's setting of every round, oldest first: the even setting, then each one received
  /// from the leader (entry k of every rank of a group comes from the same allocation).
  [[nodiscard]] std::vector<power_setting> history() const {
    std::lock_guard lock(m_status_mutex);
    return m_history;
  }

 private:
  static constexpr int plan_values = 4;  // markers?, phase frames, first mark, period

  // Frames between two wake-ups of the helper thread (controller_options::tick_frames).
  [[nodiscard]] std::size_t wake_up_frames() const noexcept {
    if (m_options.tick_frames > 0) return m_options.tick_frames;
    return m_options.mode == policy::dynamic ? 1 : 16;
  }

  // The longest phase (or learning series) that is still whole in the monitor when the helper
  // reads it under the dynamic policy: frames_kept less one wake-up (tick_frames <= frames_kept,
  // checked first).
  [[nodiscard]] std::size_t longest_phase() const noexcept { return m_monitor.frames_kept() - wake_up_frames(); }

  // What the monitor keeps bounds the frames between two wake-ups (else frames are dropped
  // before they are read) and, where phases are learnt from frames, the learning series and the
  // phase length (each must still be kept when it is read). Written so that no sum wraps.
  void check_frame_counts() const {
    const std::size_t kept = m_monitor.frames_kept();
    HETERO_EXPECTS(m_options.tick_frames <= kept, "controller_options::tick_frames is ", m_options.tick_frames,
                   "; allowed: 0 (automatic) to ", kept,
                   " (monitor_options::frames_kept: the frames finished between two wake-ups must still be kept)");
    if (m_options.mode != policy::dynamic || m_options.phases == phase_source::markers) return;
    const std::size_t tick = wake_up_frames();
    const std::size_t most = longest_phase();
    const auto check = [&](const char* name, std::size_t value, std::size_t least) {
      HETERO_EXPECTS(value <= most, name, " is ", value, "; allowed: ", least, " to ", most,
                     " (monitor_options::frames_kept, ", kept, ", less one wake-up of ", tick,
                     " frames: what is measured must still be kept when it is read); raise frames_kept for more");
    };
    check("controller_options::learning_frames", m_options.learning_frames, 16);
    check("controller_options::fallback_phase_frames", m_options.fallback_phase_frames, 1);
    check("controller_options::detection.min_frames", m_options.detection.min_frames, 1);
  }

  void run() {
    monitor::ignore_calling_thread();  // its MPI calls are not the application's waits
    const std::size_t frames = wake_up_frames();
    const auto tick_period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(m_monitor.frame_seconds() * static_cast<double>(frames)));
    auto next = m_origin;
    for (;;) {
      next += tick_period;
      if (const auto now = std::chrono::steady_clock::now(); next < now - tick_period) next = now;
      {
        std::unique_lock lock(m_wake_mutex);
        if (m_wake.wait_until(lock, next, [this] { return m_stop; })) return;  // stop() woke us
      }
      try {
        tick();
      } catch (...) {
        remember(std::current_exception());
        m_channel_broken = true;  // an MPI failure: the exchange sequence can no longer be trusted
        return;
      }
    }
  }

  void tick() {
    if (m_raise) {  // a raise waits one frame (see receive)
      apply(*m_raise);
      m_raise.reset();
    }
    m_monitor.update();
    if (m_options.mode == policy::even) return;
    if (!m_learning_posted && m_options.phases != phase_source::markers &&
        m_monitor.finished_frames() >= static_cast<std::int64_t>(m_options.learning_frames)) {
      m_channel->post(learning_message(), plan_values, true);
      m_learning_posted = true;
    }
    if (m_channel->leader())
      while (detail::exchange* e = m_channel->next_to_answer()) answer(*e);
    std::vector<double> values;
    while (m_channel->next_answer(values)) receive(values);
    if (m_status.planned) skip_lost_phases();
    while (m_status.planned && m_channel->pending() < max_pending) {
      const std::optional<double> c = criticality(m_next_phase);
      if (!c) break;
      m_channel->post({*c}, 2, false);
      ++m_next_phase;
    }
  }

  // Phase marks seen since the start, then the autocovariance of the learning frames.
  // The longest lag of the learning series' autocovariance (detection.max_lag, or half the series).
  [[nodiscard]] std::size_t learning_lags() const noexcept {
    return longest_lag(m_options.learning_frames, m_options.detection);
  }

  std::vector<double> learning_message() const {
    const auto frames = m_monitor.frames_since(0);
    std::vector<double> series;
    for (std::size_t i = 0; i < m_options.learning_frames && i < frames.size(); ++i)
      series.push_back(frames[i].active_seconds);
    series.resize(m_options.learning_frames, 0.0);
    const auto marks = m_monitor.read([](const activity_timeline& t) { return t.mark_count(); });
    std::vector<double> message = {static_cast<double>(marks - m_first_mark)};
    const auto c = autocovariance(series, learning_lags());
    message.insert(message.end(), c.begin(), c.end());
    return message;
  }

  // Leader: the plan from everybody's learning message, or the allocation from their
  // criticalities.
  void answer(detail::exchange& e) {
    const auto n = static_cast<std::size_t>(m_channel->size());
    const std::size_t each = e.up.size();
    if (e.broadcast) {
      // The group's autocovariance: ranks whose activity varies most weigh most, and a rank
      // that never waits (on the critical path throughout) adds nothing but noise-free zeros.
      double fewest_marks = e.gathered[0], most_marks = 0;
      std::vector<double> c(each - 1, 0.0);
      for (std::size_t rank = 0; rank < n; ++rank) {
        fewest_marks = std::min(fewest_marks, e.gathered[rank * each]);
        most_marks = std::max(most_marks, e.gathered[rank * each]);
        for (std::size_t lag = 0; lag + 1 < each; ++lag) c[lag] += e.gathered[rank * each + 1 + lag];
      }
      const bool markers = m_options.phases == phase_source::automatic && fewest_marks >= 2;
      const phase_estimate found =
          detect_phase(normalized(std::move(c), m_monitor.frame_seconds()), m_options.detection);
      // A phase longer than the monitor keeps could never be measured whole (every one skipped):
      // the fallback then, which is within it (check_frame_counts).
      const bool usable = found.found && found.frames <= longest_phase();
      const double frames = usable ? static_cast<double>(found.frames) : m_options.fallback_phase_frames;
      m_channel->answer(e, {markers ? 1.0 : 0.0, frames, most_marks, found.period_frames});
      return;
    }
    std::vector<double> criticality(e.gathered.begin(), e.gathered.end());
    const allocation a = allocate(criticality, m_table, m_group_budget);
    std::vector<double> settings;
    for (const auto& s : a.settings) settings.insert(settings.end(), {static_cast<double>(s.step), s.power_watts});
    m_channel->answer(e, std::move(settings));
  }

  void receive(const std::vector<double>& values) {
    if (!m_status.planned) {
      plan(values[0] != 0.0, static_cast<std::size_t>(values[1]), static_cast<std::uint64_t>(values[2]),
           values[3]);
      return;
    }
    const auto step = static_cast<std::size_t>(values[0]);
    const power_setting setting = {step, m_table.frequency(step), values[1]};
    {
      std::lock_guard lock(m_status_mutex);
      ++m_status.settings;
      m_history.push_back(setting);
    }
    // The ranks of a group receive a round's settings within about a frame of each other. Those
    // that lower their power do so at once; those that raise it wait one frame, so that the sum
    // stays within the budget while the round takes effect.
    // A raise is more power as granted (what RAPL and NVML's power limits write), not only a
    // higher step: the same step with a larger share of what is left raises too.
    if (step > m_status.setting.step || setting.power_watts > m_status.setting.power_watts) {
      m_raise = setting;
    } else {
      m_raise.reset();
      apply(setting);
    }
  }

  void plan(bool markers, std::size_t frames, std::uint64_t first_mark, double period) {
    std::lock_guard lock(m_status_mutex);
    m_status.planned = true;
    m_status.markers = markers;
    m_status.phase_frames = markers ? 0 : frames;
    m_status.period_frames = period;
    m_phase_first_mark = m_first_mark + first_mark;
  }

  // A phase whose start the monitor no longer keeps can never be measured: waiting for it
  // stopped the control for good. Go on from the oldest phase still kept, and count the others.
  // (The ranks' posts then pair different phases for a while: an allocation from stale data, as
  // it was anyway that far behind; the budget holds whatever the values.)
  void skip_lost_phases() {
    std::uint64_t oldest = 0;  // the oldest phase that can still be measured
    if (m_status.markers) {
      const std::uint64_t first_kept = m_monitor.read(
          [](const activity_timeline& t) { return t.marks().empty() ? t.mark_count() : t.marks().front().index; });
      if (first_kept > m_phase_first_mark) oldest = first_kept - m_phase_first_mark;
    } else {
      const auto start = static_cast<std::int64_t>(m_options.learning_frames);
      const auto length = static_cast<std::int64_t>(m_status.phase_frames);  // >= 1 once planned
      const std::int64_t first_kept =
          m_monitor.read([](const activity_timeline& t) { return t.first_kept_frame(); });
      if (first_kept > start) oldest = static_cast<std::uint64_t>((first_kept - start + length - 1) / length);
    }
    if (oldest <= m_next_phase) return;
    std::lock_guard lock(m_status_mutex);
    m_status.skipped_phases += oldest - m_next_phase;
    m_next_phase = oldest;
  }

  // The criticality of phase k (seconds of activity at f_min), once the phase is over.
  std::optional<double> criticality(std::uint64_t k) const {
    if (m_status.markers) {
      const auto marks = m_monitor.marks_since(m_phase_first_mark + k);
      if (marks.size() < 2 || marks[0].index != m_phase_first_mark + k) return std::nullopt;
      return (marks[1].work_ghz_seconds - marks[0].work_ghz_seconds) / m_table.min_frequency();
    }
    const auto length = static_cast<std::int64_t>(m_status.phase_frames);
    const auto first =
        static_cast<std::int64_t>(m_options.learning_frames) + static_cast<std::int64_t>(k) * length;
    if (m_monitor.finished_frames() < first + length) return std::nullopt;
    double work = 0;
    for (const frame& f : m_monitor.frames_since(first))
      if (f.id < first + length) work += f.work_ghz_seconds;
    return work / m_table.min_frequency();
  }

  void apply(const power_setting& setting) {
    {
      std::lock_guard lock(m_status_mutex);
      m_status.setting = setting;
    }
    if (m_actuator_failed) return;
    try {
      std::array<char, 32> label{'s', 'e', 't'};  // the region names the frequency when someone looks
      if (regions_observed()) std::snprintf(label.data(), label.size(), "set %.2f GHz", setting.frequency_ghz);
      const region applying("power", label.data());
      m_actuator.apply(setting);
      m_monitor.set_frequency(setting.frequency_ghz);
    } catch (...) {  // keep taking part in the exchanges (others wait for us); report at stop()
      m_actuator_failed = true;
      remember(std::current_exception());
    }
  }

  void remember(std::exception_ptr e) {
    std::lock_guard lock(m_status_mutex);
    if (!m_error) m_error = e;
  }

  // After the helper: every rank posts the same number of exchanges, the leader answers them
  // all, and every rank completes them, so no message is left in flight.
  void drain() {
    const std::size_t total = m_channel->agree_on_max(m_channel->posted());
    while (m_channel->posted() < total) {
      const bool learning = m_channel->posted() == 0 && m_options.phases != phase_source::markers;
      if (learning) {
        m_channel->post(std::vector<double>(learning_lags() + 2, 0.0), plan_values, true);
      } else {
        m_channel->post({0.0}, 2, false);
      }
    }
    if (m_channel->leader())
      while (detail::exchange* e = m_channel->next_to_answer(true)) answer(*e);
    std::vector<double> ignored;
    while (m_channel->next_answer(ignored, true)) {
    }
  }

  static constexpr std::size_t max_pending = 64;

  monitor& m_monitor;
  actuator& m_actuator;
  frequency_table m_table;
  controller_options m_options;
  std::unique_ptr<detail::control_channel> m_channel;
  double m_group_budget = 0.0;
  std::chrono::steady_clock::time_point m_origin;
  std::uint64_t m_first_mark = 0;        // marks made before the controller started
  std::uint64_t m_phase_first_mark = 0;  // the mark that starts phase 0
  std::uint64_t m_next_phase = 0;
  bool m_learning_posted = false;
  bool m_actuator_failed = false;
  bool m_channel_broken = false;
  bool m_stopped = false;
  std::mutex m_wake_mutex;  // with m_wake: the helper sleeps between ticks, stop() wakes it
  std::condition_variable m_wake;
  bool m_stop = false;
  std::thread m_helper;
  mutable std::mutex m_status_mutex;
  controller_status m_status;
  std::vector<power_setting> m_history;
  std::optional<power_setting> m_raise;  // a raise received, applied at the next tick
  std::exception_ptr m_error;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_CONTROLLER_HPP

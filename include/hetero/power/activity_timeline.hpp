/// @file
/// `hetero::power::activity_timeline`: turns one rank's wait transitions into fixed-length
/// frames of active time and work (frequency x active time), and its phase marks into
/// criticalities. The monitor feeds it from the threads' rings; a model can feed it simulated
/// transitions.
#ifndef HETERO_POWER_ACTIVITY_TIMELINE_HPP
#define HETERO_POWER_ACTIVITY_TIMELINE_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero::power {

/// The activity of a rank in one frame [origin + id * F, origin + (id + 1) * F).
struct frame {
  std::int64_t id = 0;            ///< frames since the timeline's origin
  double active_seconds = 0.0;    ///< time some tracked thread was not waiting
  double work_ghz_seconds = 0.0;  ///< integral of frequency x active, in GHz * s (gigacycles)
};

/// The end of one phase as marked by the application (`hetero::mark_phase()`), with the
/// rank's cumulative activity at that moment; the difference of two marks is a phase's.
struct phase_mark {
  std::uint64_t index = 0;        ///< marks since the timeline began (0, 1, ...)
  double seconds = 0.0;           ///< when, on the timeline's clock
  double active_seconds = 0.0;    ///< cumulative active time at the mark
  double work_ghz_seconds = 0.0;  ///< cumulative work at the mark
};

/// Accumulates a rank's activity from its threads' transitions. The rank is active while at
/// least one tracked thread is not waiting (or while no thread is tracked yet), waiting while
/// every tracked thread waits. Transitions must come in time order; an earlier one is taken as
/// happening at the latest time seen. Not thread-safe (the monitor serialises its reader).
class activity_timeline {
 public:
  /// Frames of `frame_seconds`, the last `frames_kept` of them (and of the marks) kept; the
  /// rank runs at `frequency_ghz` until told otherwise.
  activity_timeline(double frame_seconds, std::size_t frames_kept, double frequency_ghz)
      : m_frame_seconds(frame_seconds), m_frequency(frequency_ghz) {
    HETERO_EXPECTS(std::isfinite(frame_seconds) && frame_seconds > 0, "frame length is ", frame_seconds,
                   " s; it must be positive (e.g. 0.004 s)");
    HETERO_EXPECTS(frames_kept >= 1, "frames kept is 0; keep at least one frame");
    HETERO_EXPECTS(frequency_ghz > 0, "frequency ", frequency_ghz, " GHz; must be positive");
    m_ring.resize(frames_kept);
  }

  /// Counts frames from `seconds` on (clamped to the time already accounted); frames before it
  /// are dropped. Marks and totals stay.
  void set_origin(double seconds) {
    m_origin = std::max(seconds, m_now);
    m_frame = 0;
    m_frame_active = m_frame_work = 0.0;
  }

  /// Thread `thread` joins the tracked threads at `seconds`.
  void attach(std::size_t thread, double seconds) {
    advance(seconds);
    auto& t = state_of(thread);
    if (t.attached) return;
    t.attached = true;
    t.waiting = false;
    ++m_attached;
    ++m_active_threads;
  }
  /// Thread `thread` leaves the tracked threads at `seconds`.
  void detach(std::size_t thread, double seconds) {
    advance(seconds);
    auto& t = state_of(thread);
    if (!t.attached) return;
    t.attached = false;
    --m_attached;
    if (!t.waiting) --m_active_threads;
    t.waiting = false;
  }
  /// Thread `thread` starts waiting at `seconds`.
  void begin_wait(std::size_t thread, double seconds) {
    advance(seconds);
    auto& t = state_of(thread);
    if (!t.attached) attach(thread, seconds);
    if (t.waiting) return;
    t.waiting = true;
    --m_active_threads;
  }
  /// Thread `thread` stops waiting at `seconds`.
  void end_wait(std::size_t thread, double seconds) {
    advance(seconds);
    auto& t = state_of(thread);
    if (!t.attached || !t.waiting) return;
    t.waiting = false;
    ++m_active_threads;
  }
  /// The application marks the end of a phase at `seconds`.
  void mark_phase(double seconds) {
    advance(seconds);
    m_marks.push_back({m_mark_count++, m_now, m_active, m_work});
    if (m_marks.size() > m_ring.size()) m_marks.pop_front();
  }
  /// The rank runs at `ghz` from `seconds` on.
  void set_frequency(double seconds, double ghz) {
    advance(seconds);
    m_frequency = ghz;
  }

  /// Accounts the time up to `seconds` in the current state, finishing the frames it passes.
  void advance(double seconds) {
    while (m_now < seconds) {
      if (m_now < m_origin) {  // before the first frame: totals only
        account(std::min(seconds, m_origin) - m_now, false);
        m_now = std::min(seconds, m_origin);
        continue;
      }
      const double frame_end = m_origin + static_cast<double>(m_frame + 1) * m_frame_seconds;
      const double until = std::min(seconds, frame_end);
      account(until - m_now, true);
      m_now = until;
      if (m_now < frame_end) break;
      finish_frame();
      skip_whole_frames(seconds);
    }
  }

  /// Whether the rank is active now.
  [[nodiscard]] bool active() const noexcept { return m_attached == 0 || m_active_threads > 0; }
  /// The time accounted up to.
  [[nodiscard]] double now() const noexcept { return m_now; }
  /// The frame length in seconds.
  [[nodiscard]] double frame_seconds() const noexcept { return m_frame_seconds; }
  /// The frequency in effect.
  [[nodiscard]] double frequency() const noexcept { return m_frequency; }
  /// Cumulative active seconds since the timeline began.
  [[nodiscard]] double active_seconds() const noexcept { return m_active; }
  /// Cumulative work (GHz * s) since the timeline began.
  [[nodiscard]] double work_ghz_seconds() const noexcept { return m_work; }
  /// Finished frames since the origin: frames 0 .. finished_frames() - 1 (the last ones kept).
  [[nodiscard]] std::int64_t finished_frames() const noexcept { return m_frame; }
  /// The oldest finished frame still kept.
  [[nodiscard]] std::int64_t first_kept_frame() const noexcept {
    return std::max<std::int64_t>(0, m_frame - static_cast<std::int64_t>(m_ring.size()));
  }
  /// Finished frame `id` (must be kept: first_kept_frame() <= id < finished_frames()).
  [[nodiscard]] const frame& frame_at(std::int64_t id) const {
    HETERO_EXPECTS(id >= first_kept_frame() && id < m_frame, "frame ", id, " is not kept; frames ",
                   first_kept_frame(), " to ", m_frame - 1, " are");
    return m_ring[static_cast<std::size_t>(id) % m_ring.size()];
  }
  /// Marks made since the timeline began.
  [[nodiscard]] std::uint64_t mark_count() const noexcept { return m_mark_count; }
  /// The kept marks, oldest first.
  [[nodiscard]] const std::deque<phase_mark>& marks() const noexcept { return m_marks; }

 private:
  struct thread_state {
    bool attached = false;
    bool waiting = false;
  };

  thread_state& state_of(std::size_t thread) {
    if (thread >= m_threads.size()) m_threads.resize(thread + 1);
    return m_threads[thread];
  }

  void account(double seconds, bool in_frame) {
    if (!active()) return;
    m_active += seconds;
    m_work += m_frequency * seconds;
    if (in_frame) {
      m_frame_active += seconds;
      m_frame_work += m_frequency * seconds;
    }
  }

  void finish_frame() {
    m_ring[static_cast<std::size_t>(m_frame) % m_ring.size()] = {m_frame, m_frame_active, m_frame_work};
    ++m_frame;
    m_frame_active = m_frame_work = 0.0;
  }

  // A long stretch without transitions: whole frames that would fall out of the ring at once
  // are accounted in bulk instead of one by one.
  void skip_whole_frames(double seconds) {
    const double start = m_origin + static_cast<double>(m_frame) * m_frame_seconds;
    const auto whole = static_cast<std::int64_t>(std::floor((seconds - start) / m_frame_seconds));
    const std::int64_t skip = whole - static_cast<std::int64_t>(m_ring.size());
    if (skip <= 0) return;
    const double skipped = static_cast<double>(skip) * m_frame_seconds;
    account(skipped, false);
    m_frame += skip;
    m_now = m_origin + static_cast<double>(m_frame) * m_frame_seconds;
  }

  double m_frame_seconds;
  double m_frequency;
  double m_origin = 0.0;
  double m_now = 0.0;
  double m_active = 0.0;
  double m_work = 0.0;
  std::int64_t m_frame = 0;
  double m_frame_active = 0.0;
  double m_frame_work = 0.0;
  std::vector<frame> m_ring;
  std::deque<phase_mark> m_marks;
  std::uint64_t m_mark_count = 0;
  std::vector<thread_state> m_threads;
  std::size_t m_attached = 0;
  std::size_t m_active_threads = 0;
};

}  // namespace hetero::power

#endif  // HETERO_POWER_ACTIVITY_TIMELINE_HPP

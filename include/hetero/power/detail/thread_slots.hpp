/// @file
/// The monitor's writer side: one slot (an event ring and a wait depth) per tracked thread,
/// claimed on the thread's first report and given back when it exits, and the reader's merge of
/// all slots into an `activity_timeline`.
#ifndef HETERO_POWER_DETAIL_THREAD_SLOTS_HPP
#define HETERO_POWER_DETAIL_THREAD_SLOTS_HPP

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/power/activity_timeline.hpp"
#include "hetero/power/detail/event_ring.hpp"

namespace hetero::power::detail {

/// Set on threads whose waits no monitor records (`monitor::ignore_calling_thread`).
inline thread_local bool t_thread_ignored = false;

/// One tracked thread's area: written by that thread only, read by the monitor's reader.
struct thread_slot {
  enum : int { unused, owned, retired };
  explicit thread_slot(std::size_t events) : ring(events) {}
  std::atomic<int> state{unused};
  int depth = 0;  // nesting of wait scopes; touched by the owning thread only
  event_ring ring;
};

class thread_slots;

/// The calling thread's slot in one monitor it reports to. Holding the slots alive through a
/// shared_ptr lets a thread that outlives its monitor hand back its slot safely at exit.
struct thread_binding {
  std::shared_ptr<thread_slots> owner;
  thread_slot* slot = nullptr;
  inline void release() noexcept;
  ~thread_binding() { release(); }
};

/// Monitors one thread reports to at once (monitors installed beside each other, or installed
/// before and not yet destroyed); a further one does not track the thread, and counts each of its
/// reports in `untracked_threads()`.
inline constexpr std::size_t monitors_per_thread = 4;

/// The calling thread's slots, one per monitor it reports to: each is handed back when the
/// thread exits, or when its entry is taken for another monitor after its own was destroyed.
inline thread_local std::array<thread_binding, monitors_per_thread> t_bindings;

/// All slots of one monitor, and its clock.
class thread_slots {
 public:
  thread_slots(std::size_t max_threads, std::size_t events_per_thread, bool first_only)
      : m_first_only(first_only), m_epoch(std::chrono::steady_clock::now()) {
    HETERO_EXPECTS(max_threads >= 1, "monitor_options::max_threads is 0; track at least one thread");
    m_slots.reserve(max_threads);
    for (std::size_t i = 0; i < max_threads; ++i)
      m_slots.push_back(std::make_unique<thread_slot>(events_per_thread));
  }

  /// Nanoseconds since the epoch on the steady clock.
  [[nodiscard]] std::int64_t nanoseconds_now() const noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - m_epoch)
        .count();
  }
  /// Seconds since the epoch.
  [[nodiscard]] double seconds_now() const noexcept { return static_cast<double>(nanoseconds_now()) * 1e-9; }
  /// The epoch as a `hetero::wall_seconds()` value.
  [[nodiscard]] double epoch_seconds() const noexcept {
    return std::chrono::duration<double>(m_epoch.time_since_epoch()).count();
  }

  /// The calling thread's slot (claimed on first use), or nullptr when the thread is ignored or
  /// not tracked. `self` is the shared_ptr owning *this.
  thread_slot* slot_of_this_thread(const std::shared_ptr<thread_slots>& self) noexcept {
    if (t_thread_ignored) return nullptr;
    thread_binding* vacant = nullptr;
    for (thread_binding& binding : t_bindings) {
      if (binding.owner.get() == this) return binding.slot;
      if (binding.owner && binding.owner->closed()) binding.release();  // its monitor is gone: free its slots
      if (!vacant && !binding.owner) vacant = &binding;
    }
    if (!vacant) {  // the thread reports to monitors_per_thread other live monitors already
      m_untracked.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    return bind(*vacant, self);
  }

  /// The monitor is gone: the threads' entries bound to these slots may serve other monitors.
  void close() noexcept { m_closed.store(true, std::memory_order_release); }
  /// Whether the monitor is gone.
  [[nodiscard]] bool closed() const noexcept { return m_closed.load(std::memory_order_acquire); }

  /// Appends a transition of the calling thread, stamped now.
  void record(thread_slot& slot, activity_event_type type, std::uint32_t kind) noexcept {
    if (!slot.ring.push({nanoseconds_now(), type, kind})) m_lost.fetch_add(1, std::memory_order_relaxed);
  }

  /// Reader: applies every transition recorded up to `until` seconds, and the frequency changes
  /// (seconds, GHz) given, to `timeline` in time order, then advances it to `until`.
  void drain(double until, const std::vector<std::pair<double, double>>& frequencies,
             activity_timeline& timeline) {
    m_merge.clear();
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      thread_slot& slot = *m_slots[i];
      const int state = slot.state.load(std::memory_order_acquire);
      if (state == thread_slot::unused) continue;
      const std::uint64_t available = slot.ring.available();
      std::uint64_t taken = 0;
      for (; taken < available; ++taken) {
        const activity_event& e = slot.ring.peek(taken);
        const double t = static_cast<double>(e.time_ns) * 1e-9;
        if (t > until) break;
        m_merge.push_back({t, i, e.type, 0.0});
      }
      slot.ring.pop(taken);
      // A thread that has left and whose last transition is merged: its slot can be reused.
      if (state == thread_slot::retired && taken == available) {
        slot.ring.reset();
        slot.state.store(thread_slot::unused, std::memory_order_release);
      }
    }
    for (const auto& [t, ghz] : frequencies) m_merge.push_back({t, no_thread, activity_event_type::attach, ghz});
    std::stable_sort(m_merge.begin(), m_merge.end(), [](const merged& a, const merged& b) { return a.t < b.t; });
    for (const merged& m : m_merge) {
      if (m.thread == no_thread) {
        timeline.set_frequency(m.t, m.ghz);
        continue;
      }
      switch (m.type) {
        case activity_event_type::attach: timeline.attach(m.thread, m.t); break;
        case activity_event_type::detach: timeline.detach(m.thread, m.t); break;
        case activity_event_type::wait_begin: timeline.begin_wait(m.thread, m.t); break;
        case activity_event_type::wait_end: timeline.end_wait(m.thread, m.t); break;
        case activity_event_type::phase_mark: timeline.mark_phase(m.t); break;
      }
    }
    timeline.advance(until);
  }

  [[nodiscard]] std::uint64_t lost_events() const noexcept { return m_lost.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t untracked_threads() const noexcept {
    return m_untracked.load(std::memory_order_relaxed);
  }

 private:
  static constexpr std::size_t no_thread = std::numeric_limits<std::size_t>::max();
  struct merged {
    double t;
    std::size_t thread;
    activity_event_type type;
    double ghz;
  };

  thread_slot* bind(thread_binding& binding, const std::shared_ptr<thread_slots>& self) noexcept {
    binding.owner = self;
    if (m_first_only && m_first_taken.exchange(true)) return nullptr;
    for (auto& candidate : m_slots) {
      int expected = thread_slot::unused;
      if (candidate->state.compare_exchange_strong(expected, thread_slot::owned, std::memory_order_acq_rel)) {
        candidate->depth = 0;
        binding.slot = candidate.get();
        record(*candidate, activity_event_type::attach, 0);
        return candidate.get();
      }
    }
    m_untracked.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }

  bool m_first_only;
  std::atomic<bool> m_first_taken{false};
  std::atomic<bool> m_closed{false};
  std::chrono::steady_clock::time_point m_epoch;
  std::vector<std::unique_ptr<thread_slot>> m_slots;
  std::atomic<std::uint64_t> m_lost{0};
  std::atomic<std::uint64_t> m_untracked{0};
  std::vector<merged> m_merge;  // reader's scratch
};

inline void thread_binding::release() noexcept {
  if (slot) {
    owner->record(*slot, activity_event_type::detach, 0);
    slot->state.store(thread_slot::retired, std::memory_order_release);
  }
  slot = nullptr;
  owner.reset();
}

}  // namespace hetero::power::detail

#endif  // HETERO_POWER_DETAIL_THREAD_SLOTS_HPP

/// @file
/// The one interface through which modules tell an observer (the power module's monitor, a
/// tracer) that this rank starts or stops waiting, and where a time step (phase) ends. Lower
/// modules call `wait_scope` and `mark_phase`; none of them knows who listens.
#ifndef HETERO_CORE_OBSERVER_HPP
#define HETERO_CORE_OBSERVER_HPP

#include <atomic>
#include <string_view>

namespace hetero {

/// What a rank is waiting for.
enum class wait_kind {
  collective,      ///< a collective operation (comm module, MPI collectives)
  halo,            ///< a halo exchange or section move (dist module)
  task,            ///< a task-graph wait or a task waiting for a remote event (task module)
  point_to_point,  ///< a send/receive or one-sided synchronisation
  user             ///< marked by hand
};

/// Receives wait and phase notifications. Implementations must be thread-safe and cheap: they
/// are called on the critical path, possibly from several threads.
class observer {
 public:
  virtual ~observer() = default;
  /// The calling thread starts waiting (`label` names the operation, e.g. "allreduce").
  virtual void wait_begin(wait_kind kind, std::string_view label) noexcept = 0;
  /// The calling thread stops waiting (pairs with the last `wait_begin` of this thread).
  virtual void wait_end(wait_kind kind, std::string_view label) noexcept = 0;
  /// One time step (phase) of the application ended.
  virtual void phase_end() noexcept {}
};

namespace detail {
inline std::atomic<observer*> g_observer{nullptr};
}  // namespace detail

/// Installs `o` (nullptr removes it) and returns the previous observer. The caller keeps `o`
/// alive until it is removed.
inline observer* set_observer(observer* o) noexcept { return detail::g_observer.exchange(o); }

/// The installed observer, or nullptr.
inline observer* current_observer() noexcept { return detail::g_observer.load(std::memory_order_acquire); }

/// Marks the scope of a wait; costs one atomic load when no observer is installed.
/// @code
/// { hetero::wait_scope waiting(hetero::wait_kind::collective, "allreduce"); MPI_Wait(&r, s); }
/// @endcode
class wait_scope {
 public:
  wait_scope(wait_kind kind, std::string_view label) noexcept
      : m_observer(current_observer()), m_kind(kind), m_label(label) {
    if (m_observer) m_observer->wait_begin(m_kind, m_label);
  }
  ~wait_scope() {
    if (m_observer) m_observer->wait_end(m_kind, m_label);
  }
  wait_scope(const wait_scope&) = delete;
  wait_scope& operator=(const wait_scope&) = delete;

 private:
  observer* m_observer;
  wait_kind m_kind;
  std::string_view m_label;
};

/// Tells the observer that one time step (phase) ended; call once per step.
inline void mark_phase() noexcept {
  if (observer* o = current_observer()) o->phase_end();
}

}  // namespace hetero

#endif  // HETERO_CORE_OBSERVER_HPP

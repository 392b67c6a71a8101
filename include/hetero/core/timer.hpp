/// @file
/// Wall-clock timing: `hetero::wall_seconds()` and a `stopwatch`.
#ifndef HETERO_CORE_TIMER_HPP
#define HETERO_CORE_TIMER_HPP

#include <chrono>

namespace hetero {

/// Seconds on a monotonic clock since an arbitrary origin (steady_clock, not MPI_Wtime, so it
/// works before MPI is up and in any thread).
inline double wall_seconds() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Measures elapsed wall time from construction or the last `restart()`.
/// <!-- snippet: fragment
/// auto work = [] {};
/// -->
/// @code
/// hetero::stopwatch watch;
/// work();
/// double seconds = watch.seconds();
/// @endcode
class stopwatch {
 public:
  stopwatch() noexcept : m_start(std::chrono::steady_clock::now()) {}
  /// Seconds since construction or the last restart.
  [[nodiscard]] double seconds() const noexcept {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  }
  /// Starts again from now and returns the seconds elapsed until now.
  double restart() noexcept {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - m_start).count();
    m_start = now;
    return elapsed;
  }

 private:
  std::chrono::steady_clock::time_point m_start;
};

}  // namespace hetero

#endif  // HETERO_CORE_TIMER_HPP

/// @file
/// The process-wide no-progress timeout of hetero's waits: how long any hetero call (a
/// collective, a halo exchange, a coarray get/put/sync, the power controller's exchanges, a
/// task graph without progress) waits for other ranks before it raises
/// `hetero::deadlock_error`. On by default (30 s), so that a job stuck on a missing or
/// mismatched rank reports what it waited for before a batch queue or a CTest limit (often
/// 60 s) kills it silently. Set by, from strongest to weakest: `hetero::set_wait_timeout`, the
/// runtime option `runtime_options::wait_timeout`, the environment variable
/// `HETERO_WAIT_TIMEOUT`, the built-in default. Per-object options
/// (`communicator_options::wait_timeout`, `task_options::no_progress_timeout`) override it for
/// their object. Every timeout is a `hetero::timeout` (docs/conventions.md); see docs/faults.md.
#ifndef HETERO_CORE_WAIT_TIMEOUT_HPP
#define HETERO_CORE_WAIT_TIMEOUT_HPP

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "hetero/core/error.hpp"

namespace hetero {

/// Where the process-wide wait timeout came from (named in `deadlock_error` messages).
enum class wait_timeout_origin {
  built_in,        ///< `default_wait_timeout_seconds`
  environment,     ///< HETERO_WAIT_TIMEOUT
  runtime_option,  ///< `runtime_options::wait_timeout`
  setter,          ///< `hetero::set_wait_timeout`
};

/// The built-in default of the wait timeout, in seconds: half of the 60 s that CTest and many
/// batch queues allow a test or a short job, so the report comes before the kill.
inline constexpr double default_wait_timeout_seconds = 30;

/// How long a hetero wait goes on without progress before it gives up: the one type of every
/// timeout in hetero's options and functions. It is one of
///  - a duration: any `std::chrono::duration` (`std::chrono::seconds(10)`, `500ms`);
///  - `hetero::no_timeout`: wait forever (a zero duration says the same);
///  - `hetero::inherit_timeout` (the default): follow the process-wide `hetero::wait_timeout()`.
/// A negative duration is refused with `invalid_argument` where the timeout is used.
/// <!-- snippet: fragment -->
/// @code
/// hetero::communicator world({.wait_timeout = std::chrono::seconds(120)});
/// hetero::task_graph graph({.no_progress_timeout = hetero::no_timeout});
/// @endcode
class timeout {
 public:
  /// Follows the process-wide wait timeout (`hetero::inherit_timeout`).
  constexpr timeout() noexcept = default;
  /// Gives up after `limit` without progress (zero: never).
  template <class Rep, class Period>
  constexpr timeout(std::chrono::duration<Rep, Period> limit) noexcept  // NOLINT: implicit on purpose
      : m_inherit(false), m_seconds(std::chrono::duration<double>(limit).count()) {}
  /// A number of seconds, as hetero 0.x took it (negative: inherit; 0: never).
  [[deprecated(
      "hetero: a timeout is no longer a number of seconds: write a std::chrono duration "
      "(std::chrono::seconds(30)), hetero::no_timeout (for 0) or hetero::inherit_timeout (for -1); "
      "docs/conventions.md")]] constexpr timeout(double seconds) noexcept  // NOLINT: implicit on purpose
      : m_inherit(seconds < 0), m_seconds(seconds < 0 ? 0 : seconds) {}

  /// Whether it follows the process-wide `hetero::wait_timeout()`.
  [[nodiscard]] constexpr bool inherits() const noexcept { return m_inherit; }
  /// Whether it waits forever (`hetero::no_timeout`).
  [[nodiscard]] constexpr bool forever() const noexcept { return !m_inherit && m_seconds == 0; }
  /// The limit as a duration (zero when it waits forever or inherits).
  [[nodiscard]] constexpr std::chrono::duration<double> duration() const noexcept {
    return std::chrono::duration<double>(m_inherit ? 0.0 : m_seconds);
  }
  /// Equal when both inherit, or both give the same limit.
  friend constexpr bool operator==(const timeout&, const timeout&) = default;

 private:
  bool m_inherit = true;
  double m_seconds = 0;
};

/// The timeout that follows the process-wide `hetero::wait_timeout()`: the default of every
/// per-object timeout option.
inline constexpr timeout inherit_timeout{};

/// The timeout that never gives up: hetero waits as long as MPI would.
inline constexpr timeout no_timeout{std::chrono::duration<double>::zero()};

/// The name of the environment variable that sets the wait timeout.
inline constexpr std::string_view wait_timeout_variable = "HETERO_WAIT_TIMEOUT";

namespace detail {

struct wait_timeout_state {
  std::atomic<double> seconds{default_wait_timeout_seconds};
  std::atomic<int> origin{static_cast<int>(wait_timeout_origin::built_in)};
  std::atomic<bool> settled{false};  // the environment was read, or a stronger source spoke
};
inline wait_timeout_state g_wait_timeout;

/// The seconds `text` (HETERO_WAIT_TIMEOUT's value) asks for: a number >= 0, or "off".
inline double parse_wait_timeout(std::string_view text) {
  const auto refuse = [&]() -> double {
    raise<invalid_argument>("the environment variable ", wait_timeout_variable, " is '", text,
                            "'; allowed: a number of seconds > 0 (e.g. 30 or 2.5), or 0 or 'off' to wait forever");
  };
  if (text == "off" || text == "OFF" || text == "Off") return 0;
  if (text.empty()) refuse();
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (errno != 0 || end != copy.c_str() + copy.size() || !std::isfinite(value) || value < 0) refuse();
  return value;
}

/// Reads HETERO_WAIT_TIMEOUT once (unless a stronger source already set the timeout); throws
/// `invalid_argument` naming the variable for a malformed value.
inline void load_wait_timeout_environment() {
  auto& s = g_wait_timeout;
  if (s.settled.load(std::memory_order_acquire)) return;
  if (const char* text = std::getenv(std::string(wait_timeout_variable).c_str())) {
    const double seconds = parse_wait_timeout(text);
    int expected = static_cast<int>(wait_timeout_origin::built_in);
    if (s.origin.compare_exchange_strong(expected, static_cast<int>(wait_timeout_origin::environment)))
      s.seconds.store(seconds, std::memory_order_relaxed);
  }
  s.settled.store(true, std::memory_order_release);
}

/// Sets the process-wide timeout from `origin` (checked: finite and >= 0).
inline void store_wait_timeout(double seconds, wait_timeout_origin origin, std::string_view name) {
  HETERO_EXPECTS(std::isfinite(seconds) && seconds >= 0, name, " is ", seconds,
                 "; allowed: a number of seconds > 0, or 0 to wait forever");
  auto& s = g_wait_timeout;
  s.seconds.store(seconds, std::memory_order_relaxed);
  s.origin.store(static_cast<int>(origin), std::memory_order_relaxed);
  s.settled.store(true, std::memory_order_release);
}

/// A duration that stands for "forever" and still fits `now() + d` in nanoseconds.
inline constexpr std::chrono::nanoseconds forever_ns = std::chrono::hours(24 * 365 * 10);

}  // namespace detail

namespace detail {
/// The process-wide no-progress timeout in seconds (0: forever). Reads HETERO_WAIT_TIMEOUT on
/// first use when neither `hetero::runtime` nor `set_wait_timeout` did.
[[nodiscard]] inline double wait_timeout_seconds() {
  auto& s = g_wait_timeout;
  if (!s.settled.load(std::memory_order_acquire)) load_wait_timeout_environment();
  return s.seconds.load(std::memory_order_relaxed);
}

/// The seconds of a per-object timeout for a wait policy: -1 when it inherits, 0 when it waits
/// forever; a negative or non-finite duration raises `invalid_argument` naming `option`.
[[nodiscard]] inline double policy_seconds(const timeout& limit, std::string_view option) {
  if (limit.inherits()) return -1;
  const double seconds = limit.duration().count();
  HETERO_EXPECTS(std::isfinite(seconds) && seconds >= 0, option, " is ", seconds,
                 " s; allowed: a positive duration (std::chrono::seconds(30)), hetero::no_timeout (never) or "
                 "hetero::inherit_timeout (hetero::wait_timeout(), the default)");
  return seconds;
}
}  // namespace detail

/// The process-wide no-progress timeout (`hetero::no_timeout` when hetero waits forever). Reads
/// HETERO_WAIT_TIMEOUT on first use when neither `hetero::runtime` nor `set_wait_timeout` did.
[[nodiscard]] inline timeout wait_timeout() {
  const double seconds = detail::wait_timeout_seconds();
  return seconds > 0 ? timeout(std::chrono::duration<double>(seconds)) : no_timeout;
}

/// Where the current `wait_timeout()` came from.
[[nodiscard]] inline wait_timeout_origin wait_timeout_source() {
  (void)detail::wait_timeout_seconds();
  return static_cast<wait_timeout_origin>(detail::g_wait_timeout.origin.load(std::memory_order_relaxed));
}

/// Sets the process-wide no-progress timeout (`hetero::no_timeout`: wait forever), overriding
/// HETERO_WAIT_TIMEOUT and `runtime_options::wait_timeout`; for programs without
/// `hetero::runtime` or that change it between phases. Applies to waits that start afterwards.
/// `hetero::inherit_timeout` has nothing to inherit from here and is refused.
/// <!-- snippet: fragment -->
/// @code
/// hetero::set_wait_timeout(std::chrono::minutes(10));  // rank 0 reads a large file meanwhile
/// @endcode
inline void set_wait_timeout(timeout limit) {
  constexpr std::string_view name = "hetero::set_wait_timeout's argument";
  HETERO_EXPECTS(!limit.inherits(), name,
                 " is hetero::inherit_timeout, which has nothing to inherit from; allowed: a positive duration or "
                 "hetero::no_timeout");
  detail::store_wait_timeout(detail::policy_seconds(limit, name), wait_timeout_origin::setter, name);
}

namespace detail {

/// How to change the limit, for error messages: names where the current value came from.
inline std::string wait_timeout_advice(std::string_view per_object_option = {}) {
  if (!per_object_option.empty())
    return "; the limit is this object's own (" + std::string(per_object_option) + "): raise it there";
  std::string text = "; the limit is hetero's wait timeout, ";
  switch (wait_timeout_source()) {
    case wait_timeout_origin::built_in: text += "here the built-in default"; break;
    case wait_timeout_origin::environment: text += "here set by the environment"; break;
    case wait_timeout_origin::runtime_option: text += "here set by runtime_options::wait_timeout"; break;
    case wait_timeout_origin::setter: text += "here set by hetero::set_wait_timeout"; break;
  }
  text += ": raise it with the environment variable ";
  text += wait_timeout_variable;
  text +=
      "=<seconds>, runtime_options::wait_timeout or hetero::set_wait_timeout(std::chrono::seconds(n)) (a setting "
      "in the "
      "program wins over the environment); 0 or 'off' waits forever";
  return text;
}

/// A per-object timeout (checked, named `option` in the message), or the process-wide one when
/// it inherits, as the nanoseconds a scheduler counts in (forever for `no_timeout`).
inline std::chrono::nanoseconds resolve_timeout(const timeout& limit, std::string_view option) {
  const double own = policy_seconds(limit, option);
  const double s = own < 0 ? wait_timeout_seconds() : own;
  if (s <= 0 || s >= std::chrono::duration<double>(forever_ns).count()) return forever_ns;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s));
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_CORE_WAIT_TIMEOUT_HPP

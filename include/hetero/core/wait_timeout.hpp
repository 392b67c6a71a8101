/// @file
/// The process-wide no-progress timeout of hetero's waits: how long any hetero call (a
/// collective, a halo exchange, a coarray get/put/sync, the power controller's exchanges, a
/// task graph without progress) waits for other ranks before it raises
/// `hetero::deadlock_error`. On by default (30 s), so that a job stuck on a missing or
/// mismatched rank reports what it waited for before a batch queue or a CTest limit (often
/// 60 s) kills it silently. Set by, from strongest to weakest: `hetero::set_wait_timeout`, the
/// runtime option `runtime_options::wait_timeout`, the environment variable
/// `HETERO_WAIT_TIMEOUT`, the built-in default. Per-object options
/// (`communicator_options::wait_timeout_seconds`, `task_options::no_progress_timeout`)
/// override it for their object. See docs/faults.md.
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

/// A per-object timeout that follows the process-wide `wait_timeout()` (the default of
/// `task_options::no_progress_timeout`); positive, so that option checks accept it.
inline constexpr std::chrono::duration<double> inherit_timeout{std::numeric_limits<double>::max()};

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

/// The process-wide no-progress timeout in seconds (0: hetero waits forever). Reads
/// HETERO_WAIT_TIMEOUT on first use when neither `hetero::runtime` nor `set_wait_timeout` did.
[[nodiscard]] inline double wait_timeout() {
  auto& s = detail::g_wait_timeout;
  if (!s.settled.load(std::memory_order_acquire)) detail::load_wait_timeout_environment();
  return s.seconds.load(std::memory_order_relaxed);
}

/// Where the current `wait_timeout()` came from.
[[nodiscard]] inline wait_timeout_origin wait_timeout_source() {
  (void)wait_timeout();
  return static_cast<wait_timeout_origin>(detail::g_wait_timeout.origin.load(std::memory_order_relaxed));
}

/// Sets the process-wide no-progress timeout (seconds; 0: wait forever), overriding
/// HETERO_WAIT_TIMEOUT and `runtime_options::wait_timeout`; for programs without
/// `hetero::runtime` or that change it between phases. Applies to waits that start afterwards.
/// <!-- snippet: fragment -->
/// @code
/// hetero::set_wait_timeout(600);  // rank 0 reads a large file while the others wait
/// @endcode
inline void set_wait_timeout(double seconds) {
  detail::store_wait_timeout(seconds, wait_timeout_origin::setter, "hetero::set_wait_timeout's argument");
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
      "=<seconds>, runtime_options::wait_timeout or hetero::set_wait_timeout(seconds) (a setting in the "
      "program wins over the environment); 0 or 'off' waits forever";
  return text;
}

/// A per-object timeout: `seconds`, unless it is negative or `inherit_timeout`, then the
/// process-wide `wait_timeout()`; as the nanoseconds a scheduler counts in (forever when 0).
inline std::chrono::nanoseconds resolve_timeout(std::chrono::duration<double> seconds) {
  const bool inherit = seconds.count() < 0 || seconds == inherit_timeout;
  const double s = inherit ? wait_timeout() : seconds.count();
  if (s <= 0 || s >= std::chrono::duration<double>(forever_ns).count()) return forever_ns;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s));
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_CORE_WAIT_TIMEOUT_HPP

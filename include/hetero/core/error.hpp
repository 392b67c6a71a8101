/// @file
/// hetero's exception hierarchy and the contract macro `HETERO_EXPECTS`.
#ifndef HETERO_CORE_ERROR_HPP
#define HETERO_CORE_ERROR_HPP

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hetero {

/// Base of every exception hetero throws. Messages say what was wrong, the value seen and the
/// values allowed.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An argument outside what a function accepts (a weight outside [0, 1], a negative range, ...).
class invalid_argument : public error {
 public:
  using error::error;
};

/// A distribution that does not fit its index space or process grid.
class distribution_error : public error {
 public:
  using error::error;
};

/// A failed MPI call; `call()` names it and `code()` is the MPI error code it returned.
class mpi_error : public error {
 public:
  /// The MPI function `call` (e.g. "MPI_Send") failed with error code `code`; `message` is what `what()` returns.
  mpi_error(std::string call, int code, const std::string& message)
      : error(message), m_call(std::move(call)), m_code(code) {}

  /// The name of the MPI function that failed, e.g. "MPI_Send".
  [[nodiscard]] const std::string& call() const noexcept { return m_call; }
  /// The error code the call returned.
  [[nodiscard]] int code() const noexcept { return m_code; }

 private:
  std::string m_call;
  int m_code;
};

/// A backend (execution space, device runtime, actuator) that is missing or not supported.
class backend_error : public error {
 public:
  using error::error;
};

/// A task graph or communication pattern that can no longer make progress: a wait for other
/// ranks outlived the no-progress timeout (see `hetero::wait_timeout`). The message names the
/// call, the communicator's size and this rank, how long it waited, the ranks that had not
/// arrived (where known) and how to raise the limit; the accessors give the same facts.
class deadlock_error : public error {
 public:
  using error::error;
  /// A wait that gave up: `missing` lists the ranks (of the communicator) not arrived, if known.
  deadlock_error(const std::string& message, std::vector<int> missing, double waited_seconds, int comm_size,
                 int rank)
      : error(message),
        m_missing(std::move(missing)),
        m_waited(waited_seconds),
        m_comm_size(comm_size),
        m_rank(rank) {}

  /// Ranks of the communicator this rank still waited for when it gave up, ascending; empty
  /// when unknown (MPI's own collectives do not say) or for a task graph.
  [[nodiscard]] const std::vector<int>& missing_ranks() const noexcept { return m_missing; }
  /// Seconds this rank waited before it gave up (0 when not recorded).
  [[nodiscard]] double waited_seconds() const noexcept { return m_waited; }
  /// Ranks in the communicator of the wait (0 when unknown).
  [[nodiscard]] int comm_size() const noexcept { return m_comm_size; }
  /// This rank in that communicator (-1 when unknown).
  [[nodiscard]] int rank() const noexcept { return m_rank; }

 private:
  std::vector<int> m_missing;
  double m_waited = 0;
  int m_comm_size = 0;
  int m_rank = -1;
};

/// A file that cannot be written or read as asked: missing, not readable, truncated or
/// corrupted, without the dataset asked for or with another element type or shape, or a write
/// the file system refused (full, read-only). `path()` names the file.
class io_error : public error {
 public:
  /// An I/O failure on the file `path`; `message` is what `what()` returns.
  io_error(const std::string& message, std::string path) : error(message), m_path(std::move(path)) {}
  /// The file the operation was on.
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  std::string m_path;
};

/// The runtime was used in a state that does not allow it (e.g. MPI already finalised).
class runtime_error : public error {
 public:
  using error::error;
};

namespace detail {

/// Concatenates the stream representations of `parts` into one message.
template <class... Parts>
std::string message(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// Throws `Error` with the concatenated message; kept out of line of the hot path.
template <class Error = invalid_argument, class... Parts>
[[noreturn]] void raise(const Parts&... parts) {
  throw Error(message(parts...));
}

/// Throws `io_error` on `path` with the concatenated message.
template <class... Parts>
[[noreturn]] void raise_io_error(const std::string& path, const Parts&... parts) {
  throw io_error(message(parts...), path);
}

}  // namespace detail
}  // namespace hetero

/// Checks a precondition of a host function: throws `hetero::invalid_argument` with
/// `message` (any streamable parts) when `cond` is false. Use in host code only; device code
/// calls `Kokkos::abort`.
/// <!-- snippet: fragment
/// double w = 0.5;
/// -->
/// @code
/// HETERO_EXPECTS(w >= 0 && w <= 1, "cpu weight ", w, " is outside [0, 1]");
/// @endcode
#define HETERO_EXPECTS(cond, ...)                                                  \
  do {                                                                             \
    if (!(cond)) ::hetero::detail::raise<::hetero::invalid_argument>(__VA_ARGS__); \
  } while (false)

#endif  // HETERO_CORE_ERROR_HPP

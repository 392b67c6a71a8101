/// @file
/// `hetero::comm_ref`: the ranks an API runs on, given as a hetero handle (a
/// `hetero::communicator`, a `process_grid`, a distributed array, a coarray) or as a raw
/// `MPI_Comm`. Modules that stand on `core` only (exec, task, power) take one, so that the
/// handles of the modules above them compose without those modules being included.
#ifndef HETERO_CORE_MPI_COMM_REF_HPP
#define HETERO_CORE_MPI_COMM_REF_HPP

#include <mpi.h>

#include <concepts>
#include <string_view>
#include <type_traits>

#include "hetero/core/mpi/wait.hpp"

namespace hetero {

/// A hetero object that runs on a set of ranks and names them with `mpi_comm()`:
/// `hetero::communicator`, `process_grid`, `distributed_array`, `coarray`, ...
template <class Handle>
concept communicator_handle = requires(const Handle& h) {
  { h.mpi_comm() } -> std::convertible_to<MPI_Comm>;
};

/// The ranks an API runs on: a hetero handle or an MPI communicator, both converted implicitly,
/// so `save_weights(path, world)` and `save_weights(path, MPI_COMM_WORLD)` both work. It does
/// not own what it refers to: the handle must outlive the call (or, in `task_options`, the
/// construction of the graph). A handle whose communicator carries a no-progress timeout
/// (`communicator_options::wait_timeout`, its own or its `comm()`'s) brings it along
/// for the waits made on it.
/// <!-- snippet: fragment -->
/// @code
/// const hetero::communicator world;
/// hetero::save_weights("weights.txt", world);
/// hetero::task_graph graph({.comm = world});
/// @endcode
class comm_ref {
 public:
  /// Refers to `comm` (MPI_COMM_WORLD by default); waits inherit `hetero::wait_timeout()`.
  comm_ref(MPI_Comm comm = MPI_COMM_WORLD) noexcept : m_comm(comm) {}  // NOLINT: implicit on purpose

  /// Refers to the ranks of `handle` (its `mpi_comm()`), and to its wait timeout if it has one.
  template <communicator_handle Handle>
  requires(!std::same_as<std::remove_cvref_t<Handle>, comm_ref>) comm_ref(const Handle& handle)  // NOLINT
      : m_comm(handle.mpi_comm()) {
    // Its own options' timeout (a communicator), else that of the communicator it hands out
    // (a process grid, a distributed array: `comm()`).
    if constexpr (requires { timeout(handle.options().wait_timeout); })
      m_timeout = handle.options().wait_timeout;
    else if constexpr (requires { timeout(handle.comm().options().wait_timeout); })
      m_timeout = handle.comm().options().wait_timeout;
    if (!m_timeout.inherits()) m_timeout_option = "communicator_options::wait_timeout";
  }

  /// The MPI communicator.
  [[nodiscard]] MPI_Comm get() const noexcept { return m_comm; }
  /// The MPI communicator, so that code written for an `MPI_Comm` keeps working.
  operator MPI_Comm() const noexcept { return m_comm; }  // NOLINT: implicit on purpose

  /// How long a wait on it goes without progress before it gives up (`hetero::inherit_timeout`:
  /// the process-wide `hetero::wait_timeout()`).
  [[nodiscard]] timeout wait_timeout() const noexcept { return m_timeout; }
  /// The option that set `wait_timeout()`, named in messages (empty: inherited).
  [[nodiscard]] std::string_view timeout_option() const noexcept { return m_timeout_option; }

 private:
  MPI_Comm m_comm;
  timeout m_timeout = inherit_timeout;
  std::string_view m_timeout_option{};
};

namespace detail {
/// The wait policy of `comm` (not collective): its timeout, judged by the job's ranks on the node.
inline wait_policy wait_policy_of(const comm_ref& comm) {
  wait_policy policy = make_wait_policy(comm.get(), policy_seconds(comm.wait_timeout(), comm.timeout_option()));
  policy.timeout_option = comm.timeout_option();
  return policy;
}
}  // namespace detail

}  // namespace hetero

#endif  // HETERO_CORE_MPI_COMM_REF_HPP

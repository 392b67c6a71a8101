/// @file
/// Operations that complete outside a task graph and that tasks can depend on: anything with a
/// non-blocking `test()` (an MPI request, a non-blocking collective's `collective_request` of
/// the comm module, an asynchronous reflect's `reflect_handle` of the distarray module), adopted
/// with `task_graph::adopt(out(e), operation)`.
#ifndef HETERO_TASK_COMPLETION_SOURCE_HPP
#define HETERO_TASK_COMPLETION_SOURCE_HPP

#include <mpi.h>

#include <concepts>
#include <type_traits>
#include <utility>

#include "hetero/core/mpi.hpp"

namespace hetero {

/// An operation the graph can poll: `test()` returns true once it completed and must not
/// block. The graph calls it from one thread at a time (a worker doing progress duty) until it
/// returns true, then destroys the object.
template <class S>
concept completion_source = std::move_constructible<S> && requires(S& s) {
  { s.test() } -> std::convertible_to<bool>;
};

/// Whether a graph's workers call MPI when they poll a completion source `S`: true unless `S`
/// says otherwise with `static constexpr bool calls_mpi = false;` (a source that tests a flag
/// or a device event). A graph with several workers adopts one that calls MPI only where MPI
/// provides MPI_THREAD_MULTIPLE: the workers poll it while the declaring thread may call MPI.
template <class S>
inline constexpr bool completion_source_calls_mpi = [] {
  if constexpr (requires { S::calls_mpi; }) {
    static_assert(
        std::is_same_v<decltype(S::calls_mpi), const bool> &&
            !std::is_member_object_pointer_v<decltype(&S::calls_mpi)> &&
            requires { typename std::bool_constant<S::calls_mpi>; },  // a constant, not set at run time
        "hetero: a completion source says whether its test() calls MPI with static constexpr bool calls_mpi");
    return S::calls_mpi;
  } else {
    return true;
  }
}();

/// An MPI request as a completion source: `test()` calls `MPI_Test`. The request's buffers must
/// stay alive until the tasks depending on it ran.
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// double local = 1, global = 0;
/// MPI_Comm comm = MPI_COMM_WORLD;
/// hetero::event sum_ready = graph.event("sum ready");
/// auto use = [](double) {};
/// -->
/// @code
/// MPI_Request r;
/// MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm, &r);
/// graph.adopt(hetero::out(sum_ready), hetero::mpi_request(r), "allreduce");
/// graph.spawn(hetero::in(sum_ready), [&] { use(global); });
/// @endcode
class mpi_request {
 public:
  /// Wraps `request`, a started non-blocking MPI operation, for a task graph to test until it completes.
  explicit mpi_request(MPI_Request request) noexcept : m_request(request) {}
  /// Takes over `other`'s request; `other` is left with `MPI_REQUEST_NULL`.
  mpi_request(mpi_request&& other) noexcept : m_request(std::exchange(other.m_request, MPI_REQUEST_NULL)) {}
  mpi_request& operator=(mpi_request&&) = delete;
  mpi_request(const mpi_request&) = delete;
  ~mpi_request() = default;  // a request not completed is the caller's (it may outlive the graph)

  /// Whether the operation completed (`MPI_Test`; throws `hetero::mpi_error` on failure where
  /// the communicator returns errors).
  bool test() {
    if (m_request == MPI_REQUEST_NULL) return true;
    int done = 0;
    HETERO_MPI_CHECK(MPI_Test, &m_request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  }

 private:
  MPI_Request m_request;
};

}  // namespace hetero

#endif  // HETERO_TASK_COMPLETION_SOURCE_HPP

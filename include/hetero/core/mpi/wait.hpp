/// @file
/// The one way hetero waits for other ranks: spin briefly, then yield its core (at once when
/// the node runs more ranks than it has cores), then poll with short sleeps; give up with a
/// `deadlock_error` after an optional timeout. Used by comm's shared-memory path and
/// algorithms, distarray's transfers and windows, and power's control channel.
#ifndef HETERO_CORE_MPI_WAIT_HPP
#define HETERO_CORE_MPI_WAIT_HPP

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>
#include <thread>

#include "hetero/core/detail/cpu.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/observer.hpp"

namespace hetero::detail {

/// How a communicator's ranks wait (the default: MPI's own wait, no timeout).
struct wait_policy {
  /// More ranks on the node than cores: a spinning rank would hold the core its peer needs.
  bool oversubscribed = false;
  /// Seconds after which a wait becomes a `deadlock_error` (0: wait forever, as MPI does).
  double timeout_seconds = 0;
};

/// The policy for ranks of `comm`: oversubscribed when more of its ranks share this node than
/// it has cores (collective over `comm`).
inline wait_policy policy_for(MPI_Comm comm, double timeout_seconds = 0) {
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0, node_size = 1;
  HETERO_MPI_CHECK(MPI_Comm_rank, comm, &rank);
  HETERO_MPI_CHECK(MPI_Comm_split_type, comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  const int code = MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  check_mpi(code, "MPI_Comm_size");
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  return {node_size > cores, timeout_seconds};
}

/// Lets MPI progress what is pending on this process (passive-target RMA aimed at it,
/// rendezvous messages) without receiving anything.
inline void poke_mpi_progress() noexcept {
  if (!mpi_initialized() || mpi_finalized()) return;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

/// One wait: call `pause()` each time the awaited condition was not yet true.
class backoff {
 public:
  backoff(const wait_policy& policy, std::string_view what) noexcept : m_policy(policy), m_what(what) {}

  void pause() {
    ++m_polls;
    // ~50 us of spinning (one pause per poll: a peer's cache line is seen within ~100 ns)
    // catches a peer that is a few cache misses behind without a system call; an oversubscribed
    // node spins only a little (the peer may be waiting for this core).
    const std::uint64_t spin_polls = m_policy.oversubscribed ? 16 : 2048;
    if (m_polls < spin_polls) {
      cpu_relax();
      return;
    }
    if ((m_polls & 63) == 0) check_clock();
    if (m_sleeping) {
      // After a long wait (a slow rank, not a late cache line) sleep instead of burning the
      // core: the wake-up delay is small next to what was already waited. A waiting rank
      // that never enters MPI would stall what others need its progress for (a one-sided get
      // from its window while it waits in a shared-memory collective): poke MPI's progress.
      poke_mpi_progress();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    } else {
      std::this_thread::yield();
    }
  }

 private:
  void check_clock() {
    const auto now = std::chrono::steady_clock::now();
    if (m_started == std::chrono::steady_clock::time_point{}) {
      m_started = now;
      return;
    }
    const double waited = std::chrono::duration<double>(now - m_started).count();
    m_sleeping = waited > 0.01;
    if (m_policy.timeout_seconds > 0 && waited > m_policy.timeout_seconds)
      raise<deadlock_error>(m_what, ": waited more than ", m_policy.timeout_seconds,
                            " s for other ranks; a rank may have called another collective (or none), with "
                            "other counts, root or algorithm, or not at all");
  }

  const wait_policy& m_policy;
  std::string_view m_what;
  std::uint64_t m_polls = 0;
  bool m_sleeping = false;
  std::chrono::steady_clock::time_point m_started{};
};

/// Waits for every request, reported to the observer as a wait of `kind` named `what`. Where
/// the node is oversubscribed or a timeout is set, polls with MPI_Testall and backs off, so the
/// waiting rank gives its core to the ranks it waits for (MPI's own wait would spin).
inline void wait_all(std::span<MPI_Request> requests, std::span<MPI_Status> statuses, const wait_policy& policy,
                     std::string_view what, wait_kind kind = wait_kind::collective) {
  if (requests.empty()) return;
  wait_scope waiting(kind, what);
  const int n = static_cast<int>(requests.size());
  if (!policy.oversubscribed && policy.timeout_seconds <= 0) {
    HETERO_MPI_CHECK(MPI_Waitall, n, requests.data(), statuses.data());
    return;
  }
  backoff b(policy, what);
  for (;;) {
    int done = 0;
    HETERO_MPI_CHECK(MPI_Testall, n, requests.data(), &done, statuses.data());
    if (done) return;
    b.pause();
  }
}

/// `wait_all` without statuses.
inline void wait_all(std::span<MPI_Request> requests, const wait_policy& policy, std::string_view what,
                     wait_kind kind = wait_kind::collective) {
  if (requests.empty()) return;
  wait_scope waiting(kind, what);
  const int n = static_cast<int>(requests.size());
  if (!policy.oversubscribed && policy.timeout_seconds <= 0) {
    HETERO_MPI_CHECK(MPI_Waitall, n, requests.data(), MPI_STATUSES_IGNORE);
    return;
  }
  backoff b(policy, what);
  for (;;) {
    int done = 0;
    HETERO_MPI_CHECK(MPI_Testall, n, requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return;
    b.pause();
  }
}

/// Waits for one request (see `wait_all`).
inline void wait_one(MPI_Request& request, const wait_policy& policy, std::string_view what,
                     wait_kind kind = wait_kind::collective) {
  wait_all(std::span<MPI_Request>(&request, 1), policy, what, kind);
}

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_WAIT_HPP

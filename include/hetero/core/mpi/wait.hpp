/// @file
/// The one way hetero waits for other ranks: spin briefly, then yield its core (at once when
/// the node runs more ranks than it has cores), then poll with short sleeps; give up with a
/// `deadlock_error` after the no-progress timeout (`hetero::wait_timeout()`, 30 s by default,
/// or a per-object value). Every wait longer than the spin is recorded for the report on
/// SIGUSR1/SIGTERM (core/detail/wait_registry.hpp). Used by comm's shared-memory path and
/// algorithms, distarray's transfers and windows, linalg's halos and power's control channel.
#ifndef HETERO_CORE_MPI_WAIT_HPP
#define HETERO_CORE_MPI_WAIT_HPP

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/detail/cpu.hpp"
#include "hetero/core/detail/wait_registry.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/request_errors.hpp"
#include "hetero/core/mpi/world_nodes.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/core/wait_timeout.hpp"

namespace hetero::detail {

/// `wait_policy::timeout_seconds` that defers to the process-wide `hetero::wait_timeout()`.
inline constexpr double inherit_wait_timeout = -1;

/// How a communicator's ranks wait. Made by `make_wait_policy` (or `policy_for`).
struct wait_policy {
  /// More ranks on the node than cores: a spinning rank would hold the core its peer needs.
  bool oversubscribed = false;
  /// Seconds after which a wait becomes a `deadlock_error`; 0: wait forever; negative
  /// (`inherit_wait_timeout`): the process-wide `hetero::wait_timeout()` at the time of the wait.
  double timeout_seconds = inherit_wait_timeout;
  /// The waiting communicator's size and this rank in it, for messages (0 and -1: unknown).
  int comm_size = 0;
  int rank = -1;
  /// The per-object option that set `timeout_seconds`, named in messages (empty: inherited).
  std::string_view timeout_option{};
  /// The waiting communicator where known: a wait that gives up keeps it from being freed
  /// (`keep_communicator`), so that MPI never gives its id to a new one while the abandoned
  /// requests on it are still posted.
  MPI_Comm comm = MPI_COMM_NULL;

  /// This policy for a wait on `waiting`: the communicator the requests are on, which a wait
  /// that gives up keeps (a policy is often made for the user's communicator, and the requests
  /// posted on a duplicate).
  [[nodiscard]] wait_policy on(MPI_Comm waiting) const {
    wait_policy p = *this;
    p.comm = waiting;
    return p;
  }
  /// The timeout in force now (0: none).
  [[nodiscard]] double timeout() const { return timeout_seconds >= 0 ? timeout_seconds : wait_timeout_seconds(); }
  /// Where to raise the limit, for messages.
  [[nodiscard]] std::string advice() const {
    return wait_timeout_advice(timeout_seconds >= 0 ? timeout_option : std::string_view{});
  }
};

/// Ranks of the whole job sharing this node's cores as `hetero::runtime` found them (its
/// `machine_size()`: more than MPI's node where several nodes share one machine), 0: unknown.
inline std::atomic<int> g_node_ranks{0};

/// The one oversubscription rule: more ranks on a node than it has cores.
inline bool node_oversubscribed(int node_ranks) noexcept { return node_ranks > online_cores(); }

/// Ranks of the job sharing this node's cores, without communicating: what `hetero::runtime`
/// found, else what the launcher says of MPI's node (MPICH's Hydra, Open MPI, Slurm), else 1.
inline int process_node_ranks() noexcept {
  if (const int n = g_node_ranks.load(std::memory_order_relaxed); n > 0) return n;
  for (const char* name : {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"})
    if (const char* v = std::getenv(name))
      if (const int n = std::atoi(v); n > 0) return n;
  return 1;
}

/// The policy of a communicator of `comm_size` ranks (this one `rank`) with `node_ranks` ranks
/// on this node; `timeout_seconds` < 0 inherits the process-wide timeout, `option` names the
/// per-object option that set it otherwise. Oversubscribed by the larger of `node_ranks` and
/// the job's ranks sharing this rank's cores (several emulated nodes may share one host).
inline wait_policy make_wait_policy(int comm_size, int rank, int node_ranks,
                                    double timeout_seconds = inherit_wait_timeout, std::string_view option = {}) {
  const bool oversubscribed = node_oversubscribed(std::max(node_ranks, process_node_ranks()));
  return {oversubscribed, timeout_seconds, comm_size, rank, option};
}

/// The policy of `comm`, judged by the ranks of the job on this node (not collective).
inline wait_policy make_wait_policy(MPI_Comm comm, double timeout_seconds = inherit_wait_timeout,
                                    std::string_view option = {}) {
  int rank = -1, size = 0;
  HETERO_MPI_CHECK(MPI_Comm_rank, comm, &rank);
  HETERO_MPI_CHECK(MPI_Comm_size, comm, &size);
  wait_policy policy = make_wait_policy(size, rank, process_node_ranks(), timeout_seconds, option);
  policy.comm = comm;
  return policy;
}

/// What the calling thread is doing when it waits: set by the public call (e.g.
/// `hetero::communicator::gather`) around its waits, so that a timeout names it.
struct wait_call {
  std::string_view api;   ///< e.g. "hetero::communicator::"
  std::string_view name;  ///< e.g. "gather"
  int root = -1;          ///< -1: none
  long long bytes = -1;   ///< -1: not told
};
inline thread_local const wait_call* t_wait_call = nullptr;

/// Names the calling thread's waits after `call` while it lives.
class wait_call_scope {
 public:
  explicit wait_call_scope(const wait_call& call) noexcept : m_outer(std::exchange(t_wait_call, &call)) {}
  ~wait_call_scope() { t_wait_call = m_outer; }
  wait_call_scope(const wait_call_scope&) = delete;
  wait_call_scope& operator=(const wait_call_scope&) = delete;

 private:
  const wait_call* m_outer;
};

/// The pieces of the description of a wait named `what`: the calling thread's call around it
/// (if any) and `what`.
inline wait_words wait_words_of(std::string_view what) noexcept {
  if (const wait_call* c = t_wait_call) return {c->api, c->name, c->root, c->bytes, what};
  return {{}, {}, -1, -1, what};
}

/// The description of a wait named `what` (plus the call around it).
inline std::string wait_description(std::string_view what) {
  signal_safe_line line;
  describe(line, wait_words_of(what));
  char text[wait_text_bytes];
  line.copy_to(text, sizeof(text));
  return text;
}

/// A callable `void(std::vector<int>& out)` that appends the ranks a wait still waits for,
/// held by reference (it must outlive the wait).
class missing_ranks_fn {
 public:
  missing_ranks_fn() = default;
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, missing_ranks_fn>) missing_ranks_fn(const F& f)
  noexcept  // NOLINT: implicit on purpose
      : m_object(&f), m_call([](const void* o, std::vector<int>& out) { (*static_cast<const F*>(o))(out); }) {}
  explicit operator bool() const noexcept { return m_call != nullptr; }
  void operator()(std::vector<int>& out) const { m_call(m_object, out); }

 private:
  const void* m_object = nullptr;
  void (*m_call)(const void*, std::vector<int>&) = nullptr;
};

/// Lets MPI progress what is pending on this process (passive-target RMA aimed at it,
/// rendezvous messages) without receiving anything.
inline void poke_mpi_progress() noexcept {
  if (!mpi_initialized() || mpi_finalized()) return;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

/// The ranks `missing` lists, sorted and unique (empty without one).
inline std::vector<int> missing_ranks(const missing_ranks_fn& missing) {
  std::vector<int> ranks;
  if (missing) missing(ranks);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

/// "rank 3" or "ranks 1, 4": the sorted `ranks` for an error message.
inline std::string ranks_text(std::span<const int> ranks) {
  std::string text = ranks.size() > 1 ? "ranks " : "rank ";
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

/// How every `deadlock_error` of a collective wait ends.
inline constexpr std::string_view out_of_step_text =
    ". The objects this call used may now be out of step: do not use them again";

/// Raises the `deadlock_error` of a wait named `what` that waited `waited` seconds.
[[noreturn]] inline void give_up_waiting(const wait_policy& policy, std::string_view what, double waited,
                                         double limit, const missing_ranks_fn& missing) {
  if (policy.comm != MPI_COMM_NULL) keep_communicator(policy.comm);
  std::vector<int> ranks = missing_ranks(missing);
  std::string who;
  if (ranks.empty())
    who = missing ? "" : "; which ranks did not arrive is not known here (MPI's own call)";
  else
    who = "; not arrived: " + ranks_text(ranks);
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.2f", waited);
  std::string where;
  if (policy.comm_size > 0)
    where = message(" on a communicator of ", policy.comm_size, " rank(s) as rank ", policy.rank);
  throw deadlock_error(
      message(wait_description(what), ": waited ", seconds, " s (limit ", limit, " s) for other ranks", where, who,
              "; a rank may have skipped this call, called another one, passed other counts or roots, or be busy "
              "elsewhere for longer than the limit",
              policy.advice(), out_of_step_text),
      std::move(ranks), waited, policy.comm_size, policy.rank);
}

/// One wait: call `pause()` each time the awaited condition was not yet true. `missing` (if
/// given) lists the ranks still awaited, for the error and the signal report.
class backoff {
 public:
  backoff(const wait_policy& policy, std::string_view what, missing_ranks_fn missing = {}) noexcept
      : m_policy(policy), m_what(what), m_missing(missing) {}

  void pause() {
    ++m_polls;
    // ~50 us of spinning (one pause per poll: a peer's cache line is seen within ~100 ns)
    // catches a peer that is a few cache misses behind without a system call or a clock read;
    // an oversubscribed node spins only a little (the peer may be waiting for this core).
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
  // The first check starts the clock and records the wait (so waits that end within the spin
  // cost neither); later ones refresh the missing ranks once sleeping, and give up.
  void check_clock() {
    const std::int64_t now = monotonic_ns();
    if (m_started == 0) {
      m_started = now;
      m_limit = m_policy.timeout();
      m_record.begin(now, m_policy.comm_size, m_policy.rank, wait_words_of(m_what));
      return;
    }
    const double waited = static_cast<double>(now - m_started) * 1e-9;
    m_sleeping = waited > 0.01;
    if (m_sleeping && m_missing && ++m_refreshes % 16 == 1) {
      m_scratch.clear();
      m_missing(m_scratch);
      m_record.missing(m_scratch);
    }
    if (m_limit > 0 && waited > m_limit) give_up_waiting(m_policy, m_what, waited, m_limit, m_missing);
  }

  const wait_policy& m_policy;
  std::string_view m_what;
  missing_ranks_fn m_missing;
  std::uint64_t m_polls = 0;
  std::uint64_t m_refreshes = 0;
  bool m_sleeping = false;
  std::int64_t m_started = 0;
  double m_limit = 0;
  wait_record m_record;
  std::vector<int> m_scratch;
};

/// Raises `mpi_error` for a completion call `call` that returned `code`: where it is
/// MPI_ERR_IN_STATUS, with the first failed request's own error (and the rank it talked to), and
/// for a truncated message what that means in a collective.
[[noreturn]] inline void raise_completion_error(int code, std::string_view call, std::string_view what,
                                                std::span<const MPI_Status> statuses, std::span<const int> peers) {
  std::size_t failed = statuses.size();
  if (code == MPI_ERR_IN_STATUS)
    for (std::size_t i = 0; i < statuses.size() && failed == statuses.size(); ++i)
      if (statuses[i].MPI_ERROR != MPI_SUCCESS && statuses[i].MPI_ERROR != MPI_ERR_PENDING) failed = i;
  if (failed == statuses.size()) check_mpi(code, call);
  const int own = statuses[failed].MPI_ERROR;
  const std::string text = mpi_error_text(own);
  const int error_class = mpi_error_class(own);
  const int peer = failed < peers.size() && peers[failed] >= 0 ? peers[failed] : statuses[failed].MPI_SOURCE;
  const std::string with = peer >= 0 && peer != MPI_ANY_SOURCE ? " (with rank " + std::to_string(peer) + ")" : "";
  const std::string_view said = text;
  const bool sizes = error_class == MPI_ERR_TRUNCATE || said.find("runcated") != std::string_view::npos ||
                     said.find("do not match") != std::string_view::npos;
  const std::string meaning =
      sizes
          ? "; a message did not have the length this rank expected: the ranks passed different counts or roots, "
            "or called different collectives"
          : "";
  throw mpi_error(std::string(call), own,
                  message(what, ": ", call, " failed in request ", failed, with, ": ", said, " (MPI error class ",
                          error_class, ")", meaning));
}

/// Waits for every request, reported to the observer as a wait of `kind` named `what`.
/// Polls with MPI_Testall and backs off (so the waiting rank gives its core to the ranks it
/// waits for, and can give up after the timeout); only with no timeout on a node that is not
/// oversubscribed does it block in MPI_Waitall. `peers[i]` (optional) is the rank request i
/// talks to (-1: none), so that a timeout names the ranks whose requests are incomplete. An
/// error MPI finds in a request (a truncated message) raises `mpi_error` naming it.
inline void wait_all(std::span<MPI_Request> requests, std::span<MPI_Status> statuses, const wait_policy& policy,
                     std::string_view what, wait_kind kind = wait_kind::collective,
                     std::span<const int> peers = {}) {
  if (requests.empty()) return;
  wait_scope waiting(kind, what);
  const request_errors_returned returned;  // an error in a request raises mpi_error, not MPI_Abort
  const int n = static_cast<int>(requests.size());
  // Statuses of its own where the caller gave none (they name a failed request): on the stack
  // for a few requests, else on the heap; never shared with a nested wait.
  std::array<MPI_Status, 8> few{};
  std::vector<MPI_Status> many;
  if (statuses.empty()) {
    if (requests.size() <= few.size()) {
      statuses = std::span(few).first(requests.size());
    } else {
      many.resize(requests.size());
      statuses = many;
    }
  }
  const auto check = [&](int code, std::string_view call) {
    if (code != MPI_SUCCESS) raise_completion_error(code, call, what, statuses, peers);
  };
  if (!policy.oversubscribed && policy.timeout() <= 0) {
    wait_record record;
    record.begin(coarse_monotonic_ns(), policy.comm_size, policy.rank, wait_words_of(what));
    check(MPI_Waitall(n, requests.data(), statuses.data()), "MPI_Waitall");
    return;
  }
  // MPI_Request_get_status leaves the requests (and so the statuses MPI_Testall will fill) alone.
  const auto incomplete = [&](std::vector<int>& out) {
    for (std::size_t i = 0; i < requests.size() && i < peers.size(); ++i) {
      if (peers[i] < 0 || requests[i] == MPI_REQUEST_NULL) continue;
      int flag = 1;
      MPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE);
      if (!flag) out.push_back(peers[i]);
    }
  };
  backoff b(policy, what, peers.empty() ? missing_ranks_fn{} : missing_ranks_fn(incomplete));
  for (;;) {
    int done = 0;
    check(MPI_Testall(n, requests.data(), &done, statuses.data()), "MPI_Testall");
    if (done) return;
    b.pause();
  }
}

/// `wait_all` without statuses.
inline void wait_all(std::span<MPI_Request> requests, const wait_policy& policy, std::string_view what,
                     wait_kind kind = wait_kind::collective, std::span<const int> peers = {}) {
  wait_all(requests, std::span<MPI_Status>{}, policy, what, kind, peers);
}

/// Waits for one request (see `wait_all`); `peer` (optional) is the rank it talks to.
inline void wait_one(MPI_Request& request, const wait_policy& policy, std::string_view what,
                     wait_kind kind = wait_kind::collective, int peer = -1) {
  const int peers[] = {peer};
  wait_all(std::span<MPI_Request>(&request, 1), std::span<MPI_Status>{}, policy, what, kind,
           peer >= 0 ? std::span<const int>(peers) : std::span<const int>{});
}

/// A blocking call is ended after this many wait limits (`blocking_call`), unless it says more.
inline constexpr int blocked_call_limits = 2;

/// Marks an MPI call that blocks and cannot give up (MPI has no non-blocking form of it, or
/// completes that form too early to tell): a wait of `kind` named `what` for the observers and
/// the report on a signal. With a wait limit in force, past twice the limit (so that ranks
/// still in a wait that gives up after the limit arrive first) the runtime's watchdog ends the
/// job with a report (core/mpi/watchdog.hpp) instead of letting it hang.
/// <!-- snippet: fragment
/// using hetero::wait_kind;
/// using hetero::detail::blocking_call;
/// const hetero::detail::wait_policy policy{};
/// int t = 1;
/// MPI_Win win = MPI_WIN_NULL;
/// -->
/// @code
/// { blocking_call blocked(policy, "put (flush)", wait_kind::point_to_point); MPI_Win_flush(t, win); }
/// @endcode
class blocking_call {
 public:
  /// `limits`: after how many wait limits the job ends; more than `blocked_call_limits` where a
  /// peer may legitimately wait longer before it comes (see shm_channel's tear-down).
  blocking_call(const wait_policy& policy, std::string_view what, wait_kind kind, int limits = blocked_call_limits)
      : m_scope(kind, what) {
    const double limit = policy.timeout();
    m_record.begin(coarse_monotonic_ns(), policy.comm_size, policy.rank, wait_words_of(what),
                   limit > 0 ? static_cast<std::int64_t>(limits * limit * 1e9) : 0, limits);
  }
  blocking_call(const blocking_call&) = delete;
  blocking_call& operator=(const blocking_call&) = delete;

 private:
  wait_scope m_scope;
  wait_record m_record;
};

/// The policy of `comm`, judged by its own ranks on this node (from the nodes the runtime found;
/// without a runtime, collective over `comm`: the node split blocks, watched).
inline wait_policy policy_for(MPI_Comm comm, double timeout_seconds = inherit_wait_timeout) {
  wait_policy policy = make_wait_policy(comm, timeout_seconds);
  int node_size = 1;
  {
    const blocking_call blocked(policy, "node split", wait_kind::collective);
    node_size = world_nodes::node_size(comm);
  }
  policy.oversubscribed = node_oversubscribed(node_size);
  return policy;
}

/// Keeps `memory` that MPI may still write after a wait gave up (buffers of a request that a late
/// rank completes after the `deadlock_error`) allocated and reachable until the process ends:
/// never freed under MPI's feet, and not reported as a leak by LeakSanitizer.
template <class T>
void keep_for_mpi(std::unique_ptr<T> memory) {
  struct kept_memory {
    std::mutex mutex;
    std::vector<std::shared_ptr<void>> kept;
  };
  // Never destroyed, on purpose (nor its mutex: a wait may give up while statics are destroyed).
  static auto* const all = new kept_memory();
  const std::lock_guard lock(all->mutex);
  all->kept.push_back(std::shared_ptr<T>(std::move(memory)));
}

/// Ends the requests of a wait that gave up or failed, so that nothing of them lands after the
/// caller unwinds: each receive (`is_receive(i)` true for request `i`) is cancelled and completed
/// (`MPI_Cancel`, `MPI_Wait`: one that already matched a message completes with it), each send
/// is released to MPI (`MPI_Request_free`; its buffer must stay allocated: `keep_for_mpi`).
/// `comm` is never freed after (`keep_communicator`): a late rank's messages would reach a
/// communicator made later with its id. Nothing is done once MPI is finalized.
template <class IsReceive>
void abandon_requests(std::span<MPI_Request> requests, IsReceive&& is_receive, MPI_Comm comm) {
  if (mpi_finalized()) return;
  if (comm != MPI_COMM_NULL) keep_communicator(comm);
  // A receive that matched a longer message before the cancel completes with MPI_ERR_TRUNCATE,
  // which MPICH would hand to MPI_COMM_WORLD's handler (fatal): it is ignored here.
  const request_errors_returned returned;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    if (is_receive(i)) {
      MPI_Cancel(&requests[i]);
      MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
    } else {
      MPI_Request_free(&requests[i]);
    }
  }
}

/// Small buffers of a request that a wait may give up on: on the heap, and handed to
/// `keep_for_mpi` if the wait gives up (MPI can still write them when a late rank arrives).
template <class T, std::size_t N>
class request_buffer {
 public:
  request_buffer() : m_data(std::make_unique<T[]>(N)) {}

  [[nodiscard]] T* data() noexcept { return m_data.get(); }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return m_data[i]; }
  [[nodiscard]] static constexpr std::size_t size() noexcept { return N; }

  /// `wait_all` on `requests`; if it gives up, the buffer stays allocated for MPI.
  /// `peers` as `wait_all`'s.
  void wait(std::span<MPI_Request> requests, std::span<MPI_Status> statuses, const wait_policy& policy,
            std::string_view what, wait_kind kind = wait_kind::collective, std::span<const int> peers = {}) {
    try {
      wait_all(requests, statuses, policy, what, kind, peers);
    } catch (const deadlock_error&) {
      keep_for_mpi(std::move(m_data));
      throw;
    }
  }

 private:
  std::unique_ptr<T[]> m_data;
};

/// `op` (`MPI_MAX`, `MPI_SUM`, ...) of `values` element-wise over `comm` (`MPI_Iallreduce`),
/// waited with `policy`: a `deadlock_error` after its timeout when a rank never joins, instead
/// of a hang.
template <std::size_t N>
std::array<std::uint64_t, N> allreduce_waited(const std::array<std::uint64_t, N>& values, MPI_Op op, MPI_Comm comm,
                                              const wait_policy& policy, std::string_view what,
                                              wait_kind kind = wait_kind::collective) {
  request_buffer<std::uint64_t, 2 * N> buffer;  // in: [0, N), out: [N, 2 N)
  for (std::size_t i = 0; i < N; ++i) buffer[i] = values[i];
  MPI_Request request = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Iallreduce, buffer.data(), buffer.data() + N, static_cast<int>(N), MPI_UINT64_T, op, comm,
                   &request);
  buffer.wait(std::span(&request, 1), {}, policy.on(comm), what, kind);
  std::array<std::uint64_t, N> all{};
  for (std::size_t i = 0; i < N; ++i) all[i] = buffer[N + i];
  return all;
}

/// The element-wise maximum of `values` over `comm`, waited with `policy` (`allreduce_waited`).
/// Values are compared as signed by MPICH 4.0.2 (its MPI_MAX on MPI_UINT64_T: the maximum of 0
/// and 2^64 - 2 comes out 0), so callers that need the order keep them below 2^63; the equality
/// test of `{h, ~h}` works under either order.
template <std::size_t N>
std::array<std::uint64_t, N> allreduce_max(const std::array<std::uint64_t, N>& values, MPI_Comm comm,
                                           const wait_policy& policy, std::string_view what,
                                           wait_kind kind = wait_kind::collective) {
  return allreduce_waited<N>(values, MPI_MAX, comm, policy, what, kind);
}

/// The element-wise sum of `values` over `comm` (modulo 2^64), waited with `policy`
/// (`allreduce_waited`).
template <std::size_t N>
std::array<std::uint64_t, N> allreduce_sum(const std::array<std::uint64_t, N>& values, MPI_Comm comm,
                                           const wait_policy& policy, std::string_view what,
                                           wait_kind kind = wait_kind::collective) {
  return allreduce_waited<N>(values, MPI_SUM, comm, policy, what, kind);
}

/// A duplicate of `comm` made once every rank of it has come: `MPI_Comm_idup`, then a barrier on
/// the duplicate (a late rank whose idup matched the abandoned ones of ranks that gave up finds
/// nobody there), both waited with `policy`. The first step of an object's collective set-up:
/// a rank that never makes the object leaves the others a `deadlock_error` naming `what` after
/// the timeout ("<what> (communicator set-up)", or "(every rank here)" for the barrier), not a
/// hang in `MPI_Comm_dup`. Once it returns, every rank is in the set-up.
inline owned_comm duplicate_on_arrival(MPI_Comm comm, const wait_policy& policy, std::string_view what) {
  HETERO_EXPECTS(comm != MPI_COMM_NULL, what, ": the MPI communicator to duplicate is MPI_COMM_NULL");
  auto handle = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
  try {
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Comm_idup, comm, handle.get(), &request);
    wait_one(request, policy, std::string(what) + " (communicator set-up)");
    HETERO_MPI_CHECK(MPI_Ibarrier, *handle, &request);
    wait_one(request, policy, std::string(what) + " (every rank here)");
  } catch (const deadlock_error&) {
    keep_for_mpi(std::move(handle));  // MPI may still complete the duplicate
    throw;
  }
  return owned_comm::adopt(*handle);
}

/// The arguments every rank of a collective set-up must pass alike, for `agreed_setup_step`: a
/// hash of their values (`hash_of`) and what they are, for the error (empty: nothing checked).
struct same_arguments {
  std::uint64_t hash = 0;
  std::string_view what;
};

/// FNV-1a of `values`' bytes.
inline std::uint64_t hash_of(std::span<const std::int64_t> values) noexcept {
  std::uint64_t h = 14695981039346656037ULL;
  for (const std::int64_t v : values)
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (static_cast<std::uint64_t>(v) >> (8 * byte)) & 0xffU;
      h *= 1099511628211ULL;
    }
  return h;
}

/// What the ranks of a collective call agreed on after a step that may fail on some of them
/// (`agree_on_step`).
struct step_agreement {
  std::exception_ptr failure;     ///< what this rank's step threw; null where it did not
  int failed_rank = -1;           ///< the lowest rank whose step threw; -1: none did
  bool arguments_differ = false;  ///< the ranks passed different `same_arguments`
};

/// Runs `step()`, a part of a collective call that may fail on some ranks only (an allocation
/// of this rank's block, its staging buffer), and agrees with every rank of `comm` on the
/// outcome and on `same.hash` (one `MPI_Iallreduce`, waited with `policy`) before the call's
/// next blocking step, where the others would wait for a rank that has left. The callers raise
/// their errors from the result, on every rank alike.
template <class Step>
step_agreement agree_on_step(MPI_Comm comm, const wait_policy& policy, std::string_view what, Step&& step,
                             const same_arguments& same = {}) {
  step_agreement agreed;
  try {
    step();
  } catch (...) {
    agreed.failure = std::current_exception();
  }
  int rank = 0, size = 1;
  HETERO_MPI_CHECK(MPI_Comm_rank, comm, &rank);
  HETERO_MPI_CHECK(MPI_Comm_size, comm, &size);
  // The maximum of (size - rank) over the ranks that failed names the lowest of them; the
  // maxima of h and ~h are equal and complementary only when every rank has the same h.
  const auto mine = static_cast<std::uint64_t>(agreed.failure ? size - rank : 0);
  const std::uint64_t h = same.what.empty() ? 0 : same.hash;
  const auto all = allreduce_max<3>({mine, h, ~h}, comm, policy, what);
  agreed.failed_rank = all[0] == 0 ? -1 : size - static_cast<int>(all[0]);
  agreed.arguments_differ = all[1] != ~all[2];
  return agreed;
}

/// Runs `step()`, a part of an object's collective set-up that may fail on some ranks only (an
/// allocation of this rank's block), and agrees on the outcome before the set-up's next blocking
/// step (`agree_on_step`): a rank whose step threw rethrows what it threw, and every other rank
/// raises `runtime_error` naming the lowest such rank, instead of waiting in that next step for
/// a rank that has left. Where the ranks' `same.hash` differ, every rank raises
/// `invalid_argument` ("the ranks passed different <same.what>"), whatever its step did (a step
/// made from other arguments than the other ranks' is no part of a whole).
template <class Step>
void agreed_setup_step(MPI_Comm comm, const wait_policy& policy, std::string_view what, Step&& step,
                       const same_arguments& same = {}) {
  const step_agreement agreed = agree_on_step(comm, policy, what, std::forward<Step>(step), same);
  if (agreed.arguments_differ)
    raise<invalid_argument>(what, ": the ranks passed different ", same.what,
                            "; every rank must pass the same (this rank's may be the one that differs)");
  if (agreed.failure) std::rethrow_exception(agreed.failure);
  if (agreed.failed_rank >= 0)
    raise<runtime_error>(what, ": rank ", agreed.failed_rank,
                         " could not make its part (its own error says why); the object was made on no rank");
}

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_WAIT_HPP

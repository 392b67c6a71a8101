/// @file
/// What every collective does before and around its algorithm: choose the algorithm (the same
/// on every rank), agree on the arguments when asked to, call MPI's own collective (waiting
/// politely where the node is oversubscribed), and stage device buffers through host memory in
/// a pipeline of chunks.
#ifndef HETERO_COMM_DETAIL_DISPATCH_HPP
#define HETERO_COMM_DETAIL_DISPATCH_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/shm_channel.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"

namespace hetero::detail {

/// What restricts the algorithms of one call.
struct call_traits {
  collective kind;
  std::size_t bytes;              ///< message size the tuning table is keyed on
  std::size_t shm_bytes;          ///< what one rank publishes on the shared-memory path
  std::size_t alignment = 8;      ///< of the element type (the shared-memory payload is 32-byte aligned)
  bool commutative = true;        ///< of the reduction, if any
  std::size_t element_bytes = 1;  ///< sizeof the element type
  bool regroups_exactly = true;   ///< the reduction's bits do not depend on the operands' grouping
};

/// The algorithm for one call: `forced` if given, else the tuned choice; an automatic choice
/// that cannot run here becomes MPI's call, a forced one that cannot raises. Depends only on
/// values that are equal on every rank, so every rank chooses alike.
inline comm_algorithm choose(comm_state& st, const call_traits& call, comm_algorithm forced) {
  const bool automatic = forced == comm_algorithm::automatic;
  comm_algorithm a = automatic ? st.tuning().choose(call.kind, call.bytes) : forced;
  const auto refuse = [&](const auto&... why) -> comm_algorithm {
    if (automatic) return comm_algorithm::mpi;
    raise<invalid_argument>(to_string(call.kind), ": algorithm ", to_string(a), " cannot run here: ", why...);
  };
  if (!implements(call.kind, a)) return refuse(to_string(call.kind), " has no ", to_string(a), " algorithm");
  // Ranks on several nodes, some sharing one: the node-aware algorithm takes the window's place.
  if (automatic && a == comm_algorithm::shm && !st.shm() && st.node_shm() &&
      implements(call.kind, comm_algorithm::hierarchical))
    a = comm_algorithm::hierarchical;
  if (a == comm_algorithm::shm) {
    if (!st.shm() && st.nodes() > 1)
      return refuse("no shared-memory window: the ranks span ", st.nodes(), " nodes");
    if (!st.shm()) return refuse("no shared-memory window: communicator_options::shared_memory is off");
    if (call.shm_bytes > st.shm()->capacity())
      return refuse("the ", call.shm_bytes, " bytes to publish exceed a slot (", st.shm()->capacity(),
                    " bytes; communicator_options::shm_slot_bytes)");
    if (call.alignment > shm_header_bytes)
      return refuse("the element type needs ", call.alignment, "-byte alignment (at most 32)");
  }
  if (a == comm_algorithm::hierarchical) {
    if (!st.node_shm())
      return refuse(
          "it needs ranks on several nodes, some sharing one, and communicator_options::shared_memory "
          "(this communicator has ",
          st.size(), " ranks on ", st.nodes(), " node(s)", st.options().shared_memory ? "" : ", shared_memory off",
          "; see communicator::node_aware())");
    if (!call.commutative && !st.nodes_in_rank_order())
      return refuse(
          "the operation is not commutative (tag it ops::commutative if it is) and the nodes do not "
          "hold consecutive ranks in rank order, so the nodes' partial results cannot be folded in rank "
          "order");
    if (call.element_bytes > st.node_shm()->capacity() || call.alignment > shm_header_bytes)
      return refuse("an element of ", call.element_bytes, " bytes (", call.alignment,
                    "-byte alignment) does not fit a slot of the node's window (", st.node_shm()->capacity(),
                    " bytes, 32-byte alignment)");
  }
  if (call.kind == collective::allreduce && !call.commutative &&
      (a == comm_algorithm::dissemination || a == comm_algorithm::ring || a == comm_algorithm::recursive_halving))
    return refuse("the operation is not commutative (tag it ops::commutative if it is)");
  if (call.kind == collective::allreduce && a == comm_algorithm::dissemination && !call.regroups_exactly)
    return refuse(
        "each rank groups the operands its own way, so a floating-point or user operation would leave the "
        "ranks with different bits (it runs the built-in operations on integers; use recursive_doubling)");
  if (call.kind == collective::allgather && a == comm_algorithm::recursive_doubling &&
      !std::has_single_bit(static_cast<unsigned>(st.size())))
    return refuse(st.size(), " ranks are not a power of two (use bruck or ring)");
  return a;
}

/// A call's arguments as every rank must see them (-1: not compared).
struct call_signature {
  collective kind;
  long long count = -1;
  int root = -1;
  int op = -1;
  int algorithm = 0;
  std::size_t element_bytes = 0;  ///< sizeof the element type (0: none, a barrier)
};

/// Whether collective `c` has a root (its argument checks then send the root's verdict).
constexpr bool has_root(collective c) noexcept {
  return c == collective::broadcast || c == collective::scatter || c == collective::scatterv ||
         c == collective::gather || c == collective::gatherv || c == collective::reduce;
}

/// Whether a blocking call of `kind` takes the shared-memory status step of consistent checks
/// when its algorithm is not the shared-memory one (where every rank hears of any rank's
/// rejection, see `shm_root_status`). Without a window the ranks agree by message instead
/// (`agrees_by_message`). A barrier never does: it has no arguments to reject.
inline bool takes_status(comm_state& st, collective kind) noexcept {
  return kind != collective::barrier && st.shm() != nullptr;
}

/// Whether a blocking call under consistent checks agrees on its arguments by message (`agree`)
/// before any data moves: where there is no shared-memory window (the ranks span nodes, or
/// `communicator_options::shared_memory` is off) and more than one rank; every collective alike
/// (for a barrier the agreement is the barrier, unless an algorithm is forced).
inline bool agrees_by_message(comm_state& st) noexcept { return st.shm() == nullptr && st.size() > 1; }

/// Marks the communicator's current blocking call as one every rank is known to be in (see
/// `comm_state::all_present`) for as long as it lives.
class all_present_scope {
 public:
  explicit all_present_scope(comm_state& st) noexcept : m_st(st) { m_st.set_all_present(true); }
  ~all_present_scope() { m_st.set_all_present(false); }
  all_present_scope(const all_present_scope&) = delete;
  all_present_scope& operator=(const all_present_scope&) = delete;

 private:
  comm_state& m_st;
};

/// The argument checks in force: `argument_check::full` when the older `verify_arguments` is set.
inline argument_check checks_of(const comm_state& st) noexcept {
  return st.options().verify_arguments ? argument_check::full : st.options().argument_checks;
}

/// `argument_check::consistent` on a shared-memory window for a collective whose algorithm does
/// not carry the ranks' verdicts on their arguments itself (all but the shared-memory ones), and
/// for a rank that rejected its arguments: before any data moves, one op in which every rank
/// publishes its verdict and every rank that accepted reads all of them (`shm_root_status`), so
/// any rank's rejection raises on every other rank (without a window the ranks `agree` by message
/// instead). `rejection`: this rank's error message, null when it accepted; a rank that rejected
/// only takes part (and raises its own error after). Raises `rejected_by_peer` on the others.
/// Returns true when it saw every rank arrive with accepted arguments.
inline bool root_status(comm_state& st, collective kind, int root, const std::string* rejection) {
  shm_channel* channel = st.shm();
  if (channel == nullptr) return false;
  shm_root_status operation(*channel, kind, root, rejection);
  run_blocking(*channel, operation, to_string(kind));
  return rejection == nullptr;
}

/// After a blocking reduction with a user operation: raises the exception the operation threw on
/// this rank, if any, and (unless argument checks are `local`) makes every other rank raise a
/// `hetero::error` naming the first rank whose operation threw: one 4-byte allreduce. The
/// protocol itself always completed (see `op_failure`), so the communicator stays usable.
inline void settle_reduction(comm_state& st, collective kind, const op_failure& failure) {
  const bool failed = failure.failed.load();
  if (checks_of(st) != argument_check::local && st.size() > 1) {
    request_buffer<int, 2> ranks;  // mine, the first that failed
    ranks[0] = failed ? st.rank() : st.size();
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Iallreduce, &ranks[0], &ranks[1], 1, MPI_INT, MPI_MIN, st.comm(), &request);
    MPI_Status status;
    ranks.wait(std::span(&request, 1), std::span(&status, 1), st.policy(), to_string(kind));
    const int first = ranks[1];
    if (!failed && first < st.size())
      raise<error>(to_string(kind), ": rank ", first,
                   " raised an error during the reduction (its own error says what: its reduction operation "
                   "threw, or it found the ranks' arguments inconsistent); the result on this rank (",
                   st.rank(), ") is not valid");
  }
  if (failed) std::rethrow_exception(failure.error);
}

/// Calls MPI's own collective: `blocking()` returns an MPI code; where the node is
/// oversubscribed, or a timeout is set (the default) and the status step did not see every rank
/// arrive (`comm_state::all_present`), `start(&request)` starts the non-blocking form, waited
/// politely (and given up after the timeout) instead. The polling costs MPICH about 5 us per
/// call at 8 bytes (docs/results/comm.md), so calls whose ranks are known present block (watched by
/// the runtime's watchdog past the timeout: `blocking_call`).
template <class Blocking, class Start>
void call_mpi(comm_state& st, std::string_view what, std::string_view call, Blocking&& blocking, Start&& start) {
  // Queued shared-memory requests progress while MPI's call waits: a broadcast root's next call
  // may wait for this rank to finish one of them (`shm_channel::settle`).
  shm_channel* queue = st.shm() != nullptr && !st.shm()->idle() ? st.shm() : nullptr;
  if (queue == nullptr && !st.policy().oversubscribed && (st.policy().timeout() <= 0 || st.all_present())) {
    const blocking_call blocked(st.policy(), what, wait_kind::collective);
    check_mpi(blocking(), call);
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(start(&request), call);
  if (queue != nullptr) return queue->wait_for(request, what);
  MPI_Status status;
  wait_all(std::span(&request, 1), std::span(&status, 1), st.policy(), what);
}

/// Copies `n` elements between memory spaces, asynchronously where the backend can.
template <class T, class To, class From>
void copy_between(T* to, const T* from, std::size_t n) {
  if (n == 0) return;
  using exec = std::conditional_t<Kokkos::SpaceAccessibility<Kokkos::HostSpace, From>::accessible,
                                  typename To::execution_space, typename From::execution_space>;
  Kokkos::deep_copy(exec(), unmanaged_view<T, To>(to, n), unmanaged_view<const T, From>(from, n));
}

template <class MemorySpace>
void fence_copies() {
  typename MemorySpace::execution_space().fence();
}

/// How `staged_chunks` cuts `n` elements: pieces of `chunk` elements (at least 1), the last
/// shorter, and one empty piece for n = 0. Whoever receives what it sends piece by piece uses
/// the same cut.
struct staging_pieces {
  staging_pieces(std::size_t chunk_elements, std::size_t n)
      : chunk(std::max<std::size_t>(1, chunk_elements)), count(n == 0 ? 1 : (n + chunk - 1) / chunk), total(n) {}
  /// Elements of piece `j`.
  [[nodiscard]] std::size_t length(std::size_t j) const {
    return std::min(chunk, total - std::min(total, j * chunk));
  }
  std::size_t chunk, count, total;
};

/// Runs a collective on host copies of device data, chunk by chunk: while chunk j runs, chunk
/// j + 1 is already being copied in and chunk j - 1 out (two staging slots each way). Each
/// rank's part is `blocks` blocks of `block_n` elements (send_blocks on the way in,
/// recv_blocks on the way out; 0 for none); chunk j covers elements [j c, (j + 1) c) of every
/// block, c = staging_chunk_bytes / (sizeof(T) * divisor) on every rank. `run(send, recv, c)`
/// runs the collective on one chunk of host buffers (blocks of c elements, consecutive).
template <class T, class MemorySpace, class Run>
void staged_chunks(comm_state& st, const T* send, std::size_t send_blocks, T* recv, std::size_t recv_blocks,
                   std::size_t block_n, std::size_t divisor, Run&& run) {
  using host = Kokkos::HostSpace;
  const staging_pieces pieces(st.options().staging_chunk_bytes / (sizeof(T) * divisor), block_n);
  const std::size_t c = pieces.chunk, chunks = pieces.count;
  const auto copy_in = [&](std::size_t j) {
    T* slot = st.staging_out(j).template get<T>(send_blocks * c + 1);
    for (std::size_t b = 0; b < send_blocks; ++b)
      copy_between<T, host, MemorySpace>(slot + b * pieces.length(j), send + b * block_n + j * c,
                                         pieces.length(j));
  };
  if (send_blocks > 0) copy_in(0);
  for (std::size_t j = 0; j < chunks; ++j) {
    fence_copies<MemorySpace>();  // chunk j is in, chunk j - 1 is out: both slots are free again
    if (send_blocks > 0 && j + 1 < chunks) copy_in(j + 1);
    T* in = send_blocks > 0 ? st.staging_out(j).template get<T>(send_blocks * c + 1) : nullptr;
    T* out = recv_blocks > 0 ? st.staging_in(j).template get<T>(recv_blocks * c + 1) : nullptr;
    run(static_cast<const T*>(in), out, pieces.length(j));
    for (std::size_t b = 0; b < recv_blocks; ++b)
      copy_between<T, MemorySpace, host>(recv + b * block_n + j * c, out + b * pieces.length(j), pieces.length(j));
  }
  fence_copies<MemorySpace>();
}

/// Counts or displacements as the `int`s MPI takes, into `out` (refusing, never narrowing,
/// what does not fit).
inline const std::vector<int>& mpi_counts(std::span<const std::size_t> values, std::string_view what,
                                          std::vector<int>& out) {
  out.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = mpi_count(values[i], what);
  return out;
}

/// Runs a v-collective on host copies of device data, whole (the blocks differ in size, so
/// they are not cut into chunks): the listed send blocks are copied in, `run(send, recv)` runs
/// on host buffers laid out like the originals, and the listed receive blocks are copied out.
template <class T, class MemorySpace, class Run>
void staged_blocks(comm_state& st, const T* send, std::span<const std::size_t> send_counts,
                   std::span<const std::size_t> send_displs, T* recv, std::span<const std::size_t> recv_counts,
                   std::span<const std::size_t> recv_displs, Run&& run) {
  using host = Kokkos::HostSpace;
  const auto extent = [](std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
    std::size_t e = 0;
    for (std::size_t i = 0; i < counts.size(); ++i)
      if (counts[i] > 0) e = std::max(e, displs[i] + counts[i]);
    return e;
  };
  T* host_send = send ? st.staging_out(0).template get<T>(extent(send_counts, send_displs) + 1) : nullptr;
  T* host_recv = recv ? st.staging_in(0).template get<T>(extent(recv_counts, recv_displs) + 1) : nullptr;
  for (std::size_t i = 0; send && i < send_counts.size(); ++i)
    copy_between<T, host, MemorySpace>(host_send + send_displs[i], send + send_displs[i], send_counts[i]);
  fence_copies<MemorySpace>();
  run(static_cast<const T*>(host_send), host_recv);
  for (std::size_t i = 0; recv && i < recv_counts.size(); ++i)
    copy_between<T, MemorySpace, host>(recv + recv_displs[i], host_recv + recv_displs[i], recv_counts[i]);
  fence_copies<MemorySpace>();
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_DISPATCH_HPP

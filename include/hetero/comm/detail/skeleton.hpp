/// @file
/// The one skeleton every collective runs through. A collective is described by a *shape*
/// (broadcast.hpp, gather.hpp, ...): the parameters it takes, how they become a
/// `collective_call` (buffers, counts, root, reduction), where its data lies in each buffer and
/// how each of its algorithms runs. The skeleton does the rest, once for all: parameter
/// checks, the algorithm choice, the route of the buffers (host, direct, or staged through host
/// memory), the returned result, and for the non-blocking forms the request that keeps its
/// staging buffers and counts alive.
///
/// A shape `S` derives from `shape_base` (its names, flags and defaults) and provides:
/// - `check<Args...>()` (static checks of the parameters);
/// - `parse(st, options, args...)`: the checked `collective_call`;
/// - `empty(call)`, `traits(st, call)` (what the tuning table is keyed on);
/// - `run<T, Ops>(st, algorithm, call)`: the call on buffers `Ops` can touch;
/// - `send_layout(st, call)`, `recv_layout(st, call)`: the blocks read and written;
/// - `mpi(st, call, context, request)`: MPI's collective, blocking or not (mpi_form.hpp), which
///   `run` calls through `run_mpi` and the non-blocking form directly;
/// - `start_shm(st, call)` (when `shm_start`);
/// - what its `shape_flags` ask for (`run_staged`, `result_size`, `reroute`, `start_shm`).
#ifndef HETERO_COMM_DETAIL_SKELETON_HPP
#define HETERO_COMM_DETAIL_SKELETON_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/buffer.hpp"
#include "hetero/comm/detail/arguments.hpp"
#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/mpi_form.hpp"
#include "hetero/comm/detail/scratch.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/reduce_ops.hpp"
#include "hetero/comm/request.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"

namespace hetero::detail {

/// The reduction of a collective that reduces nothing.
struct no_reduction {
  static constexpr bool commutative = true;
  static constexpr builtin_op builtin = builtin_op::none;
};

/// One call of a collective, checked: what every algorithm needs.
template <class T, class M, class R = no_reduction>
struct collective_call {
  using element_type = T;
  using memory_space = M;
  using reduction_type = R;
  const T* send = nullptr;  ///< null: nothing sent from here, or in place (the data sits in recv)
  T* recv = nullptr;        ///< null: nothing received here (or a scatter root in place)
  std::size_t n = 0;        ///< elements per rank; v-collectives: this rank's own count
  int root = -1;
  comm_algorithm forced = comm_algorithm::automatic;
  std::span<const std::size_t> counts, displs;  ///< v-collectives: every rank's block
  const R* reduction = nullptr;
};

/// What every collective's parameters hold besides its buffers.
struct call_options {
  comm_algorithm forced;
  int root;
  std::string_view what;  ///< the member called, for messages
};

/// A call with `o`'s root and algorithm; the shape fills in the rest.
template <class T, class M, class R = no_reduction>
collective_call<T, M, R> new_call(const call_options& o) {
  collective_call<T, M, R> call;
  call.root = o.root;
  call.forced = o.forced;
  return call;
}

/// `call` on other buffers (one chunk of a staged call).
template <class Call, class T>
Call on_buffers(Call call, const T* send, T* recv, std::size_t n) {
  call.send = send;
  call.recv = recv;
  call.n = n;
  return call;
}

/// Where one side of a call lies in its buffer: the listed blocks (counts[i] elements at
/// displs[i]), or one block of `length` elements at `offset`.
struct block_layout {
  std::span<const std::size_t> counts, displs;
  std::size_t offset = 0;
  std::size_t length = 0;

  static block_layout none() { return {}; }
  static block_layout one(std::size_t offset, std::size_t length) { return {{}, {}, offset, length}; }
  static block_layout listed(std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
    return {counts, displs, 0, 0};
  }

  /// Calls `f(offset, length)` for every block that is not empty.
  template <class F>
  void each(F&& f) const {
    if (counts.empty()) {
      if (length > 0) f(offset, length);
      return;
    }
    for (std::size_t i = 0; i < counts.size(); ++i)
      if (counts[i] > 0) f(displs[i], counts[i]);
  }

  /// The elements a buffer must hold for every block.
  [[nodiscard]] std::size_t extent() const {
    std::size_t e = 0;
    each([&](std::size_t at, std::size_t n) { e = std::max(e, at + n); });
    return e;
  }
};

/// What a shape says of itself besides its functions.
struct shape_flags {
  bool chunked = false;               ///< staged blocking calls pipeline fixed-size chunks (`run_staged`)
  bool has_result = false;            ///< the send_buf-only form returns the result (`result_size`)
  bool reduces = false;               ///< takes op(...); a single value's result is a value
  bool listed = false;                ///< every rank's block listed (v-collectives): never empty, since other
                                      ///< ranks may have data; tuned at size 0 unless `traits` says more
  bool reroutes = false;              ///< may change the route for an algorithm (`reroute`)
  bool shm_start = true;              ///< the i-form may run on shared memory (`start_shm`)
  bool start_needs_recv_buf = false;  ///< the i-form needs recv_buf or send_recv_buf
};

/// The name of a collective's non-blocking form.
constexpr std::string_view start_name_of(collective c) noexcept {
  switch (c) {
    case collective::barrier: return "ibarrier";
    case collective::broadcast: return "ibroadcast";
    case collective::scatter: return "iscatter";
    case collective::scatterv: return "iscatterv";
    case collective::gather: return "igather";
    case collective::gatherv: return "igatherv";
    case collective::reduce: return "ireduce";
    case collective::allgather: return "iallgather";
    case collective::allgatherv: return "iallgatherv";
    case collective::allreduce: return "iallreduce";
  }
  return "unknown";
}

/// What every shape shares: its names and flags, and the defaults for `n` elements per rank
/// (nothing to do when n is 0; the tuning table keyed on n's bytes).
template <collective Kind, shape_flags Flags>
struct shape_base {
  static constexpr collective kind = Kind;
  static constexpr std::string_view name = to_string(Kind);
  static constexpr std::string_view start_name = start_name_of(Kind);
  static constexpr bool chunked = Flags.chunked, has_result = Flags.has_result, reduces = Flags.reduces,
                        listed = Flags.listed, reroutes = Flags.reroutes, shm_start = Flags.shm_start,
                        start_needs_recv_buf = Flags.start_needs_recv_buf;

  template <class Call>
  static bool empty(const Call& call) {
    return !listed && call.n == 0;
  }
  // A listed (v-) shape is keyed on size 0: only the root knows every count.
  template <class Call>
  static call_traits traits(const comm_state&, const Call& call) {
    using T = typename Call::element_type;
    const std::size_t bytes = listed ? 0 : call.n * sizeof(T);
    using R = typename Call::reduction_type;
    return {Kind, bytes, bytes, alignof(T), commutative_for<R, T>, sizeof(T), regroups_exactly<R, T>};
  }
};

/// The route of a call that will run `a`: shared memory (and the hierarchical algorithm, which
/// uses the node windows) always works on host memory.
template <class MemorySpace>
buffer_route route_for(comm_state& st, comm_algorithm a, std::string_view what) {
  const buffer_route r = st.route<MemorySpace>(what);
  if ((a == comm_algorithm::shm || a == comm_algorithm::hierarchical) && r == buffer_route::direct)
    return host_addressable<MemorySpace> ? buffer_route::host : buffer_route::staged;
  return r;
}

/// Non-blocking forms run on shared memory or MPI's non-blocking call.
inline comm_algorithm choose_nonblocking(comm_state& st, const call_traits& call, comm_algorithm forced) {
  if (forced != comm_algorithm::automatic && forced != comm_algorithm::shm && forced != comm_algorithm::mpi)
    raise<invalid_argument>("non-blocking ", to_string(call.kind), " runs on shm or mpi; ", to_string(forced),
                            " was forced");
  if (forced == comm_algorithm::mpi) return forced;
  if (forced == comm_algorithm::automatic && st.tuning().choose(call.kind, call.bytes) != comm_algorithm::shm)
    return comm_algorithm::mpi;
  // shm, or MPI where an automatic shm choice cannot run (the hierarchical algorithm that takes
  // its place across nodes blocks).
  const comm_algorithm a = choose(st, call, forced);
  return a == comm_algorithm::hierarchical ? comm_algorithm::mpi : a;
}

/// Non-blocking forms that run on MPI's non-blocking call only.
inline comm_algorithm mpi_only(collective kind, comm_algorithm forced) {
  if (forced != comm_algorithm::automatic && forced != comm_algorithm::mpi)
    raise<invalid_argument>("non-blocking ", to_string(kind), " runs on mpi; ", to_string(forced), " was forced");
  return comm_algorithm::mpi;
}

/// Host copies of one non-blocking call's buffers, counts and MPI objects, owned by its request.
template <class T>
struct request_keep {
  host_scratch send;
  host_scratch recv;
  std::vector<std::size_t> counts, displs;
  std::vector<int> mpi_counts, mpi_displs;
  std::shared_ptr<void> operation;  ///< e.g. the MPI operation of a reduction
};

/// Copies a call's device data to host buffers laid out like the originals and returns the
/// host (send, recv). An in-place call (send null, or equal to recv) stays in place: its send
/// blocks are copied into the host receive buffer.
template <class T, class M>
std::pair<const T*, T*> stage_in(const T* send, T* recv, const block_layout& in, const block_layout& out,
                                 host_scratch& send_space, host_scratch& recv_space) {
  const bool in_place = send == nullptr || send == recv;
  const std::size_t recv_extent = std::max(out.extent(), in_place ? in.extent() : 0);
  T* host_recv = recv ? recv_space.template get<T>(recv_extent + 1) : nullptr;
  T* host_send = in_place ? (send ? host_recv : nullptr) : send_space.template get<T>(in.extent() + 1);
  const T* from = in_place ? recv : send;
  T* to = in_place ? host_recv : host_send;
  if (from && to)
    in.each([&](std::size_t at, std::size_t n) { copy_between<T, Kokkos::HostSpace, M>(to + at, from + at, n); });
  fence_copies<M>();
  return {host_send, host_recv};
}

/// Copies the received blocks from the host buffer back where they belong.
template <class T, class M>
void stage_out(T* recv, const T* host_recv, const block_layout& out) {
  if (!recv) return;
  out.each(
      [&](std::size_t at, std::size_t n) { copy_between<T, M, Kokkos::HostSpace>(recv + at, host_recv + at, n); });
  fence_copies<M>();
}

/// The staged route of a blocking call, whole (the v-collectives, whose blocks differ in size).
template <class Shape, class T, class M, class Call>
void run_staged_whole(comm_state& st, comm_algorithm a, Call call) {
  const block_layout in = Shape::send_layout(st, call), out = Shape::recv_layout(st, call);
  T* recv = call.recv;
  std::tie(call.send, call.recv) =
      stage_in<T, M>(call.send, call.recv, in, out, st.staging_out(0), st.staging_in(0));
  Shape::template run<T, host_ops>(st, a, call);
  stage_out<T, M>(recv, call.recv, out);
}

/// Runs a checked call: chooses the algorithm (alike on every rank) and the route.
template <class Shape, class Call>
void run_call(comm_state& st, const Call& call) {
  using T = typename Call::element_type;
  using M = typename Call::memory_space;
  // Every rank's payload came inline with the agreement's records (`inline_offer`).
  if constexpr (requires(const std::byte* at, std::size_t stride) { Shape::run_inline(st, call, at, stride); }) {
    if (const auto [at, stride] = st.take_inline_payloads(); at != nullptr) {
      const region inline_part("comm", Shape::name, "inline with the agreement");
      return Shape::run_inline(st, call, at, stride);
    }
  }
  const comm_algorithm a = choose(st, Shape::traits(st, call), call.forced);
  // Consistent checks: the shared-memory algorithms carry the verdicts in the slots they read;
  // the others hear them first (every rank's: on the window here, else by message in the
  // arguments' `agree`). Every rank arrived and accepted on the window: MPI's call cannot wait
  // for a missing one (call_mpi). Not so after an agreement by message: a rank that came late
  // finds the others' records although they gave up, so MPI's call stays polled there.
  std::optional<all_present_scope> present;
  if (a != comm_algorithm::shm && checks_of(st) == argument_check::consistent && takes_status(st, Shape::kind))
    if (root_status(st, Shape::kind, has_root(Shape::kind) ? call.root : -1, nullptr)) present.emplace(st);
  buffer_route route = route_for<M>(st, a, Shape::name);
  if constexpr (Shape::reroutes)
    if (Shape::template reroute<M>(st, a, route, call)) return;
  switch (route) {
    case buffer_route::host: Shape::template run<T, host_ops>(st, a, call); break;
    case buffer_route::direct: Shape::template run<T, kernel_ops<M>>(st, a, call); break;
    case buffer_route::staged:
      if constexpr (Shape::chunked)
        Shape::template run_staged<T, M>(st, a, call);
      else
        run_staged_whole<Shape, T, M>(st, a, call);
  }
}

/// A blocking call once parsed: `run_call`, or for an empty call with consistent checks the
/// status step alone (a rank that rejected its arguments still takes it).
template <class Shape, class Call>
void run_unless_empty(comm_state& st, const Call& call) {
  if (!Shape::empty(call))
    run_call<Shape>(st, call);
  else if (checks_of(st) == argument_check::consistent && takes_status(st, Shape::kind))
    root_status(st, Shape::kind, has_root(Shape::kind) ? call.root : -1, nullptr);
}

/// `run_unless_empty`, and for a reduction with a user operation, which may throw: the algorithms
/// complete the protocol whatever it throws (`op_failure`), then `settle_reduction` raises it
/// here and tells the other ranks. An error of this rank's own (e.g. counts that differ) is
/// settled alike, so that no rank is left in the settling allreduce; a timeout is not (the
/// others are gone).
template <class Shape, class Call>
void run_parsed(comm_state& st, const Call& call) {
  if constexpr (Shape::reduces && user_operation<typename Call::reduction_type>) {
    op_failure failure;
    try {
      const op_failure_scope scope(failure);
      run_unless_empty<Shape>(st, call);
    } catch (const deadlock_error&) {
      throw;
    } catch (const rejected_by_peer&) {
      // With a window, the rank that rejected its arguments settles too (`rejection_settles`);
      // without one it does not, and neither do the others.
      if (!st.shm()) throw;
      failure.record(std::current_exception());
    } catch (...) {
      failure.record(std::current_exception());
    }
    settle_reduction(st, Shape::kind, failure);
  } else {
    run_unless_empty<Shape>(st, call);
  }
}

/// Every rank's count `mine` of a v-collective whose caller gave no counts, exchanged with
/// `CountShape` (gather's to `root`, which alone receives them, or allgather's to every rank)
/// into `counts`; the counts stay empty where they are not received.
template <class CountShape>
void exchange_counts(comm_state& st, std::size_t mine, int root, bool receives, std::string_view what,
                     std::vector<std::size_t>& counts) {
  const unsigned long long n = mine;
  std::vector<unsigned long long> all(receives ? static_cast<std::size_t>(st.size()) : 0);
  auto count_call = new_call<unsigned long long, Kokkos::HostSpace>({comm_algorithm::automatic, root, what});
  count_call.send = &n;
  count_call.recv = all.data();
  count_call.n = 1;
  run_call<CountShape>(st, count_call);
  counts.assign(all.begin(), all.end());
}

/// Runs `body()` as the call `name` of shape `Shape` on `st`: refuses a communicator that is out
/// of step, names the call in the waits' errors and reports (with root and bytes, once parsed),
/// and marks the communicator out of step when a wait gives up or MPI fails.
template <class Shape, class Body>
decltype(auto) guarded_call(comm_state& st, std::string_view name, int root, Body&& body) {
  const region running("comm", name);
  st.check_usable(name);
  wait_call call{"hetero::communicator::", name, has_root(Shape::kind) ? root : -1, -1};
  wait_call_scope scope(call);
  st.forget_agreement();  // an agreement of an earlier call (see `comm_state::agreed`)
  try {
    if (shm_channel* channel = st.shm(); channel && checks_of(st) == argument_check::consistent)
      channel->settle(name, true);  // a root hears of the errors of its last broadcast or scatter
    return body(call);
  } catch (const deadlock_error&) {
    st.mark_out_of_step(name);
    throw;
  } catch (const mpi_error&) {  // MPI's call failed: the ranks' parts of it may still be in flight
    st.mark_out_of_step(name, "raised hetero::mpi_error");
    throw;
  }
}

template <class... Args>
call_options options_of(std::string_view what, Args&... args) {
  return {get_or<parameter::algorithm>(comm_algorithm::automatic, args...), get_or<parameter::root>(0, args...),
          what};
}

/// `blocking` once guarded.
template <class Shape, class... Args>
auto blocking_body(comm_state& st, const call_options& options, wait_call& named, Args&... args) {
  auto call = Shape::parse(st, options, args...);
  if constexpr (Shape::kind != collective::barrier)
    named.bytes = static_cast<long long>(Shape::traits(st, call).bytes);
  if constexpr (Shape::has_result && has_parameter<parameter::send_buf, Args...> &&
                !has_parameter<parameter::recv_buf, Args...>) {
    using B = argument_t<parameter::send_buf, Args...>;
    if constexpr (Shape::reduces && single_value<B>) {
      buffer_element_t<B> result{};
      call.recv = &result;
      run_parsed<Shape>(st, call);
      return result;
    } else {
      auto result = make_result(get<parameter::send_buf>(args...), Shape::result_size(st, call), Shape::name);
      call.recv = result.data();
      run_parsed<Shape>(st, call);
      return result;
    }
  } else {
    run_parsed<Shape>(st, call);
  }
}

/// A blocking collective: the result when only send_buf was given, else nothing.
template <class Shape, class... Args>
auto blocking(comm_state& st, Args&... args) {
  Shape::template check<Args...>();
  const call_options options = options_of(Shape::name, args...);
  return guarded_call<Shape>(st, Shape::name, options.root,
                             [&](wait_call& named) { return blocking_body<Shape>(st, options, named, args...); });
}

/// A non-blocking collective: its request, which owns host copies of staged buffers and the
/// counts, and copies staged results out once done.
template <class Shape, class... Args>
collective_request start(const std::shared_ptr<comm_state>& state, Args&... args) {
  Shape::template check<Args...>();
  static_assert(!Shape::start_needs_recv_buf || has_parameter<parameter::recv_buf, Args...> ||
                    has_parameter<parameter::send_recv_buf, Args...>,
                "hetero: the non-blocking form needs recv_buf(...) or send_recv_buf(...): the result outlives the "
                "call");
  static_assert((Shape::kind != collective::gatherv && Shape::kind != collective::allgatherv) ||
                    has_parameter<parameter::recv_counts, Args...>,
                "hetero: the non-blocking forms of gatherv and allgatherv need recv_counts(...)");
  comm_state& st = *state;
  const region running("comm", Shape::start_name);
  st.check_usable(Shape::start_name);
  const call_options options = options_of(Shape::start_name, args...);
  const wait_call named{"hetero::communicator::", Shape::start_name, has_root(Shape::kind) ? options.root : -1,
                        -1};
  const wait_call_scope scope(named);  // the argument check waits
  // As a blocking call (`guarded_call`): a start that gave up waiting (in the argument check or
  // the shared-memory settle) or whose MPI call failed leaves the ranks out of step.
  try {
    st.forget_agreement();  // an agreement of an earlier call (see `comm_state::agreed`)
    if (shm_channel* channel = st.shm(); channel && checks_of(st) == argument_check::consistent)
      channel->settle(Shape::start_name, false);
    auto call = Shape::parse(st, options, args...);
    using T = typename decltype(call)::element_type;
    using M = typename decltype(call)::memory_space;
    if (Shape::empty(call)) return {};
    auto keep = std::make_shared<request_keep<T>>();
    keep->counts.assign(call.counts.begin(), call.counts.end());  // the communicator's lists are reused
    keep->displs.assign(call.displs.begin(), call.displs.end());
    call.counts = keep->counts;
    call.displs = keep->displs;
    const block_layout in = Shape::send_layout(st, call), out = Shape::recv_layout(st, call);
    if (!call.recv && out.extent() > 0)
      raise<invalid_argument>(Shape::start_name,
                              ": this rank needs recv_buf(...) or send_recv_buf(...) for the result");
    const comm_algorithm a = Shape::shm_start ? choose_nonblocking(st, Shape::traits(st, call), call.forced)
                                              : mpi_only(Shape::kind, call.forced);
    std::function<void()> finish;
    if (route_for<M>(st, a, Shape::start_name) == buffer_route::staged) {
      T* recv = call.recv;
      std::tie(call.send, call.recv) = stage_in<T, M>(call.send, call.recv, in, out, keep->send, keep->recv);
      if (call.recv && out.extent() > 0)
        finish = [recv, host = call.recv, out] { stage_out<T, M>(recv, host, out); };
    }
    // A user's reduction operation may throw: the operation started here records it in the
    // request's failure (guarded while `t_op_failure` points there), and the request raises it when
    // done and tells the other ranks, like `settle_reduction` (one int to each rank, not with
    // `local`).
    std::shared_ptr<request_settle> settle;
    if constexpr (Shape::reduces && user_operation<typename decltype(call)::reduction_type>) {
      settle = std::make_shared<request_settle>();
      settle->tell_others = checks_of(st) != argument_check::local && st.size() > 1;
      if (settle->tell_others) settle->tag = st.next_settle_tag();
    }
    const op_failure_scope guard_scope(settle ? &settle->failure : t_op_failure);
    if constexpr (Shape::shm_start)
      if (a == comm_algorithm::shm)
        return request_access::shm(state, Shape::start_shm(st, call), Shape::start_name, std::move(finish), keep,
                                   std::move(settle));
    MPI_Request request = MPI_REQUEST_NULL;
    mpi_context context{keep->mpi_counts, keep->mpi_displs};
    if constexpr (Shape::reduces) keep->operation = kept_mpi_reduction(call, context);
    check_mpi(Shape::mpi(st, call, context, &request), mpi_names_of(Shape::kind).nonblocking);
    if (request == MPI_REQUEST_NULL) {  // done at once
      if (finish) finish();
      return {};
    }
    return request_access::mpi(state, request, Shape::start_name, std::move(finish), keep, std::move(settle));
  } catch (const deadlock_error&) {
    st.mark_out_of_step(Shape::start_name);
    throw;
  } catch (const mpi_error&) {
    st.mark_out_of_step(Shape::start_name, "raised hetero::mpi_error");
    throw;
  }
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_SKELETON_HPP

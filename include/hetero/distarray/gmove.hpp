/// @file
/// `hetero::gmove(dst, src)`: assigns a section of one array to a section of another, where
/// either side is a distributed array or a local array (XcalableMP's collective `gmove`).
/// Collective over the distributed side's processes.
#ifndef HETERO_DISTARRAY_GMOVE_HPP
#define HETERO_DISTARRAY_GMOVE_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/core/wait_timeout.hpp"
#include "hetero/distarray/detail/operand.hpp"
#include "hetero/distarray/detail/plan_cache.hpp"
#include "hetero/distarray/detail/section_map.hpp"
#include "hetero/distarray/detail/transfer.hpp"
#include "hetero/distarray/distributed_array.hpp"

namespace hetero {

template <class T, class SrcSpace, class DstSpace>
class gmove_handle;

namespace detail {

/// Whether a plan is in use by a run: a flag under a mutex held only to read or change it, so
/// that the thread completing the run may release it (a handle may be waited for on another
/// thread, or polled by a task graph's worker), which a mutex held for the whole run forbids.
/// Not `std::binary_semaphore`: some libstdc++ releases could lose its wake-ups (GCC PR 104928).
class plan_busy {
 public:
  /// Waits while another run holds it, then holds it; `deadlock_error` after hetero's wait
  /// timeout (an unfinished `gmove_async` of the same sections whose handle only this thread
  /// would complete never releases it).
  void acquire() {
    const auto limit = resolve_timeout(inherit_timeout, "hetero's wait timeout");
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(m_mutex);
    const auto free = [this] { return !m_held; };
    if (limit == forever_ns) {
      m_free.wait(lock, free);
    } else if (!m_free.wait_for(lock, limit, free)) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      throw deadlock_error(
          message("hetero::gmove waited ", waited,
                  " s for an earlier gmove_async of the same sections to complete (they share one plan, run once "
                  "at a time); complete its handle first (wait(), test() until true, or a task graph that adopted "
                  "it), or, if another thread completes it, let that thread finish",
                  wait_timeout_advice()),
          {}, waited, 0, -1);
    }
    m_held = true;
  }
  /// Holds it if no run does; whether it does now.
  bool try_acquire() {
    std::lock_guard lock(m_mutex);
    if (m_held) return false;
    m_held = true;
    return true;
  }
  /// Gives it back (any thread).
  void release() noexcept {
    {
      std::lock_guard lock(m_mutex);
      m_held = false;
    }
    m_free.notify_one();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_free;
  bool m_held = false;
};

/// A gmove's messages and buffers; one run at a time (plans are shared between arrays): the
/// run holds `busy` from its start until it completes, on whichever thread completes it.
template <class T, class SrcSpace, class DstSpace>
struct gmove_plan {
  transfer_plan<T, SrcSpace, DstSpace> transfer;
  plan_busy busy;
};

/// A claim on a plan's `busy`: released once, by whichever thread releases it.
template <class Plan>
class plan_claim {
 public:
  plan_claim() = default;
  /// Claims `plan`, waiting while another run holds it.
  static plan_claim wait_for(Plan& plan) {
    plan.busy.acquire();
    return plan_claim(&plan);
  }
  /// Claims `plan` if no run holds it; an empty claim otherwise.
  static plan_claim try_claim(Plan& plan) { return plan.busy.try_acquire() ? plan_claim(&plan) : plan_claim(); }

  plan_claim(plan_claim&& other) noexcept : m_plan(std::exchange(other.m_plan, nullptr)) {}
  plan_claim& operator=(plan_claim&& other) noexcept {
    if (this != &other) {
      release();
      m_plan = std::exchange(other.m_plan, nullptr);
    }
    return *this;
  }
  plan_claim(const plan_claim&) = delete;
  plan_claim& operator=(const plan_claim&) = delete;
  ~plan_claim() { release(); }

  [[nodiscard]] bool held() const noexcept { return m_plan != nullptr; }
  void release() noexcept {
    if (m_plan) std::exchange(m_plan, nullptr)->busy.release();
  }

 private:
  explicit plan_claim(Plan* plan) noexcept : m_plan(plan) {}
  Plan* m_plan = nullptr;
};

inline constexpr int gmove_tag = 200;

/// The messages this rank (`me` of `ranks` in `comm`) sends and receives for dst = src.
template <class T, class SrcSpace, class DstSpace, int Rank>
std::shared_ptr<gmove_plan<T, SrcSpace, DstSpace>> make_gmove_plan(const operand<T, Rank, SrcSpace>& src,
                                                                   const operand<T, Rank, DstSpace>& dst, int me,
                                                                   int ranks, MPI_Comm comm) {
  std::vector<message_spec<Rank>> sends, recvs;
  const auto& s = src.side;
  const auto& d = dst.side;
  if (src.distributed()) {
    const auto out = exchange_boxes(s, d, walk::src_owned, dst.distributed() ? group::dst_owner : group::none);
    for (const auto& p : out) {
      if (dst.distributed()) {
        sends.push_back({p.peer, gmove_tag, p.src_boxes});
      } else {  // a local destination: every rank receives the same data
        for (int r = 0; r < ranks; ++r)
          sends.push_back({r, gmove_tag, r == 0 ? p.src_boxes : decltype(p.src_boxes){}, r > 0});
      }
    }
  } else {  // a local source: every rank copies from its own copy
    for (const auto& p : exchange_boxes(s, d, dst.distributed() ? walk::dst_owned : walk::all, group::none))
      sends.push_back({me, gmove_tag, p.src_boxes});
  }
  const walk in = dst.distributed() ? walk::dst_owned : walk::all;
  for (const auto& p : exchange_boxes(s, d, in, src.distributed() ? group::src_owner : group::none))
    recvs.push_back({src.distributed() ? p.peer : me, gmove_tag, p.dst_boxes});

  auto plan = std::make_shared<gmove_plan<T, SrcSpace, DstSpace>>();
  plan->transfer.me = me;
  plan->transfer.policy = make_wait_policy(comm);
  plan->transfer.send = transfer_side<T, SrcSpace>(sends, src.staged);
  plan->transfer.recv = transfer_side<T, DstSpace>(recvs, dst.staged);
  return plan;
}

// Declared before gmove_handle, which befriends it.
template <class T, int Rank, class SrcSpace, class DstSpace>
gmove_handle<T, SrcSpace, DstSpace> start_gmove(const operand<T, Rank, SrcSpace>& src,
                                                const operand<T, Rank, DstSpace>& dst, std::shared_ptr<void> keep,
                                                bool wait_for_plan);

}  // namespace detail

/// A gmove in flight (from `gmove_async`): `wait()` completes it, `test()` progresses it
/// without blocking and says whether it completed. Destroying a handle that was not completed
/// waits for it. Like every collective, each rank completes its own handle, on any of its
/// threads (one at a time); a task graph can depend on it directly
/// (`graph.adopt(hetero::out(e), std::move(handle))`, whose workers poll it).
template <class T, class SrcSpace, class DstSpace>
class gmove_handle {
 public:
  /// Takes over `other`'s gmove; `other` is left with nothing in flight.
  gmove_handle(gmove_handle&& other) noexcept
      : m_keep(std::move(other.m_keep)), m_plan(std::move(other.m_plan)), m_claim(std::move(other.m_claim)) {
    if (other.m_run) m_run.emplace(std::move(*other.m_run));
    other.m_run.reset();
  }
  gmove_handle& operator=(gmove_handle&&) = delete;
  gmove_handle(const gmove_handle&) = delete;
  gmove_handle& operator=(const gmove_handle&) = delete;
  ~gmove_handle() {
    try {
      wait();
    } catch (...) {  // a destructor must not throw; whoever waits saw the error
      release();
    }
  }

  /// Completes the gmove: the destination holds the source's values on return.
  void wait() {
    if (!m_run) return;
    try {
      m_run->wait("gmove");
    } catch (...) {
      release();
      throw;
    }
    release();
  }

  /// Progresses without blocking; true once the gmove completed (wait() then returns at once).
  bool test() {
    if (!m_run) return true;
    try {
      if (!m_run->test()) return false;
      m_run->wait("gmove");  // everything arrived: only the local scatter is left
    } catch (...) {
      release();
      throw;
    }
    release();
    return true;
  }

  /// Whether the gmove completed (by wait() or test()).
  [[nodiscard]] bool done() const noexcept { return !m_run; }

 private:
  template <class U, int R, class S, class D>
  friend gmove_handle<U, S, D> detail::start_gmove(const detail::operand<U, R, S>&,
                                                   const detail::operand<U, R, D>&, std::shared_ptr<void>, bool);
  using plan_type = detail::gmove_plan<T, SrcSpace, DstSpace>;

  // `copy`: the source's copy where the sides overlap (`from` is then its data), which the run
  // owns and, like the source storage of `targets`, keeps allocated if it gives up.
  gmove_handle(std::shared_ptr<void> keep, std::shared_ptr<plan_type> plan, detail::plan_claim<plan_type> claim,
               detail::abandon_targets targets, Kokkos::View<T*, SrcSpace> copy, MPI_Comm comm, const T* from,
               T* to)
      : m_keep(std::move(keep)), m_plan(std::move(plan)), m_claim(std::move(claim)) {
    m_run.emplace(m_plan->transfer, comm, from, to, targets, std::move(copy));
    try {
      m_run->start();
    } catch (...) {
      release();
      throw;
    }
  }

  void release() noexcept {
    m_run.reset();
    m_claim.release();  // before the plan it points to
    m_plan.reset();
    m_keep.reset();
  }

  std::shared_ptr<void> m_keep;  // the arrays or Views of both sides, alive while in flight
  std::shared_ptr<plan_type> m_plan;
  detail::plan_claim<plan_type> m_claim;  // m_plan's busy, held while in flight
  // A run that gives up keeps what its released sends read (the source array's storage or the
  // overlapping source's copy) and marks the array whose communicator carried the messages; the
  // arrays themselves (their windows, plans, communicators) still end as usual.
  std::optional<detail::transfer_run<T, SrcSpace, DstSpace>> m_run;
};

namespace detail {

/// Plans (or finds the plan of) dst = src and starts it. `wait_for_plan`: a blocking gmove
/// waits while another thread runs the cached plan; an asynchronous one (whose own thread may
/// hold it) runs a private copy of the plan instead.
template <class T, int Rank, class SrcSpace, class DstSpace>
gmove_handle<T, SrcSpace, DstSpace> start_gmove(const operand<T, Rank, SrcSpace>& src,
                                                const operand<T, Rank, DstSpace>& dst, std::shared_ptr<void> keep,
                                                bool wait_for_plan) {
  if (!dst.writable) raise<invalid_argument>("gmove: the destination is a View of const elements");
  if (src.shape() != dst.shape())
    raise<invalid_argument>("gmove: the destination section has shape ", format_array(dst.shape()),
                            " but the source section has shape ", format_array(src.shape()),
                            "; both sections must have the same number of indices on every axis");
  MPI_Comm comm = MPI_COMM_SELF;
  if (src.distributed() && dst.distributed() && !congruent(src.comm(), dst.comm()))
    raise<invalid_argument>("gmove: the source and destination arrays are distributed over different processes; ",
                            "both must span the same ranks in the same order");
  // The messages run on the destination's communicator where it is distributed, else on the
  // source's. That array holds the plan, refuses the gmove once an abandoned exchange left its
  // communicator out of step, and is the one this gmove's abandoning marks.
  plan_cache* holder = nullptr;
  exchange_mark* exchanges = nullptr;
  if (dst.distributed()) {
    comm = dst.comm();
    holder = &dst.state->plans;
    exchanges = &dst.state->exchanges;
    exchanges->check("gmove", dst.state->options.label);
  } else if (src.distributed()) {
    comm = src.comm();
    holder = &src.state->plans;
    exchanges = &src.state->exchanges;
    exchanges->check("gmove", src.state->options.label);
  }
  int me = 0, ranks = 1;
  HETERO_MPI_CHECK(MPI_Comm_rank, comm, &me);
  HETERO_MPI_CHECK(MPI_Comm_size, comm, &ranks);

  plan_key key;
  key.add(me).add(ranks).add(static_cast<std::int64_t>(sizeof(T)));
  src.describe(key);
  dst.describe(key);
  auto build = [&] { return make_gmove_plan<T, SrcSpace, DstSpace>(src, dst, me, ranks, comm); };
  std::shared_ptr<gmove_plan<T, SrcSpace, DstSpace>> plan;
  if (holder != nullptr) {
    plan = holder->template get<gmove_plan<T, SrcSpace, DstSpace>>("gmove", key.str(), true, build);
  } else {
    plan = build();  // local = local: nothing to keep
  }

  // A source that shares memory with the destination is read from a copy, so that no element
  // is overwritten before it is sent.
  const T* from = src.data;
  Kokkos::View<T*, SrcSpace> copy;
  if (overlaps(src.data, src.span * sizeof(T), dst.data, dst.span * sizeof(T))) {
    copy = Kokkos::View<T*, SrcSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hetero::gmove::source"),
                                      src.span);
    Kokkos::deep_copy(copy, flat_view<T, SrcSpace>(src.data, src.span));
    from = copy.data();
  }
  using claim_type = plan_claim<gmove_plan<T, SrcSpace, DstSpace>>;
  claim_type claim = wait_for_plan ? claim_type::wait_for(*plan) : claim_type::try_claim(*plan);
  if (!claim.held()) {
    plan = build();  // the cached plan is in flight: run a private one (the same messages)
    claim = claim_type::try_claim(*plan);
  }
  // A local source never sends through MPI (every rank copies from its own).
  const abandon_targets targets{src.distributed() ? storage_keeper::of(*src.state) : storage_keeper{}, exchanges,
                                "gmove"};
  return gmove_handle<T, SrcSpace, DstSpace>(std::move(keep), std::move(plan), std::move(claim), targets,
                                             std::move(copy), comm, from, dst.data);
}

template <class Dst, class Src>
auto begin_gmove(const Dst& dst, const Src& src, std::shared_ptr<void> keep, bool wait_for_plan) {
  const auto d = make_operand(dst, "gmove destination");
  const auto s = make_operand(src, "gmove source");
  using dst_type = typename decltype(d)::value_type;
  using src_type = typename decltype(s)::value_type;
  static_assert(std::is_same_v<dst_type, src_type>,
                "hetero: gmove needs the same element type on both sides; convert one side first");
  static_assert(decltype(d)::rank == decltype(s)::rank, "hetero: gmove needs sections of the same rank");
  return start_gmove(s, d, std::move(keep), wait_for_plan);
}

}  // namespace detail

/// Assigns `src` to `dst` element by element, in row-major order of the sections (collective
/// over the processes of the distributed side(s); every rank passes the same sections).
/// Either side is a `distributed_array`, a section of one (`array.section(...)`), a local
/// Kokkos View or a section of one (`hetero::section(view, ...)`):
/// - distributed = distributed: any two distributions over the same processes, e.g. block
///   to cyclic redistribution;
/// - local = distributed: every rank receives the whole section into its own local array;
/// - distributed = local: every owner copies its elements from its own local array (the
///   local arrays are taken to hold the same values everywhere);
/// - local = local: a copy on every rank.
/// The messages (one per pair of ranks, bulk) are planned once per pair of layouts and
/// sections and reused. Throws `invalid_argument` for sections out of bounds or of
/// different shapes.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// hetero::distributed_array<double, 1> b(hetero::block_space(n / 2)), c(hetero::block_space(n));
/// -->
/// @code
/// hetero::gmove(c.section({hetero::slice{0, n, 2}}), b.section({hetero::slice{0, n / 2}}));
/// @endcode
template <class Dst, class Src>
void gmove(const Dst& dst, const Src& src) {
  const region running("distarray", "gmove");
  detail::begin_gmove(dst, src, nullptr, true).wait();
}

/// `gmove(dst, src)` started and not waited for: returns a `gmove_handle` whose `wait()` (or a
/// `test()` that returned true) completes it; the handle keeps both sides alive until then.
/// Collective like gmove: every rank starts the same gmoves in the same order.
/// <!-- snippet: fragment
/// hetero::distributed_array<double, 1> a(hetero::block_space(64)), b(hetero::block_space(64));
/// auto compute_something_else = [] {};
/// -->
/// @code
/// auto move = hetero::gmove_async(b, a);  // redistribute a into b
/// compute_something_else();
/// move.wait();
/// @endcode
template <class Dst, class Src>
auto gmove_async(const Dst& dst, const Src& src) {
  const region running("distarray", "gmove_async");
  return detail::begin_gmove(dst, src, std::make_shared<std::pair<Dst, Src>>(dst, src), false);
}

}  // namespace hetero

#endif  // HETERO_DISTARRAY_GMOVE_HPP

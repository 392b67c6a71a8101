/// @file
/// The engine under reflect and gmove: a precomputed set of messages (each a list of rows in
/// the sender's or receiver's storage), buffers allocated once, and one run of it: post the
/// receives, gather and send, copy what stays on this rank, wait, scatter.
#ifndef HETERO_DISTARRAY_DETAIL_TRANSFER_HPP
#define HETERO_DISTARRAY_DETAIL_TRANSFER_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/datatype.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/distarray/concepts.hpp"
#include "hetero/distarray/detail/exchange_mark.hpp"
#include "hetero/distarray/detail/rows.hpp"

namespace hetero::detail {

/// Keeps `storage` (a Kokkos View) allocated until the process ends: a send released to MPI
/// after a wait gave up may still read it when a late rank receives the message. Out of memory
/// keeps nothing (the caller is already raising the wait's error).
template <class View>
void keep_storage_for_mpi(const View& storage) noexcept {
  try {
    keep_for_mpi(std::make_unique<View>(storage));
  } catch (...) {
  }
}

/// Keeps an array's storage allocated for MPI (`keep_storage_for_mpi`) when asked, without
/// holding it meanwhile: `state` (an array state with a `storage` View) must be alive when
/// `keep()` is called. Empty: keeps nothing.
struct storage_keeper {
  const void* state = nullptr;
  void (*keep_of)(const void*) noexcept = nullptr;

  template <class State>
  static storage_keeper of(const State& s) noexcept {
    return {&s, [](const void* p) noexcept { keep_storage_for_mpi(static_cast<const State*>(p)->storage); }};
  }
  void keep() const noexcept {
    if (keep_of != nullptr) keep_of(state);
  }
};

/// What a run that gives up must reach beyond its plan: the source storage its released sends
/// may still read (kept allocated for good), and the array whose communicator it leaves out of
/// step (marked). Each part may be empty.
struct abandon_targets {
  storage_keeper source;
  exchange_mark* array = nullptr;
  const char* what = "transfer";  ///< the call, for the array's mark
};

/// What one message holds: the boxes of storage it carries, in order, to or from `peer`.
template <int Rank>
struct message_spec {
  int peer = 0;
  int tag = 0;
  std::vector<strided_box<Rank>> boxes;
  bool same_as_previous = false;  ///< send the previous message's data again, to `peer`
};

/// One message of a transfer side.
struct planned_message {
  int peer = 0;
  int tag = 0;
  std::int64_t count = 0;          ///< elements
  std::int64_t buffer_offset = 0;  ///< where it sits in the side's buffer (unless direct)
  bool direct = false;             ///< MPI reads/writes the storage itself (one contiguous row)
  std::int64_t direct_offset = 0;  ///< the storage offset of a direct message
};

/// The send or the receive half of a transfer, for storage in `MemorySpace`.
template <class T, class MemorySpace>
class transfer_side {
 public:
  transfer_side() = default;

  /// Lays out `specs` in one buffer. A message whose storage is one contiguous run goes to
  /// MPI directly, unless `staged` (then every message passes through the host buffer).
  template <int Rank>
  transfer_side(const std::vector<message_spec<Rank>>& specs, bool staged) : m_staged(staged) {
    std::vector<row> all;
    std::vector<row> mine;
    for (const auto& spec : specs) {
      if (spec.same_as_previous && !m_messages.empty()) {
        planned_message again = m_messages.back();
        again.peer = spec.peer;
        again.tag = spec.tag;
        m_messages.push_back(again);
        continue;
      }
      mine.clear();
      std::int64_t count = 0;
      for (const auto& box : spec.boxes) append_rows(box, mine, count, 0);
      if (count == 0) continue;
      planned_message m{spec.peer, spec.tag, count, m_size, false, 0};
      if (!staged && mine.size() == 1 && (mine[0].stride == 1 || mine[0].count == 1)) {
        m.direct = true;
        m.direct_offset = mine[0].storage_offset;
        m.buffer_offset = 0;
      } else {
        for (auto r : mine) {
          r.buffer_offset += m_size;
          all.push_back(r);
        }
        m_size += count;
      }
      m_messages.push_back(m);
    }
    m_rows = row_list<MemorySpace>(all);
    m_buffer =
        Kokkos::View<T*, MemorySpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hetero::distarray::buffer"),
                                      static_cast<std::size_t>(m_size));
    if (staged)
      m_host = Kokkos::View<T*, Kokkos::HostSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "hetero::distarray::staging"),
          static_cast<std::size_t>(m_size));
  }

  [[nodiscard]] const std::vector<planned_message>& messages() const noexcept { return m_messages; }
  [[nodiscard]] const row_list<MemorySpace>& rows() const noexcept { return m_rows; }
  [[nodiscard]] bool staged() const noexcept { return m_staged; }
  /// Elements in the buffers.
  [[nodiscard]] std::int64_t buffer_size() const noexcept { return m_size; }
  /// Elements over all messages.
  [[nodiscard]] std::int64_t elements() const noexcept {
    std::int64_t n = 0;
    for (const auto& m : m_messages) n += m.count;
    return n;
  }
  [[nodiscard]] T* buffer() const noexcept { return m_buffer.data(); }
  [[nodiscard]] T* host() const noexcept { return m_host.data(); }

  /// Keeps the buffers allocated until the process ends (`keep_for_mpi`): a send released to
  /// MPI after a wait gave up may still read them when a late rank receives it.
  void keep_buffers_for_mpi() const {
    using views = std::pair<Kokkos::View<T*, MemorySpace>, Kokkos::View<T*, Kokkos::HostSpace>>;
    keep_for_mpi(std::make_unique<views>(m_buffer, m_host));
  }

  /// Where MPI reads or writes `m`.
  [[nodiscard]] T* mpi_pointer(const planned_message& m, T* storage) const noexcept {
    return m.direct ? storage + m.direct_offset : (m_staged ? host() : buffer()) + m.buffer_offset;
  }

  /// Copies the gathered buffer to the host buffer (send side of a staged transfer).
  void stage_out() const {
    if (m_staged && m_size > 0) Kokkos::deep_copy(m_host, m_buffer);
  }
  /// Copies the host buffer to the buffer (receive side of a staged transfer).
  void stage_in() const {
    if (m_staged && m_size > 0) Kokkos::deep_copy(m_buffer, m_host);
  }

 private:
  std::vector<planned_message> m_messages;
  row_list<MemorySpace> m_rows;
  std::int64_t m_size = 0;
  bool m_staged = false;
  Kokkos::View<T*, MemorySpace> m_buffer;
  Kokkos::View<T*, Kokkos::HostSpace> m_host;
};

/// A complete transfer from storage in `SrcSpace` to storage in `DstSpace` (they are the
/// same storage for a halo exchange), for the rank `me` of the communicator it runs on. A
/// plan runs once at a time (its buffers and requests are reused by every run).
template <class T, class SrcSpace, class DstSpace>
struct transfer_plan {
  transfer_side<T, SrcSpace> send;
  transfer_side<T, DstSpace> recv;
  int me = 0;
  wait_policy policy;  ///< how a run waits, made with the plan (on the communicator it runs on)
  MPI_Datatype element = mpi_type<T>();
  std::vector<MPI_Request> requests;  ///< of the run in flight
  std::vector<int> peers;             ///< the rank of each request, for timeout messages
};

/// One run of a transfer plan: start() posts everything, test() polls, wait() completes.
/// Destroying a started run waits for it (MPI requests must not be abandoned). A run that
/// fails or gives up once it began posting (start, test or wait raising; also where its first
/// post failed: the peers' messages are on their way) abandons its requests:
/// receives cancelled, sends released to MPI with the memory they read kept allocated (the
/// plan's buffers, the source storage through `targets.source`, `source_copy`), and the
/// array of `targets` marked out of step.
template <class T, class SrcSpace, class DstSpace>
class transfer_run {
 public:
  using plan_type = transfer_plan<T, SrcSpace, DstSpace>;

  /// `source_copy`: where the source is read from a copy (a gmove whose sides overlap), that
  /// copy, owned by the run from now on; `src` is then its data.
  transfer_run(plan_type& plan, MPI_Comm comm, const T* src, T* dst, abandon_targets targets = {},
               Kokkos::View<T*, SrcSpace> source_copy = {})
      : m_plan(&plan),
        m_comm(comm),
        m_src(const_cast<T*>(src)),
        m_dst(dst),
        m_targets(targets),
        m_copy(std::move(source_copy)) {}
  transfer_run(transfer_run&& other) noexcept
      : m_plan(std::exchange(other.m_plan, nullptr)),
        m_comm(other.m_comm),
        m_src(other.m_src),
        m_dst(other.m_dst),
        m_targets(other.m_targets),
        m_copy(std::move(other.m_copy)) {}
  transfer_run& operator=(transfer_run&&) = delete;
  transfer_run(const transfer_run&) = delete;
  transfer_run& operator=(const transfer_run&) = delete;
  ~transfer_run() {
    if (m_plan == nullptr) return;
    auto& pending = m_plan->requests;
    if (!pending.empty() && !mpi_finalized()) {
      // A run dropped unwaited (an exception between start and wait): MPI has nothing that gives
      // up on a request it cannot cancel (a send), so this blocks, watched.
      const blocking_call blocked(m_plan->policy, "transfer dropped before its wait", wait_kind::halo);
      const request_errors_returned returned;  // a destructor reports nothing
      MPI_Waitall(static_cast<int>(pending.size()), pending.data(), MPI_STATUSES_IGNORE);
    }
    pending.clear();
  }

  /// Posts the receives, gathers and sends, and copies the data that stays on this rank.
  void start() {
    const int me = m_plan->me;
    const auto& send = m_plan->send;
    const auto& recv = m_plan->recv;
    const MPI_Datatype type = m_plan->element;
    auto& requests = m_plan->requests;
    auto& peers = m_plan->peers;
    requests.clear();
    peers.clear();
    requests.reserve(send.messages().size() + recv.messages().size());  // allocates on the first run only
    peers.reserve(requests.capacity());
    try {  // a failure once posting began abandons the run, as a wait that gives up does
      for (const auto& m : recv.messages()) {
        if (m.peer == me) continue;
        requests.push_back(MPI_REQUEST_NULL);
        peers.push_back(m.peer);
        HETERO_MPI_CHECK(MPI_Irecv, recv.mpi_pointer(m, m_dst), mpi_count(m.count, "message size"), type, m.peer,
                         m.tag, m_comm, &requests.back());
      }
      send.rows().gather(static_cast<const T*>(m_src), send.buffer());
      send.stage_out();
      for (const auto& m : send.messages()) {
        if (m.peer == me) continue;
        requests.push_back(MPI_REQUEST_NULL);
        peers.push_back(m.peer);
        HETERO_MPI_CHECK(MPI_Isend, send.mpi_pointer(m, m_src), mpi_count(m.count, "message size"), type, m.peer,
                         m.tag, m_comm, &requests.back());
      }
      for (const auto& s : send.messages()) {
        if (s.peer != me) continue;
        const planned_message* r = nullptr;
        for (const auto& candidate : recv.messages())
          if (candidate.peer == me && candidate.tag == s.tag) r = &candidate;
        if (r == nullptr || r->count != s.count)
          raise<runtime_error>("hetero::distarray: inconsistent transfer plan (a local copy of ", s.count,
                               " elements has no matching receive)");
        copy_local(s, *r);
      }
    } catch (...) {
      // Even where nothing was posted here, the peers' messages of this run are on their way:
      // the array is out of step all the same.
      if (!requests.empty()) abandon();
      throw;
    }
  }

  /// Whether every message has arrived (then wait() only scatters).
  bool test() {
    auto& requests = m_plan->requests;
    if (requests.empty()) return true;
    int done = 0;
    try {
      const request_errors_returned returned;
      HETERO_MPI_CHECK(MPI_Testall, static_cast<int>(requests.size()), requests.data(), &done,
                       MPI_STATUSES_IGNORE);
    } catch (...) {
      abandon();  // else the caller's release would wait, in the destructor, for what failed
      throw;
    }
    if (done) requests.clear();
    return done != 0;
  }

  /// Waits for every message (reported to the observer as a halo wait named `label`) and
  /// scatters what arrived into the destination storage.
  void wait(std::string_view label) {
    auto& requests = m_plan->requests;
    if (!requests.empty()) {
      const wait_call named{"hetero::", label, -1, -1};
      const wait_call_scope scope(named);
      try {
        // The requests are on the array's own communicator, not the grid's of the plan's policy.
        wait_all(requests, m_plan->policy.on(m_comm), label, wait_kind::halo, m_plan->peers);
      } catch (...) {
        // A failed wait must not be retried by the destructor (it would wait forever for a
        // rank that never comes).
        abandon();
        throw;
      }
      requests.clear();
    }
    m_plan->recv.stage_in();
    m_plan->recv.rows().scatter(m_dst, static_cast<const T*>(m_plan->recv.buffer()));
  }

 private:
  void copy_local(const planned_message& s, const planned_message& r) const {
    const auto& send = m_plan->send;
    const auto& recv = m_plan->recv;
    const auto n = static_cast<std::size_t>(s.count);
    flat_view<T, SrcSpace> from(s.direct ? m_src + s.direct_offset : send.buffer() + s.buffer_offset, n);
    if (r.direct) {
      Kokkos::deep_copy(flat_view<T, DstSpace>(m_dst + r.direct_offset, n), from);
    } else if (recv.staged()) {
      Kokkos::deep_copy(flat_view<T, Kokkos::HostSpace>(recv.host() + r.buffer_offset, n), from);
    } else {
      Kokkos::deep_copy(flat_view<T, DstSpace>(recv.buffer() + r.buffer_offset, n), from);
    }
  }

  // Ends the posted requests for good: receives are cancelled, sends released to MPI, and the
  // communicator is never freed, so that no new one gets its id and this run's messages. The
  // released sends read the plan's buffers, and the source storage (or its copy) itself for a
  // direct message: all kept allocated. The array is marked: the late rank's messages are
  // still due on their communicator. Called while the error that brought it here is raised; out
  // of memory keeps less (and only `abandon_requests` itself raises).
  void abandon() {
    if (m_targets.array != nullptr) m_targets.array->mark(m_targets.what);
    try {
      m_plan->send.keep_buffers_for_mpi();
    } catch (...) {
    }
    m_targets.source.keep();
    if (m_copy.data() != nullptr) keep_storage_for_mpi(m_copy);
    auto& requests = m_plan->requests;
    std::size_t receives = 0;  // posted first
    for (const auto& m : m_plan->recv.messages()) receives += m.peer != m_plan->me ? 1 : 0;
    const auto is_receive = [receives](std::size_t i) { return i < receives; };
    abandon_requests(requests, is_receive, m_comm);
    requests.clear();
  }

  plan_type* m_plan;
  MPI_Comm m_comm;
  T* m_src;
  T* m_dst;
  abandon_targets m_targets;
  Kokkos::View<T*, SrcSpace> m_copy;
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_TRANSFER_HPP

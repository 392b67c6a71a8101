/// @file
/// The RMA window of a distributed array or coarray, created once with the array: one-sided
/// get and put of strided boxes (one MPI call and one derived datatype per box, never per
/// element), flushes, sync_all and sync_images. Passive-target epoch (lock_all) for the
/// window's whole life.
///
/// Staged windows (device memory, MPI not GPU-aware) expose two host buffers instead of the
/// storage: a snapshot of the storage, which gets read, and a landing area, which puts write.
/// Every origin logs the boxes it put; at a synchronisation the target receives the logs of
/// the images it syncs with, copies those boxes from the landing area into its storage, and
/// refreshes the snapshot. The landing area is never overwritten by the target, so a put is
/// not lost when the target syncs with other images first.
///
/// With a `node_segment` (a coarray in host memory), a get or put between two images of one node
/// copies directly between the calling thread's buffer and the target's shared storage, with a
/// memory barrier (MPI_Win_sync) before a get's loads and after a put's stores; the syncs add
/// the segment's barrier to the window's. The window then serves only the images of other nodes.
///
/// The waits for other images go through core/mpi/wait.hpp (a `deadlock_error` after the wait
/// timeout, not a hang): gets are request-based, a sync first completes the gets that gave up
/// (so that its flush finds nothing to wait for), and the staged log exchange is
/// non-blocking. Only a put's own flush waits in MPI (MPI has no non-blocking flush).
#ifndef HETERO_DISTARRAY_DETAIL_WINDOW_HPP
#define HETERO_DISTARRAY_DETAIL_WINDOW_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/datatype.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/distarray/detail/node_segment.hpp"
#include "hetero/distarray/detail/rows.hpp"

namespace hetero::detail {

/// The window over one rank's storage of `T` in `MemorySpace`; boxes are `Rank`-dimensional.
/// Origin buffers of get and put are host memory when staged, else memory of `MemorySpace`.
template <class T, int Rank, class MemorySpace>
class rma_window {
 public:
  /// Exposes `size` elements at `storage` on every rank of `comm` (collective). With `segment`
  /// (whose `local()` is `storage`, not staged), the images of this node are reached through it.
  rma_window(MPI_Comm comm, T* storage, std::int64_t size, bool staged, const node_segment<T>* segment = nullptr)
      : m_comm(comm), m_storage(storage), m_size(size), m_staged(staged), m_segment(segment) {
    HETERO_MPI_CHECK(MPI_Comm_rank, comm, &m_rank);
    HETERO_MPI_CHECK(MPI_Comm_size, comm, &m_images);
    m_policy = make_wait_policy(comm);
    T* exposed = storage;
    std::int64_t exposed_size = size;
    if (staged) {
      // Puts land after the snapshot of the target's own size, which differs between ranks.
      // [0]: this rank's size, [1, images]: every rank's; on the heap, left to MPI if the wait
      // gives up (every rank is here already: the array's communicator was made on arrival).
      auto sizes = std::make_unique<std::int64_t[]>(static_cast<std::size_t>(m_images) + 1);
      sizes[0] = size;
      MPI_Request request = MPI_REQUEST_NULL;
      HETERO_MPI_CHECK(MPI_Iallgather, sizes.get(), 1, MPI_INT64_T, sizes.get() + 1, 1, MPI_INT64_T, comm,
                       &request);
      try {
        wait_one(request, m_policy, "one-sided window set-up (storage sizes)");
      } catch (const deadlock_error&) {
        keep_for_mpi(std::move(sizes));
        throw;
      }
      m_sizes.assign(sizes.get() + 1, sizes.get() + 1 + m_images);
      // A rank whose host copy cannot be allocated tells the others before MPI_Win_create.
      agreed_setup_step(comm, m_policy, "one-sided window set-up (host copy)", [&] {
        m_host =
            Kokkos::View<T*, Kokkos::HostSpace>("hetero::distarray::window", static_cast<std::size_t>(2 * size));
        Kokkos::deep_copy(flat_view<T, Kokkos::HostSpace>(m_host.data(), static_cast<std::size_t>(size)),
                          flat_view<T, MemorySpace>(storage, static_cast<std::size_t>(size)));
      });
      exposed = m_host.data();
      exposed_size = 2 * size;
      m_put_log.resize(static_cast<std::size_t>(m_images));
    }
    const auto bytes = static_cast<MPI_Aint>(exposed_size) * static_cast<MPI_Aint>(sizeof(T));
    {
      const blocking_call blocked(m_policy, "one-sided window set-up (MPI_Win_create)", wait_kind::point_to_point);
      HETERO_MPI_CHECK(MPI_Win_create, exposed, bytes, static_cast<int>(sizeof(T)), MPI_INFO_NULL, comm, &m_win);
    }
    HETERO_MPI_CHECK(MPI_Win_set_errhandler, m_win, MPI_ERRORS_RETURN);
    HETERO_MPI_CHECK(MPI_Win_lock_all, MPI_MODE_NOCHECK, m_win);
  }
  rma_window(const rma_window&) = delete;
  rma_window& operator=(const rma_window&) = delete;
  ~rma_window() {
    if (m_win == MPI_WIN_NULL || mpi_finalized()) return;
    // Collective (MPICH ends it with a barrier): a rank that keeps its array alive while the
    // others drop theirs holds them here, until the watchdog ends the job past the limit.
    const blocking_call blocked(m_policy, "one-sided window tear-down (MPI_Win_free)", wait_kind::point_to_point);
    MPI_Win_unlock_all(m_win);
    for (auto& a : m_abandoned) MPI_Wait(&a.request, MPI_STATUS_IGNORE);  // complete since the epoch ended
    MPI_Win_free(&m_win);
  }

  [[nodiscard]] bool staged() const noexcept { return m_staged; }
  [[nodiscard]] int images() const noexcept { return m_images; }
  [[nodiscard]] int rank() const noexcept { return m_rank; }

  /// Reads `boxes` of `target`'s storage into `origin`, contiguous in box order; complete on
  /// return. `origin` is host memory when staged, else memory of `MemorySpace`.
  /// Request-based (MPI_Rget), so that a target that never serves the get (where MPI needs its
  /// progress) ends in a `deadlock_error` after the timeout instead of a hang.
  void get(int target, std::span<const strided_box<Rank>> boxes, T* origin, std::string_view label) {
    if (target == m_rank) return copy_own<true>(boxes, origin);
    if (T* shared = shared_storage(target)) return copy_shared<true>(shared, boxes, origin);
    std::int64_t at = 0;
    std::vector<MPI_Request> requests;
    requests.reserve(boxes.size());
    for (const auto& box : boxes) {
      const auto n = box.size();
      if (n == 0) continue;
      const auto [type, count] = target_type(box);
      requests.push_back(MPI_REQUEST_NULL);
      HETERO_MPI_CHECK(MPI_Rget, origin + at, mpi_count(n, "get size"), m_element, target,
                       static_cast<MPI_Aint>(box.offset), count, type, m_win, &requests.back());
      at += n;
    }
    const std::vector<int> peers(requests.size(), target);
    const wait_call named{"hetero::", label, -1, -1};
    const wait_call_scope scope(named);
    try {
      wait_all(requests, m_policy, label, wait_kind::point_to_point, peers);
      // The requests say the target served the gets; the flush (immediate then) makes the data
      // complete in `origin` on every MPICH device (some complete a request of a strided get
      // before its data has landed, so this flush can wait for the target: watched).
      const blocking_call blocked(m_policy, label, wait_kind::point_to_point);
      HETERO_MPI_CHECK(MPI_Win_flush, target, m_win);
    } catch (const deadlock_error&) {
      // An RMA request can be neither cancelled nor freed: kept, it completes at the next
      // sync_all (or when the window goes) and may write `origin` until then.
      std::lock_guard lock(m_mutex);
      for (MPI_Request r : requests)
        if (r != MPI_REQUEST_NULL) m_abandoned.push_back({r, target});
      throw;
    }
  }

  /// Writes `origin` (contiguous, in box order) into `boxes` of `target`'s storage; complete
  /// at the target on return, visible to it after the next synchronisation with it.
  void put(int target, std::span<const strided_box<Rank>> boxes, const T* origin, std::string_view label) {
    if (target == m_rank) return copy_own<false>(boxes, const_cast<T*>(origin));
    if (T* shared = shared_storage(target)) return copy_shared<false>(shared, boxes, const_cast<T*>(origin));
    std::int64_t at = 0;
    for (const auto& box : boxes) {
      const auto n = box.size();
      if (n == 0) continue;
      const auto [type, count] = target_type(box);
      const auto disp =
          static_cast<MPI_Aint>(box.offset + (m_staged ? m_sizes[static_cast<std::size_t>(target)] : 0));
      HETERO_MPI_CHECK(MPI_Put, origin + at, mpi_count(n, "put size"), m_element, target, disp, count, type,
                       m_win);
      at += n;
    }
    {
      // MPI has no non-blocking flush, and MPI_Rput's request says only that `origin` may be
      // reused (MPICH completes it before the target has seen the put): this flush waits for a
      // target that never enters MPI until the watchdog ends the job.
      const wait_call named{"hetero::", label, -1, -1};
      const wait_call_scope scope(named);
      const blocking_call blocked(m_policy, label, wait_kind::point_to_point);
      HETERO_MPI_CHECK(MPI_Win_flush, target, m_win);
    }
    if (m_staged) {
      std::lock_guard lock(m_mutex);
      auto& log = m_put_log[static_cast<std::size_t>(target)];
      log.insert(log.end(), boxes.begin(), boxes.end());
    }
  }

  /// Every image's puts and gets before it are complete and visible after it (collective).
  /// `posted` is set once this image's part reaches the communicator: before it, only the gets
  /// that gave up earlier are completed, which a later sync may do as well.
  void sync_all(std::string_view label, bool& posted) {
    const wait_call named{"hetero::", label, -1, -1};
    const wait_call_scope scope(named);
    complete_abandoned({});
    posted = true;
    {
      // Every operation of this image is complete or was abandoned and is now: the flush has
      // nothing to wait for (it makes strided gets' data complete, see get).
      const blocking_call blocked(m_policy, label, wait_kind::point_to_point);
      HETERO_MPI_CHECK(MPI_Win_flush_all, m_win);
    }
    if (m_staged) apply_logs(exchange_logs_all());
    memory_barrier();
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Ibarrier, m_comm, &request);
    wait_one(request, m_policy, label, wait_kind::point_to_point);
    memory_barrier();
  }

  /// Like sync_all, only between this image and `images` (each of which must name this one).
  void sync_images(std::vector<int> images, std::string_view label, bool& posted) {
    for (int i : images)
      HETERO_EXPECTS(i >= 0 && i < m_images, "sync_images: image ", i, " is outside the communicator's images 0..",
                     m_images - 1);
    std::sort(images.begin(), images.end());
    images.erase(std::unique(images.begin(), images.end()), images.end());
    images.erase(std::remove(images.begin(), images.end(), m_rank), images.end());
    const wait_call named{"hetero::", label, -1, -1};
    const wait_call_scope scope(named);
    if (!images.empty()) complete_abandoned(images);
    posted = true;
    {
      const blocking_call blocked(m_policy, label, wait_kind::point_to_point);
      for (int i : images) HETERO_MPI_CHECK(MPI_Win_flush, i, m_win);  // nothing left to wait for, as in sync_all
    }
    memory_barrier();
    if (m_staged) {
      apply_logs(exchange_logs_with(images));
      HETERO_MPI_CHECK(MPI_Win_sync, m_win);
    }
    handshake(images, ready_tag, label);  // staged: the snapshot is fresh before peers read it
    memory_barrier();
  }

 private:
  static constexpr int log_tag = 3000;
  static constexpr int ready_tag = 3001;

  /// An RMA request whose wait gave up, and its target.
  struct abandoned_request {
    MPI_Request request;
    int target;
  };

  // Waits, with the timeout, for the gets that gave up earlier and aim at `targets` (every
  // target when empty), so that the flush after it finds nothing to wait for (puts were flushed
  // when they were made). Those still incomplete when this gives up stay abandoned.
  void complete_abandoned(std::span<const int> targets) {
    std::vector<MPI_Request> requests;
    std::vector<int> peers;
    {
      std::lock_guard lock(m_mutex);
      const auto keep = std::partition(m_abandoned.begin(), m_abandoned.end(), [&](const abandoned_request& a) {
        return !targets.empty() && std::find(targets.begin(), targets.end(), a.target) == targets.end();
      });
      for (auto it = keep; it != m_abandoned.end(); ++it) {
        requests.push_back(it->request);
        peers.push_back(it->target);
      }
      m_abandoned.erase(keep, m_abandoned.end());
    }
    try {
      wait_all(requests, m_policy, "completing an earlier get that gave up", wait_kind::point_to_point, peers);
    } catch (const deadlock_error&) {
      std::lock_guard lock(m_mutex);
      for (std::size_t i = 0; i < requests.size(); ++i)
        if (requests[i] != MPI_REQUEST_NULL) m_abandoned.push_back({requests[i], peers[i]});
      throw;
    }
  }

  // The datatype of `box` in the target's storage: the element type times n when contiguous,
  // else nested hvectors (made once per box shape).
  std::pair<MPI_Datatype, int> target_type(const strided_box<Rank>& box) {
    if (box.contiguous()) return {m_element, mpi_count(box.size(), "box size")};
    std::vector<std::int64_t> shape(box.count.begin(), box.count.end());
    shape.insert(shape.end(), box.stride.begin(), box.stride.end());
    std::lock_guard lock(m_mutex);
    auto it = m_types.find(shape);
    if (it == m_types.end()) {
      MPI_Datatype type = m_element;
      for (int d = Rank - 1; d >= 0; --d) {
        MPI_Datatype outer = MPI_DATATYPE_NULL;
        HETERO_MPI_CHECK(MPI_Type_create_hvector, mpi_count(box.count[d], "box extent"), 1,
                         static_cast<MPI_Aint>(box.stride[d]) * static_cast<MPI_Aint>(sizeof(T)), type, &outer);
        if (type != m_element) MPI_Type_free(&type);
        type = outer;
      }
      HETERO_MPI_CHECK(MPI_Type_commit, &type);
      it = m_types.emplace(std::move(shape), mpi_datatype(type)).first;
    }
    return {it->second.get(), 1};
  }

  // The storage of `target` when it shares this node's segment, else null.
  [[nodiscard]] T* shared_storage(int target) const noexcept {
    return m_segment ? m_segment->peer(target) : nullptr;
  }

  // The window's memory barrier, and the segment's.
  void memory_barrier() {
    HETERO_MPI_CHECK(MPI_Win_sync, m_win);
    if (m_segment) m_segment->sync();
  }

  // Another image of this node: the calling thread's own loads and stores of its storage, after
  // the barrier (a get sees what the target wrote before it last synchronised with this image)
  // or before it (a put is complete at the target on return). Never waits for the target.
  template <bool Get>
  void copy_shared(T* storage, std::span<const strided_box<Rank>> boxes, T* origin) {
    std::vector<row> rows;
    std::int64_t n = 0;
    for (const auto& box : boxes) append_rows(box, rows, n, 0);
    if constexpr (Get) m_segment->sync();
    for (const auto& r : rows) copy_host_row<Get>(r, storage, origin);
    if constexpr (!Get) m_segment->sync();
  }

  // Own image: copy between the storage and the origin directly (program order, no window).
  template <bool Get>
  void copy_own(std::span<const strided_box<Rank>> boxes, T* origin) {
    std::vector<row> rows;
    std::int64_t n = 0;
    for (const auto& box : boxes) append_rows(box, rows, n, 0);
    const row_list<MemorySpace> list(rows);
    if (!m_staged) {
      if constexpr (Get) {
        list.gather(static_cast<const T*>(m_storage), origin);
      } else {
        list.scatter(m_storage, static_cast<const T*>(origin));
      }
      return;
    }
    Kokkos::View<T*, MemorySpace> scratch("hetero::distarray::scratch", static_cast<std::size_t>(n));
    flat_view<T, Kokkos::HostSpace> host(origin, static_cast<std::size_t>(n));
    if constexpr (Get) {
      list.gather(static_cast<const T*>(m_storage), scratch.data());
      Kokkos::deep_copy(host, scratch);
    } else {
      Kokkos::deep_copy(scratch, host);
      list.scatter(m_storage, static_cast<const T*>(scratch.data()));
    }
  }

  // The buffers of a staged log exchange, on the heap: a wait that gives up leaves them to MPI
  // (a late image's part of the exchange still writes and reads them).
  struct log_exchange {
    std::vector<int> send_bytes, recv_bytes, send_at, recv_at;
    std::vector<strided_box<Rank>> outgoing, incoming;
  };

  // Staged: every image sends each other image the boxes it put there since they last met.
  std::vector<strided_box<Rank>> exchange_logs_all() {
    auto ex = std::make_unique<log_exchange>();
    const auto images = static_cast<std::size_t>(m_images);
    ex->send_bytes.resize(images);
    ex->recv_bytes.resize(images);
    ex->send_at.resize(images);
    ex->recv_at.resize(images);
    {
      std::lock_guard lock(m_mutex);
      for (std::size_t i = 0; i < images; ++i) {
        auto& log = m_put_log[i];
        ex->send_at[i] = mpi_count(ex->outgoing.size() * sizeof(strided_box<Rank>), "put log");
        ex->send_bytes[i] = mpi_count(log.size() * sizeof(strided_box<Rank>), "put log");
        ex->outgoing.insert(ex->outgoing.end(), log.begin(), log.end());
        log.clear();
      }
    }
    try {
      MPI_Request request = MPI_REQUEST_NULL;
      HETERO_MPI_CHECK(MPI_Ialltoall, ex->send_bytes.data(), 1, MPI_INT, ex->recv_bytes.data(), 1, MPI_INT, m_comm,
                       &request);
      wait_one(request, m_policy, "put log sizes", wait_kind::point_to_point);
      std::int64_t total = 0;
      for (std::size_t i = 0; i < images; ++i) {
        ex->recv_at[i] = mpi_count(total, "put log");
        total += ex->recv_bytes[i];
      }
      ex->incoming.resize(static_cast<std::size_t>(total) / sizeof(strided_box<Rank>));
      HETERO_MPI_CHECK(MPI_Ialltoallv, ex->outgoing.data(), ex->send_bytes.data(), ex->send_at.data(), MPI_BYTE,
                       ex->incoming.data(), ex->recv_bytes.data(), ex->recv_at.data(), MPI_BYTE, m_comm, &request);
      wait_one(request, m_policy, "put logs", wait_kind::point_to_point);
    } catch (const deadlock_error&) {
      keep_for_mpi(std::move(ex));
      throw;
    }
    return std::move(ex->incoming);
  }

  // Staged: this image and each of `images` send each other the boxes they put there. The
  // logs are probed for (MPI_Improbe, polled with the timeout) and then received as matched
  // messages, which are here already: a partner that never syncs ends in a deadlock_error
  // naming it, not in a blocking probe.
  std::vector<strided_box<Rank>> exchange_logs_with(const std::vector<int>& images) {
    struct sent_logs {
      std::vector<std::vector<strided_box<Rank>>> logs;
      std::vector<MPI_Request> requests;
    };
    auto sent = std::make_unique<sent_logs>();  // left to MPI if a wait gives up
    sent->logs.resize(images.size());
    sent->requests.assign(images.size(), MPI_REQUEST_NULL);
    {
      std::lock_guard lock(m_mutex);
      for (std::size_t j = 0; j < images.size(); ++j)
        sent->logs[j].swap(m_put_log[static_cast<std::size_t>(images[j])]);
    }
    for (std::size_t j = 0; j < images.size(); ++j)
      HETERO_MPI_CHECK(MPI_Isend, sent->logs[j].data(),
                       mpi_count(sent->logs[j].size() * sizeof(strided_box<Rank>), "put log"), MPI_BYTE, images[j],
                       log_tag, m_comm, &sent->requests[j]);
    std::vector<std::vector<strided_box<Rank>>> received(images.size());
    std::vector<char> arrived(images.size(), 0);
    std::size_t awaited = images.size();
    const auto missing = [&](std::vector<int>& out) {
      for (std::size_t j = 0; j < images.size(); ++j)
        if (!arrived[j]) out.push_back(images[j]);
    };
    try {
      wait_scope waiting(wait_kind::point_to_point, "put logs");
      backoff wait(m_policy, "put logs", missing);
      while (awaited > 0) {
        bool progressed = false;
        for (std::size_t j = 0; j < images.size(); ++j) {
          if (arrived[j]) continue;
          int flag = 0;
          MPI_Message message = MPI_MESSAGE_NULL;
          MPI_Status status;
          HETERO_MPI_CHECK(MPI_Improbe, images[j], log_tag, m_comm, &flag, &message, &status);
          if (!flag) continue;
          int bytes = 0;
          HETERO_MPI_CHECK(MPI_Get_count, &status, MPI_BYTE, &bytes);
          received[j].resize(static_cast<std::size_t>(bytes) / sizeof(strided_box<Rank>));
          HETERO_MPI_CHECK(MPI_Mrecv, received[j].data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
          arrived[j] = 1;
          --awaited;
          progressed = true;
        }
        if (awaited > 0 && !progressed) wait.pause();
      }
      wait_all(sent->requests, m_policy, "put logs", wait_kind::point_to_point, images);
    } catch (const deadlock_error&) {
      for (auto& r : sent->requests)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);  // the logs stay allocated for MPI to read
      keep_for_mpi(std::move(sent));
      throw;
    }
    std::vector<strided_box<Rank>> incoming;  // in the order of `images`, as before
    for (const auto& log : received) incoming.insert(incoming.end(), log.begin(), log.end());
    return incoming;
  }

  // Staged: copies the boxes others put from the landing area into the storage, then
  // refreshes the snapshot from the storage.
  void apply_logs(const std::vector<strided_box<Rank>>& boxes) {
    std::vector<row> rows;
    std::int64_t n = 0;
    for (const auto& box : boxes) append_rows(box, rows, n, 0);
    if (n > 0) {
      Kokkos::View<T*, Kokkos::HostSpace> landed("hetero::distarray::landed", static_cast<std::size_t>(n));
      row_list<Kokkos::HostSpace>(rows).gather(static_cast<const T*>(m_host.data() + m_size), landed.data());
      Kokkos::View<T*, MemorySpace> scratch("hetero::distarray::scratch", static_cast<std::size_t>(n));
      Kokkos::deep_copy(scratch, landed);
      row_list<MemorySpace>(rows).scatter(m_storage, static_cast<const T*>(scratch.data()));
    }
    Kokkos::deep_copy(flat_view<T, Kokkos::HostSpace>(m_host.data(), static_cast<std::size_t>(m_size)),
                      flat_view<T, MemorySpace>(m_storage, static_cast<std::size_t>(m_size)));
  }

  void handshake(const std::vector<int>& images, int tag, std::string_view label) {
    std::vector<MPI_Request> requests(2 * images.size(), MPI_REQUEST_NULL);
    std::vector<int> peers(2 * images.size());
    static constexpr char token = 0;  // a send that gave up may still read it
    std::vector<char> tokens(images.size());
    const wait_call named{"hetero::", label, -1, -1};
    const wait_call_scope scope(named);
    try {  // a post that fails leaves those before it posted, as a wait that gives up does
      for (std::size_t j = 0; j < images.size(); ++j) {
        peers[2 * j] = peers[2 * j + 1] = images[j];
        HETERO_MPI_CHECK(MPI_Irecv, &tokens[j], 1, MPI_CHAR, images[j], tag, m_comm, &requests[2 * j]);
        HETERO_MPI_CHECK(MPI_Isend, &token, 1, MPI_CHAR, images[j], tag, m_comm, &requests[2 * j + 1]);
      }
      wait_all(requests, m_policy, label, wait_kind::point_to_point, peers);
    } catch (...) {
      // The tokens live on this stack: no receive may complete after it unwinds.
      const auto is_receive = [](std::size_t i) { return i % 2 == 0; };  // a receive, then a send per image
      abandon_requests(requests, is_receive, m_comm);
      throw;
    }
  }

  MPI_Comm m_comm;
  T* m_storage;
  std::int64_t m_size;
  std::vector<std::int64_t> m_sizes;  // staged: every rank's storage size (where its landing area starts)
  bool m_staged;
  const node_segment<T>* m_segment;  // the images of this node, or null
  int m_rank = 0;
  int m_images = 1;
  wait_policy m_policy;
  std::vector<abandoned_request> m_abandoned;  // gets that gave up (completed by the syncs)
  MPI_Win m_win = MPI_WIN_NULL;
  Kokkos::View<T*, Kokkos::HostSpace> m_host;  // staged: snapshot [0, size), landing area [size, 2 size)
  MPI_Datatype m_element = mpi_type<T>();
  std::mutex m_mutex;  // guards the datatype cache and the put logs
  std::map<std::vector<std::int64_t>, mpi_datatype> m_types;
  std::vector<std::vector<strided_box<Rank>>> m_put_log;  // staged: boxes put per target since the last sync
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_WINDOW_HPP

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
#ifndef HETERO_DISTARRAY_DETAIL_WINDOW_HPP
#define HETERO_DISTARRAY_DETAIL_WINDOW_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/datatype.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/distarray/detail/rows.hpp"

namespace hetero::detail {

/// The window over one rank's storage of `T` in `MemorySpace`; boxes are `Rank`-dimensional.
/// Origin buffers of get and put are host memory when staged, else memory of `MemorySpace`.
template <class T, int Rank, class MemorySpace>
class rma_window {
 public:
  /// Exposes `size` elements at `storage` on every rank of `comm` (collective).
  rma_window(MPI_Comm comm, T* storage, std::int64_t size, bool staged)
      : m_comm(comm), m_storage(storage), m_size(size), m_staged(staged) {
    HETERO_MPI_CHECK(MPI_Comm_rank, comm, &m_rank);
    HETERO_MPI_CHECK(MPI_Comm_size, comm, &m_images);
    m_policy = make_wait_policy(comm);
    T* exposed = storage;
    std::int64_t exposed_size = size;
    if (staged) {
      // Puts land after the snapshot of the target's own size, which differs between ranks.
      m_sizes.resize(static_cast<std::size_t>(m_images));
      HETERO_MPI_CHECK(MPI_Allgather, &size, 1, MPI_INT64_T, m_sizes.data(), 1, MPI_INT64_T, comm);
      m_host = Kokkos::View<T*, Kokkos::HostSpace>("hetero::dist::window", static_cast<std::size_t>(2 * size));
      Kokkos::deep_copy(flat_view<T, Kokkos::HostSpace>(m_host.data(), static_cast<std::size_t>(size)),
                        flat_view<T, MemorySpace>(storage, static_cast<std::size_t>(size)));
      exposed = m_host.data();
      exposed_size = 2 * size;
      m_put_log.resize(static_cast<std::size_t>(m_images));
    }
    const auto bytes = static_cast<MPI_Aint>(exposed_size) * static_cast<MPI_Aint>(sizeof(T));
    HETERO_MPI_CHECK(MPI_Win_create, exposed, bytes, static_cast<int>(sizeof(T)), MPI_INFO_NULL, comm, &m_win);
    HETERO_MPI_CHECK(MPI_Win_set_errhandler, m_win, MPI_ERRORS_RETURN);
    HETERO_MPI_CHECK(MPI_Win_lock_all, MPI_MODE_NOCHECK, m_win);
  }
  rma_window(const rma_window&) = delete;
  rma_window& operator=(const rma_window&) = delete;
  ~rma_window() {
    if (m_win == MPI_WIN_NULL || mpi_finalized()) return;
    MPI_Win_unlock_all(m_win);
    if (!m_abandoned.empty())  // complete since the epoch ended
      MPI_Waitall(static_cast<int>(m_abandoned.size()), m_abandoned.data(), MPI_STATUSES_IGNORE);
    MPI_Win_free(&m_win);  // collective: windows die together with their arrays on every rank
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
      // before its data has landed).
      HETERO_MPI_CHECK(MPI_Win_flush, target, m_win);
    } catch (const deadlock_error&) {
      // An RMA request can be neither cancelled nor freed: kept, it completes at the next
      // sync_all (or when the window goes) and may write `origin` until then.
      std::lock_guard lock(m_mutex);
      for (MPI_Request r : requests)
        if (r != MPI_REQUEST_NULL) m_abandoned.push_back(r);
      throw;
    }
  }

  /// Writes `origin` (contiguous, in box order) into `boxes` of `target`'s storage; complete
  /// at the target on return, visible to it after the next synchronisation with it.
  void put(int target, std::span<const strided_box<Rank>> boxes, const T* origin, std::string_view label) {
    if (target == m_rank) return copy_own<false>(boxes, const_cast<T*>(origin));
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
      wait_scope waiting(wait_kind::point_to_point, label);
      HETERO_MPI_CHECK(MPI_Win_flush, target, m_win);
    }
    if (m_staged) {
      std::lock_guard lock(m_mutex);
      auto& log = m_put_log[static_cast<std::size_t>(target)];
      log.insert(log.end(), boxes.begin(), boxes.end());
    }
  }

  /// Every image's puts and gets before it are complete and visible after it (collective).
  void sync_all(std::string_view label) {
    {
      wait_scope waiting(wait_kind::point_to_point, label);
      HETERO_MPI_CHECK(MPI_Win_flush_all, m_win);
    }
    {
      std::lock_guard lock(m_mutex);
      if (!m_abandoned.empty()) {  // gets that gave up: complete after the flush
        HETERO_MPI_CHECK(MPI_Waitall, static_cast<int>(m_abandoned.size()), m_abandoned.data(),
                         MPI_STATUSES_IGNORE);
        m_abandoned.clear();
      }
    }
    if (m_staged) apply_logs(exchange_logs_all(label));
    HETERO_MPI_CHECK(MPI_Win_sync, m_win);
    {
      const wait_call named{"hetero::", label, -1, -1};
      const wait_call_scope scope(named);
      MPI_Request request = MPI_REQUEST_NULL;
      HETERO_MPI_CHECK(MPI_Ibarrier, m_comm, &request);
      wait_one(request, m_policy, label, wait_kind::point_to_point);
    }
    HETERO_MPI_CHECK(MPI_Win_sync, m_win);
  }

  /// Like sync_all, only between this image and `images` (each of which must name this one).
  void sync_images(std::vector<int> images, std::string_view label) {
    for (int i : images)
      HETERO_EXPECTS(i >= 0 && i < m_images, "sync_images: image ", i, " is outside the communicator's images 0..",
                     m_images - 1);
    std::sort(images.begin(), images.end());
    images.erase(std::unique(images.begin(), images.end()), images.end());
    images.erase(std::remove(images.begin(), images.end(), m_rank), images.end());
    {
      wait_scope waiting(wait_kind::point_to_point, label);
      for (int i : images) HETERO_MPI_CHECK(MPI_Win_flush, i, m_win);
    }
    HETERO_MPI_CHECK(MPI_Win_sync, m_win);
    if (m_staged) {
      apply_logs(exchange_logs_with(images, label));
      HETERO_MPI_CHECK(MPI_Win_sync, m_win);
    }
    handshake(images, ready_tag, label);  // staged: the snapshot is fresh before peers read it
    HETERO_MPI_CHECK(MPI_Win_sync, m_win);
  }

 private:
  static constexpr int log_tag = 3000;
  static constexpr int ready_tag = 3001;

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
    Kokkos::View<T*, MemorySpace> scratch("hetero::dist::scratch", static_cast<std::size_t>(n));
    flat_view<T, Kokkos::HostSpace> host(origin, static_cast<std::size_t>(n));
    if constexpr (Get) {
      list.gather(static_cast<const T*>(m_storage), scratch.data());
      Kokkos::deep_copy(host, scratch);
    } else {
      Kokkos::deep_copy(scratch, host);
      list.scatter(m_storage, static_cast<const T*>(scratch.data()));
    }
  }

  // Staged: every image sends each other image the boxes it put there since they last met.
  std::vector<strided_box<Rank>> exchange_logs_all(std::string_view label) {
    std::vector<int> send_bytes(static_cast<std::size_t>(m_images)), recv_bytes(send_bytes.size());
    std::vector<int> send_at(send_bytes.size()), recv_at(send_bytes.size());
    std::vector<strided_box<Rank>> outgoing;
    {
      std::lock_guard lock(m_mutex);
      for (int i = 0; i < m_images; ++i) {
        auto& log = m_put_log[static_cast<std::size_t>(i)];
        send_at[static_cast<std::size_t>(i)] = mpi_count(outgoing.size() * sizeof(strided_box<Rank>), "put log");
        send_bytes[static_cast<std::size_t>(i)] = mpi_count(log.size() * sizeof(strided_box<Rank>), "put log");
        outgoing.insert(outgoing.end(), log.begin(), log.end());
        log.clear();
      }
    }
    wait_scope waiting(wait_kind::point_to_point, label);
    HETERO_MPI_CHECK(MPI_Alltoall, send_bytes.data(), 1, MPI_INT, recv_bytes.data(), 1, MPI_INT, m_comm);
    std::int64_t total = 0;
    for (std::size_t i = 0; i < recv_bytes.size(); ++i) {
      recv_at[i] = mpi_count(total, "put log");
      total += recv_bytes[i];
    }
    std::vector<strided_box<Rank>> incoming(static_cast<std::size_t>(total) / sizeof(strided_box<Rank>));
    HETERO_MPI_CHECK(MPI_Alltoallv, outgoing.data(), send_bytes.data(), send_at.data(), MPI_BYTE, incoming.data(),
                     recv_bytes.data(), recv_at.data(), MPI_BYTE, m_comm);
    return incoming;
  }

  std::vector<strided_box<Rank>> exchange_logs_with(const std::vector<int>& images, std::string_view label) {
    std::vector<std::vector<strided_box<Rank>>> outgoing(images.size());
    {
      std::lock_guard lock(m_mutex);
      for (std::size_t j = 0; j < images.size(); ++j)
        outgoing[j].swap(m_put_log[static_cast<std::size_t>(images[j])]);
    }
    std::vector<MPI_Request> sends(images.size(), MPI_REQUEST_NULL);
    for (std::size_t j = 0; j < images.size(); ++j)
      HETERO_MPI_CHECK(MPI_Isend, outgoing[j].data(),
                       mpi_count(outgoing[j].size() * sizeof(strided_box<Rank>), "put log"), MPI_BYTE, images[j],
                       log_tag, m_comm, &sends[j]);
    std::vector<strided_box<Rank>> incoming;
    wait_scope waiting(wait_kind::point_to_point, label);
    for (int i : images) {
      MPI_Status status;
      HETERO_MPI_CHECK(MPI_Probe, i, log_tag, m_comm, &status);
      int bytes = 0;
      HETERO_MPI_CHECK(MPI_Get_count, &status, MPI_BYTE, &bytes);
      const auto at = incoming.size();
      incoming.resize(at + static_cast<std::size_t>(bytes) / sizeof(strided_box<Rank>));
      HETERO_MPI_CHECK(MPI_Recv, incoming.data() + at, bytes, MPI_BYTE, i, log_tag, m_comm, MPI_STATUS_IGNORE);
    }
    wait_all(sends, m_policy, label, wait_kind::point_to_point, images);
    return incoming;
  }

  // Staged: copies the boxes others put from the landing area into the storage, then
  // refreshes the snapshot from the storage.
  void apply_logs(const std::vector<strided_box<Rank>>& boxes) {
    std::vector<row> rows;
    std::int64_t n = 0;
    for (const auto& box : boxes) append_rows(box, rows, n, 0);
    if (n > 0) {
      Kokkos::View<T*, Kokkos::HostSpace> landed("hetero::dist::landed", static_cast<std::size_t>(n));
      row_list<Kokkos::HostSpace>(rows).gather(static_cast<const T*>(m_host.data() + m_size), landed.data());
      Kokkos::View<T*, MemorySpace> scratch("hetero::dist::scratch", static_cast<std::size_t>(n));
      Kokkos::deep_copy(scratch, landed);
      row_list<MemorySpace>(rows).scatter(m_storage, static_cast<const T*>(scratch.data()));
    }
    Kokkos::deep_copy(flat_view<T, Kokkos::HostSpace>(m_host.data(), static_cast<std::size_t>(m_size)),
                      flat_view<T, MemorySpace>(m_storage, static_cast<std::size_t>(m_size)));
  }

  void handshake(const std::vector<int>& images, int tag, std::string_view label) {
    std::vector<MPI_Request> requests(2 * images.size(), MPI_REQUEST_NULL);
    std::vector<int> peers(2 * images.size());
    char token = 0;
    std::vector<char> tokens(images.size());
    for (std::size_t j = 0; j < images.size(); ++j) {
      peers[2 * j] = peers[2 * j + 1] = images[j];
      HETERO_MPI_CHECK(MPI_Irecv, &tokens[j], 1, MPI_CHAR, images[j], tag, m_comm, &requests[2 * j]);
      HETERO_MPI_CHECK(MPI_Isend, &token, 1, MPI_CHAR, images[j], tag, m_comm, &requests[2 * j + 1]);
    }
    const wait_call named{"hetero::", label, -1, -1};
    const wait_call_scope scope(named);
    try {
      wait_all(requests, m_policy, label, wait_kind::point_to_point, peers);
    } catch (const deadlock_error&) {
      // The tokens live on this stack: no receive may complete after it unwinds.
      for (std::size_t i = 0; i < requests.size(); ++i) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        if (i % 2 == 0) {
          MPI_Cancel(&requests[i]);
          MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
        } else {
          MPI_Request_free(&requests[i]);
        }
      }
      throw;
    }
  }

  MPI_Comm m_comm;
  T* m_storage;
  std::int64_t m_size;
  std::vector<std::int64_t> m_sizes;  // staged: every rank's storage size (where its landing area starts)
  bool m_staged;
  int m_rank = 0;
  int m_images = 1;
  wait_policy m_policy;
  std::vector<MPI_Request> m_abandoned;  // gets that gave up waiting (completed by sync_all)
  MPI_Win m_win = MPI_WIN_NULL;
  Kokkos::View<T*, Kokkos::HostSpace> m_host;  // staged: snapshot [0, size), landing area [size, 2 size)
  MPI_Datatype m_element = mpi_type<T>();
  std::mutex m_mutex;  // guards the datatype cache and the put logs
  std::map<std::vector<std::int64_t>, mpi_datatype> m_types;
  std::vector<std::vector<strided_box<Rank>>> m_put_log;  // staged: boxes put per target since the last sync
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_WINDOW_HPP

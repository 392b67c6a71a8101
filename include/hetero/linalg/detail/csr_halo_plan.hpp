/// @file
/// The halo of a row-distributed sparse matrix: which entries of other ranks' vector blocks
/// this rank's rows read (its "ghosts", grouped by owner), which of its own entries others
/// read, and the exchange that brings the ghosts in before a product.
#ifndef HETERO_LINALG_DETAIL_CSR_HALO_PLAN_HPP
#define HETERO_LINALG_DETAIL_CSR_HALO_PLAN_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/linalg/detail/vector_kernels.hpp"  // for_rows
#include "hetero/linalg/row_block.hpp"

namespace hetero::detail {

/// Who sends what to whom in a halo exchange. Built once (collectively), used every product.
template <class MemorySpace>
class csr_halo_plan {
 public:
  csr_halo_plan() = default;

  /// `ghosts`: the sorted global indices outside `mine` that this rank's rows read. Every rank
  /// calls this with its own (collective over `comm`, which the plan keeps, not owns).
  csr_halo_plan(MPI_Comm comm, std::int64_t global_rows, row_block mine, std::span<const std::int64_t> ghosts)
      : m_comm(comm), m_local(mine.size()) {
    int p = 1;
    HETERO_MPI_CHECK(MPI_Comm_size, comm, &p);
    m_policy = policy_for(comm);

    // Ghosts are sorted by global index, so each owner's ghosts are contiguous. Both exchanges
    // are non-blocking, waited with the timeout; their buffers live on the heap and are left to
    // MPI if a wait gives up (a late rank's part still reads and writes them).
    auto ex = std::make_unique<set_up_exchange>();
    auto& [asking, need, give, need_at, give_at, asked] = *ex;
    asking.assign(ghosts.begin(), ghosts.end());
    need.assign(static_cast<std::size_t>(p), 0);
    give.assign(static_cast<std::size_t>(p), 0);
    need_at.assign(static_cast<std::size_t>(p), 0);
    give_at.assign(static_cast<std::size_t>(p), 0);
    for (std::int64_t g : ghosts) ++need[static_cast<std::size_t>(owner_of_row(g, global_rows, p))];
    try {
      MPI_Request request = MPI_REQUEST_NULL;
      HETERO_MPI_CHECK(MPI_Ialltoall, need.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm, &request);
      wait_one(request, m_policy, "hetero::distributed_csr construction (halo ghost counts)");
      for (int r = 1; r < p; ++r) {
        const auto i = static_cast<std::size_t>(r);
        need_at[i] = need_at[i - 1] + need[i - 1];
        give_at[i] = give_at[i - 1] + give[i - 1];
      }
      asked.resize(static_cast<std::size_t>(give_at.back() + give.back()));
      HETERO_MPI_CHECK(MPI_Ialltoallv, asking.data(), need.data(), need_at.data(), MPI_INT64_T, asked.data(),
                       give.data(), give_at.data(), MPI_INT64_T, comm, &request);
      wait_one(request, m_policy, "hetero::distributed_csr construction (halo ghost indices)");
    } catch (const deadlock_error&) {
      keep_for_mpi(std::move(ex));
      throw;
    }
    const auto wanted = asked.size();
    for (int r = 0; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (need[i] > 0) m_receives.push_back({r, need_at[i], need[i]});
      if (give[i] > 0) m_sends.push_back({r, give_at[i], give[i]});
    }
    std::vector<int> local(wanted);
    for (std::size_t k = 0; k < wanted; ++k) {
      HETERO_EXPECTS(mine.contains(asked[k]), "csr_halo_plan: a rank asked for entry ", asked[k],
                     " from the rank holding [", mine.begin, ", ", mine.end, ")");
      local[k] = static_cast<int>(asked[k] - mine.begin);
    }
    m_send_index = Kokkos::View<int*, MemorySpace>("hetero::halo send index", wanted);
    Kokkos::deep_copy(m_send_index,
                      Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(local.data(), wanted));
    m_send_buffer = Kokkos::View<double*, MemorySpace>("hetero::halo send", wanted);
    m_send_host = Kokkos::create_mirror_view(m_send_buffer);
    m_ghost_host = Kokkos::View<double*, Kokkos::HostSpace>("hetero::halo ghosts", ghosts.size());
  }

  /// Entries other ranks' rows read from this rank; entries this rank reads from others.
  [[nodiscard]] std::size_t sends() const noexcept { return m_send_index.extent(0); }
  [[nodiscard]] std::size_t ghosts() const noexcept { return m_ghost_host.extent(0); }
  /// Ranks this one exchanges with.
  [[nodiscard]] std::size_t neighbors() const noexcept { return m_receives.size() + m_sends.size(); }

  /// Brings the ghosts into x[local rows ..] (x holds this rank's entries first).
  /// Raises `runtime_error` once an earlier exchange gave up or failed on this rank (a late
  /// rank's ghosts of it would match this one's receives).
  template <class ExecutionSpace>
  void exchange(const Kokkos::View<double*, MemorySpace>& x) const {
    if (m_receives.empty() && m_sends.empty()) return;
    if (m_out_of_step)
      raise<runtime_error>(
          "hetero::distributed_csr: the matrix's halo exchange is out of step since an earlier "
          "spmv halo gave up waiting or failed on this rank with messages in flight, which a late "
          "rank's next product would take; it cannot multiply again: create a new matrix "
          "(collectively) or end the program");
    const auto index = m_send_index;
    const auto buffer = m_send_buffer;
    for_rows(
        "hetero::halo pack",
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(
            0, static_cast<std::int64_t>(index.extent(0))),
        KOKKOS_LAMBDA(const std::size_t k) { buffer(k) = x(static_cast<std::size_t>(index(k))); });
    ExecutionSpace().fence();
    if (m_send_host.data() != m_send_buffer.data()) Kokkos::deep_copy(m_send_host, m_send_buffer);
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
    double* ghost_area = host ? x.data() + m_local : m_ghost_host.data();
    m_requests.assign(m_receives.size() + m_sends.size(), MPI_REQUEST_NULL);
    m_peers.clear();  // the rank of each request, so that a wait that gives up names the missing
    for (const auto& r : m_receives) m_peers.push_back(r.rank);
    for (const auto& s : m_sends) m_peers.push_back(s.rank);
    m_statuses.resize(m_requests.size());
    try {  // a post that fails leaves those before it posted, as a wait that gives up does
      std::size_t k = 0;
      for (const auto& r : m_receives)
        HETERO_MPI_CHECK(MPI_Irecv, ghost_area + r.offset, r.count, MPI_DOUBLE, r.rank, tag, m_comm,
                         &m_requests[k++]);
      for (const auto& s : m_sends)
        HETERO_MPI_CHECK(MPI_Isend, m_send_host.data() + s.offset, s.count, MPI_DOUBLE, s.rank, tag, m_comm,
                         &m_requests[k++]);
      wait_all(m_requests, m_statuses, m_policy, "spmv halo", wait_kind::halo, m_peers);
    } catch (...) {
      abandon();
      throw;
    }
    if constexpr (!host) {
      const auto target =
          Kokkos::subview(x, std::pair<std::size_t, std::size_t>(m_local, m_local + m_ghost_host.extent(0)));
      Kokkos::deep_copy(target, m_ghost_host);
    }
  }

 private:
  static constexpr int tag = 7001;

  /// After a wait that failed: a late rank's ghosts must not land in `x` (the caller may free it
  /// now), so receives are cancelled; sends are left to MPI with their buffer, and the
  /// communicator is never freed (its late messages would reach a new one).
  void abandon() const {
    m_out_of_step = true;
    keep_for_mpi(std::make_unique<decltype(m_send_host)>(m_send_host));
    const std::size_t receives = m_receives.size();  // posted first
    const auto is_receive = [receives](std::size_t k) { return k < receives; };
    abandon_requests(m_requests, is_receive, m_comm);
    m_requests.clear();
  }
  // The buffers of the set-up's two exchanges.
  struct set_up_exchange {
    std::vector<std::int64_t> asking;  // this rank's ghosts (a copy: the caller's span may die first)
    std::vector<int> need, give, need_at, give_at;
    std::vector<std::int64_t> asked;  // the entries others ask of this rank
  };
  struct peer {
    int rank;
    int offset;
    int count;
  };

  MPI_Comm m_comm = MPI_COMM_NULL;
  std::size_t m_local = 0;
  wait_policy m_policy;
  std::vector<peer> m_receives, m_sends;
  Kokkos::View<int*, MemorySpace> m_send_index;
  Kokkos::View<double*, MemorySpace> m_send_buffer;
  typename Kokkos::View<double*, MemorySpace>::HostMirror m_send_host;
  Kokkos::View<double*, Kokkos::HostSpace> m_ghost_host;
  mutable std::vector<MPI_Request> m_requests;
  mutable std::vector<MPI_Status> m_statuses;
  mutable std::vector<int> m_peers;
  mutable bool m_out_of_step = false;  // an exchange was abandoned (`abandon`)
};

}  // namespace hetero::detail

#endif  // HETERO_LINALG_DETAIL_CSR_HALO_PLAN_HPP

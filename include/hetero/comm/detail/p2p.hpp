/// @file
/// The point-to-point steps of the module's own algorithms: a batch of sends and receives
/// posted together and completed together (waited politely, see core/mpi/wait.hpp), with received
/// sizes checked so that ranks passing different counts get an error naming the collective.
#ifndef HETERO_COMM_DETAIL_P2P_HPP
#define HETERO_COMM_DETAIL_P2P_HPP

#include <mpi.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/datatype.hpp"
#include "hetero/core/mpi/wait.hpp"

namespace hetero::detail {

/// Sends and receives of one algorithm step. Every collective has its own tag; messages
/// between two ranks are matched in order, so back-to-back collectives cannot mix.
template <class T>
class p2p_batch {
 public:
  p2p_batch(comm_state& state, collective kind) noexcept
      : m_state(state), m_kind(kind), m_tag(1000 + static_cast<int>(kind)) {}
  p2p_batch(const p2p_batch&) = delete;
  p2p_batch& operator=(const p2p_batch&) = delete;
  ~p2p_batch() {
    // An error left requests behind: cancel the receives and let them finish, so no buffer is
    // written after the caller unwound. A send a peer never receives (it gave up, or never
    // came) would block forever: those are released to MPI instead (their data is the
    // caller's, which MPI may still read if the peer comes late). After a wait that failed
    // (the communicator is out of step: wait() marked it), the peers' messages may still come,
    // and the communicator is never freed. An argument error found on the shared-memory path
    // after the messages were posted leaves the communicator usable, as the module promises.
    if (m_requests.empty() || mpi_finalized()) return;
    try {
      const MPI_Comm keep = m_state.out_of_step() ? m_state.comm() : MPI_COMM_NULL;
      const auto is_receive = [this](std::size_t i) { return m_expected[i] >= 0; };
      abandon_requests(m_requests, is_receive, keep);
    } catch (...) {  // out of memory: a destructor raises nothing
    }
  }

  /// Posts a send of `n` elements to rank `to`.
  void send(const T* data, std::size_t n, int to) {
    MPI_Request& r = add(-1);
    m_peers.back() = to;
    HETERO_MPI_CHECK(MPI_Isend, data, mpi_count(n, "message size"), mpi_type<T>(), to, m_tag, m_state.comm(), &r);
  }

  /// Posts a receive of exactly `n` elements from rank `from`.
  void recv(T* data, std::size_t n, int from) {
    MPI_Request& r = add(static_cast<long long>(n));
    m_peers.back() = from;
    HETERO_MPI_CHECK(MPI_Irecv, data, mpi_count(n, "message size"), mpi_type<T>(), from, m_tag, m_state.comm(),
                     &r);
  }

  /// Completes everything posted; throws `invalid_argument` when a rank sent another count.
  void wait() {
    if (m_requests.empty()) return;
    m_statuses.resize(m_requests.size());
    try {
      wait_all(m_requests, m_statuses, m_state.policy(), to_string(m_kind), wait_kind::collective, m_peers);
    } catch (const deadlock_error&) {
      m_state.mark_out_of_step(to_string(m_kind));
      throw;
    } catch (const mpi_error&) {
      for (std::size_t i = 0; i < m_statuses.size(); ++i) {
        int error_class = MPI_SUCCESS;
        MPI_Error_class(m_statuses[i].MPI_ERROR, &error_class);
        if (m_expected[i] >= 0 && error_class == MPI_ERR_TRUNCATE) mismatch(i, -1);
      }
      m_state.mark_out_of_step(to_string(m_kind), "raised hetero::mpi_error");
      throw;
    }
    for (std::size_t i = 0; i < m_statuses.size(); ++i) {
      if (m_expected[i] < 0) continue;
      int count = 0;
      MPI_Get_count(&m_statuses[i], mpi_type<T>(), &count);
      if (count != m_expected[i]) mismatch(i, count);
    }
    clear();
  }

  /// Posts and completes one exchange (either side may be empty: n == 0 still matches).
  void exchange(const T* out, std::size_t n_out, int to, T* in, std::size_t n_in, int from) {
    recv(in, n_in, from);
    send(out, n_out, to);
    wait();
  }

 private:
  MPI_Request& add(long long expected) {
    m_requests.push_back(MPI_REQUEST_NULL);
    m_expected.push_back(expected);
    m_peers.push_back(-1);
    return m_requests.back();
  }

  void clear() noexcept {
    m_requests.clear();
    m_expected.clear();
    m_peers.clear();
  }

  // `got` < 0: more than expected (the message was truncated). Requests still pending are
  // cancelled by the destructor.
  [[noreturn]] void mismatch(std::size_t i, int got) {
    // The ranks' steps differ from here on (a rank with another count may go on sending, or
    // wait for this one): the next call would take this one's messages.
    m_state.mark_out_of_step(to_string(m_kind), "found ranks that passed different counts");
    const auto sent = got < 0 ? std::string("more than ") + std::to_string(m_expected[i]) : std::to_string(got);
    raise<invalid_argument>(to_string(m_kind), ": rank ", m_peers[i], " sent ", sent,
                            " element(s) where this rank (", m_state.rank(), ") expected ", m_expected[i],
                            "; the ranks passed different counts");
  }

  comm_state& m_state;
  collective m_kind;
  int m_tag;
  std::vector<MPI_Request> m_requests;
  std::vector<MPI_Status> m_statuses;
  std::vector<long long> m_expected;  // elements expected of a receive; -1 for a send
  std::vector<int> m_peers;           // the rank each request sends to or receives from
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_P2P_HPP

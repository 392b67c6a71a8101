/// @file
/// `hetero::collective_request`: the handle a non-blocking collective returns. `test()` polls
/// (and drives progress), `wait()` blocks; results are in the receive buffer once either says
/// done. The task module can make it an event a tasklet depends on (see docs/comm.md): the
/// request is movable, type-erased, keeps its communicator alive, and polling `test()` from a
/// progress loop is all completion needs.
#ifndef HETERO_COMM_REQUEST_HPP
#define HETERO_COMM_REQUEST_HPP

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/shm_channel.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/request_errors.hpp"
#include "hetero/core/mpi/wait.hpp"

namespace hetero {

namespace detail {
struct request_access;

/// The end of a non-blocking reduction with a user operation: the collective itself (its
/// shared-memory operation or MPI request), what the operation threw on this rank (the guarded
/// operation records it, see `op_failure`), and, when the other ranks are to hear of it
/// (`tell_others`: argument checks not `local`, more than one rank), one int from each rank to
/// each other: its number if its operation threw, else p. Messages, not a collective: the ranks
/// may wait for their requests in any order, between other collectives; the messages of one
/// request match by their tag (`comm_state::next_settle_tag`). A rank sends its word once it
/// sees the collective done, in any request's `test()` or `wait()` on the communicator
/// (`drive_settles`).
struct request_settle {
  op_failure failure;
  bool tell_others = false;
  int tag = 0;
  std::string_view what = "collective";    // the call's name, for the communicator's mark
  std::shared_ptr<shm_pending> shm;        // the collective on shared memory, or
  MPI_Request primary = MPI_REQUEST_NULL;  // MPI's call
  bool started = false;                    // the collective is done here, the words under way
  int mine = 0;
  std::vector<int> theirs;            // one per rank
  std::vector<MPI_Request> requests;  // the sends, then the receives

  /// True once the collective is done here and this rank's word is under way.
  bool poll(comm_state& st) {
    if (started) return true;
    if (shm) {
      if (!shm->completed) return false;
      if (shm->error) failure.record(shm->error);
      shm.reset();
    } else if (primary != MPI_REQUEST_NULL) {
      int flag = 0;
      try {
        HETERO_MPI_CHECK(MPI_Test, &primary, &flag, MPI_STATUS_IGNORE);
      } catch (const mpi_error&) {
        // This reduction failed in MPI (any request's test() may poll it, `drive_settles`): its
        // own request raises it, and the communicator is out of step.
        failure.record(std::current_exception());
        st.mark_out_of_step(what, "raised hetero::mpi_error");
        primary = MPI_REQUEST_NULL;
        flag = 1;
      }
      if (!flag) return false;
    }
    started = true;
    if (tell_others) send_words(st.comm(), st.rank(), st.size());
    return true;
  }
  /// True once every rank's word is in.
  bool settled() {
    if (!started) return false;
    if (requests.empty()) return true;
    int flag = 0;
    HETERO_MPI_CHECK(MPI_Testall, static_cast<int>(requests.size()), requests.data(), &flag, MPI_STATUSES_IGNORE);
    return flag != 0;
  }
  /// The first rank whose operation threw (p: none), once settled.
  [[nodiscard]] int first() const { return std::min(mine, *std::min_element(theirs.begin(), theirs.end())); }

 private:
  void send_words(MPI_Comm comm, int rank, int size) {
    mine = failure.failed.load() ? rank : size;
    theirs.assign(static_cast<std::size_t>(size), size);
    requests.assign(2 * static_cast<std::size_t>(size - 1), MPI_REQUEST_NULL);
    std::size_t i = 0;
    for (int r = 0; r < size; ++r)
      if (r != rank) HETERO_MPI_CHECK(MPI_Isend, &mine, 1, MPI_INT, r, tag, comm, &requests[i++]);
    for (int r = 0; r < size; ++r)
      if (r != rank)
        HETERO_MPI_CHECK(MPI_Irecv, &theirs[static_cast<std::size_t>(r)], 1, MPI_INT, r, tag, comm,
                         &requests[i++]);
  }
};

/// Polls every non-blocking reduction of `st` whose word is not yet under way, so that a rank
/// waiting for one request also sends its word on the others, whatever order the ranks wait in.
inline void drive_settles(comm_state& st) {
  if (st.shm()) st.shm()->progress();
  auto& list = st.unsettled();
  for (auto it = list.begin(); it != list.end();) {
    const auto settle = std::static_pointer_cast<request_settle>(it->lock());
    if (!settle || settle->poll(st))
      it = list.erase(it);
    else
      ++it;
  }
}
}  // namespace detail

/// A started non-blocking collective. Buffers passed to it must stay alive and untouched until
/// it is done. Destroying an unfinished request waits for it.
/// <!-- snippet: fragment
/// hetero::communicator comm;
/// double local = 1, global = 0;
/// auto overlap_some_work = [] {};
/// -->
/// @code
/// auto request = comm.iallreduce(hetero::send_buf(local), hetero::recv_buf(global),
///                                hetero::op(hetero::ops::sum{}));
/// overlap_some_work();
/// request.wait();
/// @endcode
class collective_request {
 public:
  /// A request that is already done (nothing started).
  collective_request() = default;
  collective_request(const collective_request&) = delete;
  collective_request& operator=(const collective_request&) = delete;
  /// Takes over `other`'s collective; `other` is left done.
  collective_request(collective_request&& other) noexcept { take(other); }
  /// Waits for this request's own collective (reporting a failure on stderr), then takes over `other`'s.
  collective_request& operator=(collective_request&& other) noexcept {
    if (this != &other) {
      finish_quietly();
      take(other);
    }
    return *this;
  }
  ~collective_request() { finish_quietly(); }

  /// Drives progress once; true when the collective is done (then its results are in place).
  /// Throws what the collective raised (e.g. a count mismatch, or what a user's reduction
  /// operation threw here; a `hetero::error` where it threw on another rank), once. A reduction
  /// with a user operation is done once the ranks also told each other whether it threw.
  bool test() {
    if (m_done) return true;
    // An error MPI finds in a request (a message longer than its receive: ranks that passed
    // other counts) returns here as hetero::mpi_error instead of ending the job.
    const detail::request_errors_returned returned;
    try {
      if (m_settle) {
        if (!settled()) return false;
      } else if (m_shm) {
        m_state->shm()->progress();
        if (!m_shm->completed) return false;
      } else {
        // Queued shared-memory requests progress too: a broadcast root may wait for them to finish.
        if (detail::shm_channel* channel = m_state->shm(); channel && !channel->idle()) channel->progress();
        int flag = 0;
        HETERO_MPI_CHECK(MPI_Test, &m_mpi, &flag, MPI_STATUS_IGNORE);
        if (!flag) return false;
      }
    } catch (const mpi_error&) {
      abandon("raised hetero::mpi_error");
      throw;
    }
    complete();
    return true;
  }

  /// Blocks until the collective is done (reported to the observer as a collective wait).
  void wait() {
    if (m_done) return;
    const detail::wait_call named{"hetero::collective_request::wait of hetero::communicator::", m_what, -1, -1};
    const detail::wait_call_scope scope(named);
    const detail::request_errors_returned returned;  // as in test()
    try {
      if (m_settle) {
        if (!settled()) {
          const wait_scope waiting(wait_kind::collective, m_what);
          detail::backoff b(m_state->policy(), m_what);
          while (!settled()) b.pause();
        }
      } else if (m_shm) {
        detail::shm_channel& channel = *m_state->shm();
        if (!m_shm->completed) channel.wait_until([&] { return m_shm->completed; }, m_what);
      } else if (detail::shm_channel* channel = m_state->shm(); channel && !channel->idle()) {
        channel->wait_for(m_mpi, m_what);  // queued shared-memory requests progress meanwhile
      } else {
        MPI_Status status;
        detail::wait_all(std::span(&m_mpi, 1), std::span(&status, 1), m_state->policy(), m_what);
      }
    } catch (const deadlock_error&) {
      abandon("raised hetero::deadlock_error");
      throw;
    } catch (const mpi_error&) {
      abandon("raised hetero::mpi_error");
      throw;
    }
    complete();
  }

  /// True once `test()` or `wait()` saw the collective done.
  [[nodiscard]] bool done() const noexcept { return m_done; }

  /// The MPI request underneath, for a scheduler that tests many at once (MPI_Testsome);
  /// MPI_REQUEST_NULL on the shared-memory path or when done. Call `test()` after MPI reports
  /// it complete, so that staged results are copied out; a reduction with a user operation
  /// then still exchanges one word per rank (whether the operation threw): call `test()` until
  /// it returns true.
  [[nodiscard]] MPI_Request mpi_request() const noexcept { return m_settle ? m_settle->primary : m_mpi; }

 private:
  // Waiting again (e.g. in the destructor) would only fail again: the request is left to MPI,
  // and the communicator is out of step (`how` says why). MPI may still complete the collective
  // and the ranks' words on a reduction (a late rank): what it writes or reads stays allocated
  // (`keep_for_mpi`). This rank's word on a reduction is no longer sent where it was not yet:
  // a rank still waiting for it gives up after its wait timeout (it hangs under no_timeout, as
  // in any call a rank left). A shared-memory operation stays queued on the channel, and a
  // later call's progress may still complete it into the caller's receive buffer.
  void abandon(std::string_view how) {
    m_state->mark_out_of_step(m_what, how);
    m_done = true;
    m_shm.reset();
    m_mpi = MPI_REQUEST_NULL;
    m_finish = nullptr;
    if (m_keep) detail::keep_for_mpi(std::make_unique<std::shared_ptr<void>>(std::move(m_keep)));
    if (m_settle) {
      m_settle->started = true;  // drive_settles drops it
      detail::keep_for_mpi(std::make_unique<std::shared_ptr<detail::request_settle>>(std::move(m_settle)));
    }
  }

  friend struct detail::request_access;

  // A reduction with a user operation: done once this rank's word is under way (driving every
  // other request's too) and every rank's word is in.
  bool settled() {
    detail::drive_settles(*m_state);
    return m_settle->poll(*m_state) && m_settle->settled();
  }

  void complete() {
    m_done = true;
    std::exception_ptr error = m_shm ? m_shm->error : nullptr;
    if (m_settle) {
      if (m_settle->failure.failed.load())
        error = m_settle->failure.error;
      else if (m_settle->tell_others && m_settle->first() < m_state->size())
        error = std::make_exception_ptr(error_of_rank(m_settle->first()));
      m_settle.reset();
    }
    m_shm.reset();
    const auto finish = std::exchange(m_finish, nullptr);
    const auto keep = std::move(m_keep);  // staging buffers live until finish() copied out of them
    if (error) std::rethrow_exception(error);
    if (finish) finish();
  }

  [[nodiscard]] hetero::error error_of_rank(int first) const {
    return hetero::error(detail::message(
        m_what, ": rank ", first,
        " raised an error during the reduction (its own error says what: its reduction operation threw); the "
        "result on this rank (",
        m_state->rank(), ") is not valid"));
  }

  void finish_quietly() noexcept {
    if (m_done || detail::mpi_finalized()) return;
    try {
      wait();
    } catch (const std::exception& e) {
      // Never silent: the owner dropped the request without asking how it ended.
      std::fprintf(stderr, "hetero: a collective request destroyed unfinished failed: %s\n", e.what());
    }
  }

  void take(collective_request& other) noexcept {
    m_state = std::move(other.m_state);
    m_shm = std::move(other.m_shm);
    m_mpi = std::exchange(other.m_mpi, MPI_REQUEST_NULL);
    m_finish = std::move(other.m_finish);
    m_keep = std::move(other.m_keep);
    m_settle = std::move(other.m_settle);
    m_what = other.m_what;
    m_done = std::exchange(other.m_done, true);
  }

  std::shared_ptr<detail::comm_state> m_state;
  std::shared_ptr<detail::shm_pending> m_shm;
  MPI_Request m_mpi = MPI_REQUEST_NULL;
  std::function<void()> m_finish;                    // copies staged results out, after completion
  std::shared_ptr<void> m_keep;                      // staging buffers, MPI operation objects: alive until done
  std::shared_ptr<detail::request_settle> m_settle;  // reductions with a user operation
  std::string_view m_what = "collective";
  bool m_done = true;
};

namespace detail {

/// How the collectives make requests.
struct request_access {
  static collective_request shm(std::shared_ptr<comm_state> state, std::shared_ptr<shm_pending> op,
                                std::string_view what, std::function<void()> finish = {},
                                std::shared_ptr<void> keep = {}, std::shared_ptr<request_settle> settle = {}) {
    collective_request r;
    r.m_state = std::move(state);
    if (settle) {
      settle->what = what;
      settle->shm = std::move(op);
      r.m_state->unsettled().push_back(settle);
    }
    r.m_shm = std::move(op);
    r.m_settle = std::move(settle);
    r.m_finish = std::move(finish);
    r.m_keep = std::move(keep);
    r.m_what = what;
    r.m_done = false;
    return r;
  }
  static collective_request mpi(std::shared_ptr<comm_state> state, MPI_Request request, std::string_view what,
                                std::function<void()> finish = {}, std::shared_ptr<void> keep = {},
                                std::shared_ptr<request_settle> settle = {}) {
    collective_request r;
    r.m_state = std::move(state);
    if (settle) {
      settle->what = what;
      settle->primary = std::exchange(request, MPI_REQUEST_NULL);
      r.m_state->unsettled().push_back(settle);
    }
    r.m_mpi = request;
    r.m_settle = std::move(settle);
    r.m_finish = std::move(finish);
    r.m_keep = std::move(keep);
    r.m_what = what;
    r.m_done = false;
    return r;
  }
};

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_COMM_REQUEST_HPP

/// @file
/// `hetero::collective_request`: the handle a non-blocking collective returns. `test()` polls
/// (and drives progress), `wait()` blocks; results are in the receive buffer once either says
/// done. The task module can make it an event a tasklet depends on (see docs/comm.md): the
/// request is movable, type-erased, keeps its communicator alive, and polling `test()` from a
/// progress loop is all completion needs.
#ifndef HETERO_COMM_REQUEST_HPP
#define HETERO_COMM_REQUEST_HPP

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/shm_channel.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"

namespace hetero {

namespace detail {
struct request_access;
}  // namespace detail

/// A started non-blocking collective. Buffers passed to it must stay alive and untouched until
/// it is done. Destroying an unfinished request waits for it.
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
  collective_request(collective_request&& other) noexcept { take(other); }
  collective_request& operator=(collective_request&& other) noexcept {
    if (this != &other) {
      finish_quietly();
      take(other);
    }
    return *this;
  }
  ~collective_request() { finish_quietly(); }

  /// Drives progress once; true when the collective is done (then its results are in place).
  /// Throws what the collective raised (e.g. a count mismatch), once.
  bool test() {
    if (m_done) return true;
    if (m_shm) {
      m_state->shm()->progress();
      if (!m_shm->completed) return false;
    } else {
      int flag = 0;
      HETERO_MPI_CHECK(MPI_Test, &m_mpi, &flag, MPI_STATUS_IGNORE);
      if (!flag) return false;
    }
    complete();
    return true;
  }

  /// Blocks until the collective is done (reported to the observer as a collective wait).
  void wait() {
    if (m_done) return;
    const detail::wait_call named{"hetero::collective_request::wait of hetero::communicator::", m_what, -1, -1};
    const detail::wait_call_scope scope(named);
    try {
      if (m_shm) {
        detail::shm_channel& channel = *m_state->shm();
        if (!m_shm->completed) channel.wait_until([&] { return m_shm->completed; }, m_what);
      } else {
        MPI_Status status;
        detail::wait_all(std::span(&m_mpi, 1), std::span(&status, 1), m_state->policy(), m_what);
      }
    } catch (const deadlock_error&) {
      // Abandoned: waiting again (e.g. in the destructor) would only time out again.
      m_state->mark_out_of_step(m_what);
      m_done = true;
      m_shm.reset();
      m_mpi = MPI_REQUEST_NULL;
      throw;
    }
    complete();
  }

  /// True once `test()` or `wait()` saw the collective done.
  [[nodiscard]] bool done() const noexcept { return m_done; }

  /// The MPI request underneath, for a scheduler that tests many at once (MPI_Testsome);
  /// MPI_REQUEST_NULL on the shared-memory path or when done. Call `test()` after MPI reports
  /// it complete, so that staged results are copied out.
  [[nodiscard]] MPI_Request mpi_request() const noexcept { return m_mpi; }

 private:
  friend struct detail::request_access;

  void complete() {
    m_done = true;
    const std::exception_ptr error = m_shm ? m_shm->error : nullptr;
    m_shm.reset();
    const auto finish = std::exchange(m_finish, nullptr);
    const auto keep = std::move(m_keep);  // staging buffers live until finish() copied out of them
    if (error) std::rethrow_exception(error);
    if (finish) finish();
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
    m_what = other.m_what;
    m_done = std::exchange(other.m_done, true);
  }

  std::shared_ptr<detail::comm_state> m_state;
  std::shared_ptr<detail::shm_pending> m_shm;
  MPI_Request m_mpi = MPI_REQUEST_NULL;
  std::function<void()> m_finish;  // copies staged results out, after completion
  std::shared_ptr<void> m_keep;    // staging buffers, MPI operation objects: alive until done
  std::string_view m_what = "collective";
  bool m_done = true;
};

namespace detail {

/// How the collectives make requests.
struct request_access {
  static collective_request shm(std::shared_ptr<comm_state> state, std::shared_ptr<shm_pending> op,
                                std::string_view what, std::function<void()> finish = {},
                                std::shared_ptr<void> keep = {}) {
    collective_request r;
    r.m_state = std::move(state);
    r.m_shm = std::move(op);
    r.m_finish = std::move(finish);
    r.m_keep = std::move(keep);
    r.m_what = what;
    r.m_done = false;
    return r;
  }
  static collective_request mpi(std::shared_ptr<comm_state> state, MPI_Request request, std::string_view what,
                                std::function<void()> finish = {}, std::shared_ptr<void> keep = {}) {
    collective_request r;
    r.m_state = std::move(state);
    r.m_mpi = request;
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

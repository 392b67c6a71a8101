/// @file
/// The controller's traffic within one group of ranks: a sequence of exchanges, each a gather to
/// the group's leader ("up") followed by the leader's answer ("down": a scatter, or a broadcast),
/// all non-blocking and progressed by polling, so a helper thread can drive them without ever
/// blocking the application or busy-waiting in MPI.
#ifndef HETERO_POWER_DETAIL_CONTROL_CHANNEL_HPP
#define HETERO_POWER_DETAIL_CONTROL_CHANNEL_HPP

#include <mpi.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/comm_ref.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/wait.hpp"

namespace hetero::power::detail {

/// One exchange: every rank sends `up` to the leader; the leader answers `down_count` values to
/// each rank (scatter) or the same values to all (broadcast).
struct exchange {
  std::vector<double> up;        // this rank's part
  std::vector<double> gathered;  // leader: every rank's part, by group rank
  std::vector<double> answer;    // leader: what it sends down
  std::vector<double> received;  // this rank's part of the answer
  bool broadcast = false;
  bool answered = false;  // leader: the down operation is posted
  MPI_Request up_request = MPI_REQUEST_NULL;
  MPI_Request down_request = MPI_REQUEST_NULL;
};

/// The group's two collective streams. Gathers and answers use separate communicators, so that
/// the leader may post the gather of exchange k + 1 before answering exchange k while every rank
/// still calls each communicator's collectives in the same order (MPI's rule for non-blocking
/// collectives). A third communicator carries the shutdown agreement.
class control_channel {
 public:
  /// Splits `comm` into groups of `group_size` consecutive ranks (0: one group). Collective.
  /// Waits give up after `comm`'s timeout (its handle's, or the process-wide one).
  control_channel(comm_ref comm, int group_size) {
    int rank = 0, size = 0;
    HETERO_MPI_CHECK(MPI_Comm_rank, comm, &rank);
    HETERO_MPI_CHECK(MPI_Comm_size, comm, &size);
    const int per_group = group_size > 0 ? group_size : size;
    // The split and duplicates below block inside MPI until every rank comes: first check, with
    // waits that give up, that every rank of `comm` is here.
    // Then the blocking steps are watched (the runtime's watchdog ends a job stuck there).
    const auto setup = ::hetero::detail::wait_policy_of(comm);
    {
      const auto base =
          ::hetero::detail::duplicate_on_arrival(comm.get(), setup, "hetero::power::controller start");
      const ::hetero::detail::blocking_call blocked(setup, "hetero::power::controller start (group split)",
                                                    ::hetero::wait_kind::collective);
      m_up = ::hetero::detail::owned_comm::split(base.get(), rank / per_group, rank);
      m_down = ::hetero::detail::owned_comm::duplicate(m_up.get());
      m_shutdown = ::hetero::detail::owned_comm::duplicate(m_up.get());
    }
    m_rank = m_up.rank();
    m_size = m_up.size();
    m_policy = ::hetero::detail::make_wait_policy(
        m_up.get(), ::hetero::detail::policy_seconds(comm.wait_timeout(), comm.timeout_option()),
        comm.timeout_option());
  }
  control_channel(const control_channel&) = delete;
  control_channel& operator=(const control_channel&) = delete;

  /// This rank in its group, the group's size, and whether this rank leads it (group rank 0).
  [[nodiscard]] int rank() const noexcept { return m_rank; }
  [[nodiscard]] int size() const noexcept { return m_size; }
  [[nodiscard]] bool leader() const noexcept { return m_rank == 0; }
  /// Exchanges posted so far (ranks of a group post the same sequence).
  [[nodiscard]] std::size_t posted() const noexcept { return m_posted; }
  /// Exchanges posted and not yet completed here.
  [[nodiscard]] std::size_t pending() const noexcept { return m_pending.size(); }

  /// Posts the next exchange: sends `up` (same length on every rank), and, on other ranks than
  /// the leader, the receive of `down_count` answer values.
  void post(std::vector<double> up, int down_count, bool broadcast) {
    exchange& e = m_pending.emplace_back();
    e.up = std::move(up);
    e.broadcast = broadcast;
    e.received.assign(static_cast<std::size_t>(down_count), 0.0);
    const int count = ::hetero::detail::mpi_count(e.up.size(), "controller message");
    if (leader()) e.gathered.resize(e.up.size() * static_cast<std::size_t>(m_size));
    HETERO_MPI_CHECK(MPI_Igather, e.up.data(), count, MPI_DOUBLE, e.gathered.data(), count, MPI_DOUBLE, 0,
                     m_up.get(), &e.up_request);
    if (!leader()) post_down(e);
    ++m_posted;
  }

  /// Leader: the oldest unanswered exchange whose gather has completed, or nullptr. Answer it
  /// with `answer` before asking again.
  exchange* next_to_answer(bool wait = false) {
    for (exchange& e : m_pending) {
      if (e.answered) continue;
      if (!complete(e.up_request, wait)) return nullptr;
      return &e;
    }
    return nullptr;
  }
  /// Leader: sends `values` down for `e` (every rank's part in order for a scatter, the common
  /// part for a broadcast).
  void answer(exchange& e, std::vector<double> values) {
    e.answer = std::move(values);
    post_down(e);
  }

  /// The answer of the oldest exchange once it has arrived (and this rank's gather has gone),
  /// removing it; false while it has not. With `wait`, blocks until it has.
  bool next_answer(std::vector<double>& values, bool wait = false) {
    if (m_pending.empty()) return false;
    exchange& e = m_pending.front();
    if (!e.answered && leader()) return false;
    if (!complete(e.down_request, wait) || !complete(e.up_request, wait)) return false;
    values = std::move(e.received);
    m_pending.pop_front();
    return true;
  }

  /// Waits until every rank of the group is here (blocking, collective; `deadlock_error`
  /// after the wait timeout).
  void synchronize() const {
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Ibarrier, m_shutdown.get(), &request);
    ::hetero::detail::wait_one(request, m_policy.on(m_shutdown.get()),
                               "hetero::power::controller start (group barrier)");
  }

  /// Shutdown agreement: the largest `count` over the group (blocking, collective;
  /// `deadlock_error` after the wait timeout).
  [[nodiscard]] std::size_t agree_on_max(std::size_t count) const {
    const auto all = ::hetero::detail::allreduce_max<1>(
        {count}, m_shutdown.get(), m_policy, "hetero::power::controller stop (exchange count agreement)");
    return static_cast<std::size_t>(all[0]);
  }

 private:
  void post_down(exchange& e) {
    const int count = ::hetero::detail::mpi_count(e.received.size(), "controller answer");
    if (e.broadcast) {
      if (leader()) e.received = e.answer;
      HETERO_MPI_CHECK(MPI_Ibcast, e.received.data(), count, MPI_DOUBLE, 0, m_down.get(), &e.down_request);
    } else {
      HETERO_MPI_CHECK(MPI_Iscatter, e.answer.data(), count, MPI_DOUBLE, e.received.data(), count, MPI_DOUBLE, 0,
                       m_down.get(), &e.down_request);
    }
    e.answered = true;
  }

  bool complete(MPI_Request& request, bool wait) const {
    if (request == MPI_REQUEST_NULL) return true;
    if (wait) {
      ::hetero::detail::wait_one(request, m_policy, "hetero::power::controller exchange");
      return true;
    }
    int done = 0;
    HETERO_MPI_CHECK(MPI_Test, &request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  }

  ::hetero::detail::owned_comm m_up;
  ::hetero::detail::owned_comm m_down;
  ::hetero::detail::owned_comm m_shutdown;
  int m_rank = 0;
  int m_size = 1;
  ::hetero::detail::wait_policy m_policy;  // the group's (over m_up)
  std::size_t m_posted = 0;
  std::deque<exchange> m_pending;
};

}  // namespace hetero::power::detail

#endif  // HETERO_POWER_DETAIL_CONTROL_CHANNEL_HPP

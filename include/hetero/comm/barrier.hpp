/// @file
/// `communicator::barrier` and `ibarrier`: no rank leaves before every rank arrived.
#ifndef HETERO_COMM_BARRIER_HPP
#define HETERO_COMM_BARRIER_HPP

#include <mpi.h>

#include <memory>

#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/detail/interface.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/request.hpp"

namespace hetero::detail {

inline void run_barrier(comm_state& st, comm_algorithm forced) {
  switch (choose(st, {collective::barrier, 0, 0}, forced)) {
    case comm_algorithm::shm: {
      shm_barrier operation(*st.shm());
      run_blocking(*st.shm(), operation, "barrier");
      return;
    }
    case comm_algorithm::dissemination: dissemination_barrier(st); return;
    default:
      call_mpi(
          st, "barrier", "MPI_Barrier", [&] { return MPI_Barrier(st.comm()); },
          [&](MPI_Request* r) { return MPI_Ibarrier(st.comm(), r); });
  }
}

/// The barrier members of `communicator`.
template <class Derived>
class barrier_interface {
 public:
  /// Returns once every rank has entered the barrier. Parameter: `force_algorithm(a)` (mpi,
  /// shm, dissemination).
  template <class... Args>
  void barrier(Args&&... args) const {
    check_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    checked_call(st, collective::barrier, [&](call_signature& s) { s.algorithm = static_cast<int>(forced); });
    run_barrier(st, forced);
  }

  /// Starts a barrier: the request is done once every rank has started it (shm or mpi).
  template <class... Args>
  [[nodiscard]] collective_request ibarrier(Args&&... args) const {
    check_parameters<Args...>();
    const auto& state = state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    checked_call(*state, collective::barrier, [&](call_signature& s) { s.algorithm = static_cast<int>(forced); });
    if (choose_nonblocking(*state, {collective::barrier, 0, 0}, forced) == comm_algorithm::shm)
      return request_access::shm(state, start_queued<shm_barrier>(*state->shm()), "ibarrier");
    MPI_Request r = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Ibarrier, state->comm(), &r);
    return request_access::mpi(state, r, "ibarrier");
  }

 private:
  template <class... Args>
  static constexpr void check_parameters() {
    static_assert(only_parameters<Args...>({parameter::algorithm}),
                  "hetero: barrier takes only force_algorithm(...)");
  }
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_BARRIER_HPP

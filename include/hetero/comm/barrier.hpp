/// @file
/// The shape of `communicator::barrier` and `ibarrier`: no rank leaves before every rank arrived.
#ifndef HETERO_COMM_BARRIER_HPP
#define HETERO_COMM_BARRIER_HPP

#include <mpi.h>

#include <memory>

#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, dissemination.
struct barrier_shape : shape_base<collective::barrier, shape_flags{}> {
  using call_type = collective_call<char, Kokkos::HostSpace>;

  template <class... Args>
  static constexpr void check() {
    static_assert(only_parameters<Args...>({parameter::algorithm}),
                  "hetero: barrier takes only force_algorithm(...)");
  }

  template <class... Args>
  static call_type parse(comm_state& st, const call_options& o, Args&...) {
    checked_call(st, o, kind, [&](call_signature& s) { s.algorithm = static_cast<int>(o.forced); });
    auto call = new_call<char, Kokkos::HostSpace>(o);
    // An agreement by message (no shared-memory window, or full checks) heard from every rank:
    // it was the barrier, unless the caller forced an algorithm.
    call.n = o.forced == comm_algorithm::automatic && st.agreed() ? 0 : 1;
    return call;
  }

  static bool empty(const call_type& call) { return call.n == 0; }
  static call_traits traits(const comm_state&, const call_type&) { return {kind, 0, 0}; }
  static block_layout send_layout(const comm_state&, const call_type&) { return {}; }
  static block_layout recv_layout(const comm_state&, const call_type&) { return {}; }

  template <class T, class Ops>
  static void run(comm_state& st, comm_algorithm a, const call_type& call) {
    switch (a) {
      case comm_algorithm::shm: return run_shm<shm_barrier>(*st.shm(), name);
      case comm_algorithm::dissemination: return dissemination_barrier(st);
      default: return run_mpi<barrier_shape>(st, call);
    }
  }
  static int mpi(const comm_state& st, const call_type&, const mpi_context&, MPI_Request* r) {
    return mpi_form(r, MPI_Barrier, MPI_Ibarrier, st.comm());
  }

  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const call_type&) {
    return start_queued<shm_barrier>(*st.shm());
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_BARRIER_HPP

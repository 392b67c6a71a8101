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
    return new_call<char, Kokkos::HostSpace>(o);
  }

  static bool empty(const call_type&) { return false; }
  static call_traits traits(const comm_state&, const call_type&) { return {kind, 0, 0}; }
  static block_layout send_layout(const comm_state&, const call_type&) { return {}; }
  static block_layout recv_layout(const comm_state&, const call_type&) { return {}; }

  template <class T, class Ops>
  static void run(comm_state& st, comm_algorithm a, const call_type&) {
    switch (a) {
      case comm_algorithm::shm: {
        shm_barrier operation(*st.shm());
        run_blocking(*st.shm(), operation, name);
        return;
      }
      case comm_algorithm::dissemination: dissemination_barrier(st); return;
      default:
        call_mpi(
            st, name, "MPI_Barrier", [&] { return MPI_Barrier(st.comm()); },
            [&](MPI_Request* r) { return MPI_Ibarrier(st.comm(), r); });
    }
  }

  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const call_type&) {
    return start_queued<shm_barrier>(*st.shm());
  }
  static bool start_mpi(comm_state& st, const call_type&, request_keep<char>&, MPI_Request* r) {
    HETERO_MPI_CHECK(MPI_Ibarrier, st.comm(), r);
    return true;
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_BARRIER_HPP

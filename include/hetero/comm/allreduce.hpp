/// @file
/// The shape of `communicator::allreduce` and `iallreduce`: the element-wise reduction of every
/// rank's vector, on every rank.
#ifndef HETERO_COMM_ALLREDUCE_HPP
#define HETERO_COMM_ALLREDUCE_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <type_traits>

#include "hetero/comm/detail/mpi_op.hpp"
#include "hetero/comm/detail/reduction_arguments.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, dissemination, recursive_doubling, recursive_halving, ring. `send`
/// equal to `recv` means in place.
struct allreduce_shape
    : shape_base<collective::allreduce,
                 shape_flags{.chunked = true, .has_result = true, .reduces = true, .start_needs_recv_buf = true}>,
      reduction_arguments<collective::allreduce, false> {
  template <class Call>
  static std::size_t result_size(const comm_state&, const Call& call) {
    return call.n;
  }
  template <class Call>
  static block_layout send_layout(const comm_state&, const Call& call) {
    return block_layout::one(0, call.n);
  }
  template <class Call>
  static block_layout recv_layout(const comm_state&, const Call& call) {
    return block_layout::one(0, call.n);
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    using R = typename Call::reduction_type;
    const T* send = call.send;
    T* recv = call.recv;
    const std::size_t n = call.n;
    const auto reduction = guarded(*call.reduction);  // a user operation's exception waits for the end
    switch (a) {
      case comm_algorithm::shm: {
        shm_reduce<T, std::remove_const_t<decltype(reduction)>> operation(*st.shm(), send, recv, n, reduction, -1);
        run_blocking(*st.shm(), operation, name);
        return;
      }
      case comm_algorithm::dissemination:
        power_of_two_allreduce<T, Ops>(st, send, recv, n, reduction, allreduce_core::dissemination);
        return;
      case comm_algorithm::recursive_doubling:
        power_of_two_allreduce<T, Ops>(st, send, recv, n, reduction, allreduce_core::recursive_doubling);
        return;
      case comm_algorithm::recursive_halving:
        power_of_two_allreduce<T, Ops>(st, send, recv, n, reduction, allreduce_core::recursive_halving);
        return;
      case comm_algorithm::ring: ring_allreduce<T, Ops>(st, send, recv, n, reduction); return;
      default: {
        const mpi_reduction<T, R> mpi(*call.reduction);
        const int count = mpi_count(n, "allreduce count");
        const void* from = send_or_in_place(send, recv);
        call_mpi(
            st, name, "MPI_Allreduce",
            [&] { return MPI_Allreduce(from, recv, count, mpi.type(), mpi.op(), st.comm()); },
            [&](MPI_Request* r) { return MPI_Iallreduce(from, recv, count, mpi.type(), mpi.op(), st.comm(), r); });
      }
    }
  }

  template <class T, class M, class Call>
  static void run_staged(comm_state& st, comm_algorithm a, const Call& call) {
    staged_chunks<T, M>(st, call.send, 1, call.recv, 1, call.n, 1, [&](const T* in, T* out, std::size_t c) {
      run<T, host_ops>(st, a, on_buffers(call, in, out, c));
    });
  }

  template <class Call>
  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    // A user operation records what it throws in the request's failure (`t_op_failure`, set by
    // the skeleton's start) instead of throwing while another rank's wait drives the queue.
    const auto reduction = guarded(*call.reduction);
    using R = std::remove_const_t<decltype(reduction)>;
    return start_queued<shm_reduce<T, R>>(*st.shm(), call.send, call.recv, call.n, reduction, -1);
  }
  template <class Call, class Keep>
  static bool start_mpi(comm_state& st, const Call& call, Keep& keep, MPI_Request* r) {
    using T = typename Call::element_type;
    // Guarded (see start_shm): MPI calls the operation from whichever MPI call drives progress,
    // and an exception must not unwind through MPI.
    const auto reduction = guarded(*call.reduction);
    auto mpi = std::make_shared<mpi_reduction<T, std::remove_const_t<decltype(reduction)>>>(reduction);
    keep.operation = mpi;
    HETERO_MPI_CHECK(MPI_Iallreduce, send_or_in_place(call.send, call.recv), call.recv,
                     mpi_count(call.n, "allreduce count"), mpi->type(), mpi->op(), st.comm(), r);
    return true;
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_ALLREDUCE_HPP

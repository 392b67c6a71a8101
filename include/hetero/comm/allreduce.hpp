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
#include "hetero/comm/detail/node_collectives.hpp"
#include "hetero/comm/detail/reduction_arguments.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, dissemination, recursive_doubling, recursive_halving, ring, hierarchical. `send`
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
    const T* send = call.send;
    T* recv = call.recv;
    const std::size_t n = call.n;
    const auto reduction = guarded(*call.reduction);  // a user operation's exception waits for the end
    switch (a) {
      case comm_algorithm::shm:
        return run_shm<shm_reduce<T, std::remove_const_t<decltype(reduction)>>>(*st.shm(), name, send, recv, n,
                                                                                reduction, -1);
      case comm_algorithm::dissemination:
        return power_of_two_allreduce<T, Ops>(st, send, recv, n, reduction, allreduce_core::dissemination);
      case comm_algorithm::recursive_doubling:
        return power_of_two_allreduce<T, Ops>(st, send, recv, n, reduction, allreduce_core::recursive_doubling);
      case comm_algorithm::recursive_halving:
        return power_of_two_allreduce<T, Ops>(st, send, recv, n, reduction, allreduce_core::recursive_halving);
      case comm_algorithm::ring: return ring_allreduce<T, Ops>(st, send, recv, n, reduction);
      case comm_algorithm::hierarchical: return hierarchical_allreduce<T>(st, send, recv, n, reduction);
      default: return run_mpi<allreduce_shape>(st, call);
    }
  }
  /// Every rank's vector came with the agreement's records (`inline_offer`): rank r's at
  /// `at + r * stride` bytes; reduced here in rank order, the same bits on every rank.
  template <class Call>
  static void run_inline(const comm_state& st, const Call& call, const std::byte* at, std::size_t stride) {
    host_ops::fold_bytes(call.recv, at, static_cast<std::size_t>(st.size()), stride, call.n, *call.reduction);
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context& x, MPI_Request* r) {
    return mpi_form(r, MPI_Allreduce, MPI_Iallreduce, st.comm(), in_place_if_same(call.send, call.recv), call.recv,
                    mpi_count(call.n, "allreduce count"), x.type, x.op);
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
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_ALLREDUCE_HPP

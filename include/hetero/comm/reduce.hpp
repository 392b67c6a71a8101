/// @file
/// The shape of `communicator::reduce` and `ireduce`: the element-wise reduction of every rank's
/// vector, on the root. Two paths: combine on the host (small vectors) or in one Kokkos kernel
/// where the data lives (device memory, large vectors).
#ifndef HETERO_COMM_REDUCE_HPP
#define HETERO_COMM_REDUCE_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <type_traits>

#include "hetero/comm/detail/mpi_op.hpp"
#include "hetero/comm/detail/node_collectives.hpp"
#include "hetero/comm/detail/p2p.hpp"
#include "hetero/comm/detail/reduction_arguments.hpp"
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"

namespace hetero::detail {

/// The device-side path for device memory MPI cannot read: the root receives the vectors on
/// the host, moves them to device scratch and folds them there in one kernel.
template <class T, class MemorySpace, class R>
void linear_reduce_device_staged(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction,
                                 int root) {
  using host = Kokkos::HostSpace;
  const int p = st.size();
  if (st.rank() != root) {
    staged_chunks<T, MemorySpace>(st, send, 1, recv, 0, n, 1, [&](const T* in, T*, std::size_t c) {
      linear_reduce_contribute(st, in, c, root);
    });
    return;
  }
  T* on_host = st.staging_in(0).template get<T>(static_cast<std::size_t>(p) * n);
  // The other ranks send their vectors in staged_chunks' pieces (one message each): received
  // piece by piece, in order. (The first GPU runs found the root receiving whole vectors: n
  // above one chunk failed "rank 1 sent 8192 element(s) where this rank expected 9416", and the
  // next piece stalled the ranks.)
  const staging_pieces pieces(st.options().staging_chunk_bytes / sizeof(T), n);
  p2p_batch<T> batch(st, collective::reduce);
  for (std::size_t j = 0; j < pieces.count; ++j)
    for (int r = 0; r < p; ++r)
      if (r != root) batch.recv(on_host + static_cast<std::size_t>(r) * n + j * pieces.chunk, pieces.length(j), r);
  batch.wait();
  T* on_device = kernel_ops<MemorySpace>::template scratch<T>(st, 0, static_cast<std::size_t>(p) * n);
  copy_between<T, MemorySpace, host>(on_device, on_host, static_cast<std::size_t>(p) * n);
  fence_copies<MemorySpace>();
  kernel_ops<MemorySpace>::copy(on_device + static_cast<std::size_t>(root) * n, send, n);
  kernel_ops<MemorySpace>::fold(recv, on_device, static_cast<std::size_t>(p), n, n, reduction);
}

/// Algorithms: mpi, shm, binomial, linear, linear_device. `recv` is read at the root only;
/// `send` equal to `recv` means in place.
struct reduce_shape : shape_base<collective::reduce, shape_flags{.chunked = true,
                                                                 .has_result = true,
                                                                 .reduces = true,
                                                                 .reroutes = true,
                                                                 .start_needs_recv_buf = true}>,
                      reduction_arguments<collective::reduce, true> {
  template <class Call>
  static std::size_t result_size(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? call.n : 0;
  }
  template <class Call>
  static block_layout send_layout(const comm_state&, const Call& call) {
    return block_layout::one(0, call.n);
  }
  template <class Call>
  static block_layout recv_layout(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? block_layout::one(0, call.n) : block_layout::none();
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    const T* send = call.send;
    T* recv = call.recv;
    const std::size_t n = call.n;
    const int root = call.root;
    const auto reduction = guarded(*call.reduction);  // a user operation's exception waits for the end
    switch (a) {
      case comm_algorithm::shm:
        return run_shm<shm_reduce<T, std::remove_const_t<decltype(reduction)>>>(
            *st.shm(), name, send, recv, n, reduction, root, checks_of(st) == argument_check::consistent);
      case comm_algorithm::binomial: return binomial_reduce<T, Ops>(st, send, recv, n, reduction, root);
      case comm_algorithm::hierarchical: return hierarchical_reduce<T>(st, send, recv, n, reduction, root);
      case comm_algorithm::linear: return linear_reduce<T, host_ops>(st, send, recv, n, reduction, root);
      case comm_algorithm::linear_device:
        return linear_reduce<T, kernel_ops<typename Ops::memory_space>>(st, send, recv, n, reduction, root);
      default:
#if defined(MPICH_VERSION)
        // MPICH 4.0.2 crashes in MPI_Reduce(MPI_IN_PLACE) at a root other than 0 (shared-memory
        // path, seen from 1000 ints on): give it a copy instead.
        if (st.rank() == root && root != 0 && send == recv) {
          T* copy = Ops::template scratch<T>(st, 0, n);
          Ops::copy(copy, recv, n);
          return run_mpi<reduce_shape>(st, on_buffers(call, copy, recv, n));
        }
#endif
        return run_mpi<reduce_shape>(st, call);
    }
  }
  /// Every rank's vector came with the agreement's records (`inline_offer`): rank r's at
  /// `at + r * stride` bytes; the root reduces them in rank order, the others are done.
  template <class Call>
  static void run_inline(const comm_state& st, const Call& call, const std::byte* at, std::size_t stride) {
    if (st.rank() != call.root) return;
    host_ops::fold_bytes(call.recv, at, static_cast<std::size_t>(st.size()), stride, call.n, *call.reduction);
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context& x, MPI_Request* r) {
    const void* from = st.rank() == call.root ? in_place_if_same(call.send, call.recv) : call.send;
    return mpi_form(r, MPI_Reduce, MPI_Ireduce, st.comm(), from, call.recv, mpi_count(call.n, "reduce count"),
                    x.type, x.op, call.root);
  }

  // The linear algorithm combines on the host, the linear_device one where the data lives.
  template <class M, class Call>
  static bool reroute(comm_state& st, comm_algorithm a, buffer_route& route, const Call& call) {
    if constexpr (!host_addressable<M>) {
      using T = typename Call::element_type;
      if (a == comm_algorithm::linear && route == buffer_route::direct) route = buffer_route::staged;
      if (a == comm_algorithm::linear_device && route == buffer_route::staged) {
        linear_reduce_device_staged<T, M>(st, call.send, call.recv, call.n, guarded(*call.reduction), call.root);
        return true;
      }
    }
    (void)st, (void)a, (void)route, (void)call;
    return false;
  }

  template <class T, class M, class Call>
  static void run_staged(comm_state& st, comm_algorithm a, const Call& call) {
    const bool root_here = st.rank() == call.root;
    staged_chunks<T, M>(
        st, call.send, 1, call.recv, root_here ? 1 : 0, call.n, 1,
        [&](const T* in, T* out, std::size_t c) { run<T, host_ops>(st, a, on_buffers(call, in, out, c)); });
  }

  template <class Call>
  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    // A user operation records what it throws in the request's failure (`t_op_failure`, set by
    // the skeleton's start) instead of throwing while another rank's wait drives the queue.
    const auto reduction = guarded(*call.reduction);
    using R = std::remove_const_t<decltype(reduction)>;
    return start_queued<shm_reduce<T, R>>(*st.shm(), call.send, call.recv, call.n, reduction, call.root);
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_REDUCE_HPP

/// @file
/// The shape of `communicator::allgather` and `iallgather`: every rank's block, in rank order,
/// on every rank.
#ifndef HETERO_COMM_ALLGATHER_HPP
#define HETERO_COMM_ALLGATHER_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"
#include "hetero/core/mpi/datatype.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, recursive_doubling, ring, bruck. `send` null: in place (this rank's
/// block already sits in recv).
struct allgather_shape
    : shape_base<collective::allgather,
                 shape_flags{.chunked = true, .has_result = true, .start_needs_recv_buf = true}> {
  template <class... Args>
  static constexpr void check() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::send_count, parameter::algorithm}),
                  "hetero: allgather takes send_buf, recv_buf, send_recv_buf, send_count, force_algorithm, and "
                  "recv_counts/recv_displs for blocks of different sizes");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: allgather needs send_buf(...) or send_recv_buf(...)");
  }

  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    static_assert(comm_buffer<S>, "hetero: allgather's buffers are Views, contiguous ranges or values");
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    auto call = new_call<T, M>(o);
    const auto p = static_cast<std::size_t>(st.size());
    checked_call(st, o, kind, [&](call_signature& s) {
      buffer_ref<T, M> out;
      if constexpr (in_place) {
        static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
        out = as_buffer(get<parameter::send_recv_buf>(args...), o.what, "send_recv_buf");
        call.n = in_place_block_count(out, p, o.what, args...);
      } else {
        const auto in = as_buffer(get<parameter::send_buf>(args...), o.what, "send_buf");
        call.n = send_block_count(in, o.what, args...);
        call.send = non_null(in.data);
        out = optional_recv_buf<T, M>(o.what, args...);
      }
      if (in_place || has_parameter<parameter::recv_buf, Args...>)
        require_size(out, p * call.n, o.what, in_place ? "send_recv_buf" : "recv_buf", "p times the count");
      call.recv = out.data;
      s = {kind, static_cast<long long>(call.n), -1, -1, static_cast<int>(o.forced), sizeof(T)};
    });
    return call;
  }

  template <class Call>
  static std::size_t result_size(const comm_state& st, const Call& call) {
    return static_cast<std::size_t>(st.size()) * call.n;
  }
  template <class Call>
  static block_layout send_layout(const comm_state& st, const Call& call) {
    return block_layout::one(call.send ? 0 : static_cast<std::size_t>(st.rank()) * call.n, call.n);
  }
  template <class Call>
  static block_layout recv_layout(const comm_state& st, const Call& call) {
    return block_layout::one(0, static_cast<std::size_t>(st.size()) * call.n);
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    const T* send = call.send;
    T* recv = call.recv;
    const std::size_t n = call.n;
    switch (a) {
      case comm_algorithm::shm: return run_shm<shm_gather<T>>(*st.shm(), name, send, recv, n, -1);
      case comm_algorithm::recursive_doubling: return recursive_doubling_allgather<T, Ops>(st, send, recv, n);
      case comm_algorithm::ring: return ring_allgather<T, Ops>(st, send, recv, n);
      case comm_algorithm::bruck: return bruck_allgather<T, Ops>(st, send, recv, n);
      default: return run_mpi<allgather_shape>(st, call);
    }
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context&, MPI_Request* r) {
    const int n = mpi_count(call.n, "allgather count");
    const MPI_Datatype t = mpi_type<typename Call::element_type>();
    return mpi_form(r, MPI_Allgather, MPI_Iallgather, st.comm(), in_place_if_null(call.send), n, t, call.recv, n,
                    t);
  }

  template <class T, class M, class Call>
  static void run_staged(comm_state& st, comm_algorithm a, const Call& call) {
    const auto p = static_cast<std::size_t>(st.size());
    const T* send = call.send ? call.send : call.recv + static_cast<std::size_t>(st.rank()) * call.n;
    staged_chunks<T, M>(st, send, 1, call.recv, p, call.n, p, [&](const T* in, T* out, std::size_t c) {
      run<T, host_ops>(st, a, on_buffers(call, in, out, c));
    });
  }

  template <class Call>
  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    return start_queued<shm_gather<T>>(*st.shm(), call.send, call.recv, call.n, -1);
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_ALLGATHER_HPP

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
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, dissemination, recursive_doubling, recursive_halving, ring. `send`
/// equal to `recv` means in place.
struct allreduce_shape
    : shape_base<collective::allreduce,
                 shape_flags{.chunked = true, .has_result = true, .reduces = true, .start_needs_recv_buf = true}> {
  template <class... Args>
  static constexpr void check() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::op, parameter::algorithm}),
                  "hetero: allreduce takes send_buf, recv_buf, send_recv_buf, op and force_algorithm, each once");
    static_assert(has_parameter<parameter::op, Args...>,
                  "hetero: allreduce needs op(...), e.g. hetero::op(hetero::ops::sum{})");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: allreduce needs send_buf(...) (with or without recv_buf) or send_recv_buf(...)");
    static_assert(
        !(has_parameter<parameter::recv_buf, Args...> && has_parameter<parameter::send_recv_buf, Args...>),
        "hetero: recv_buf and send_recv_buf exclude each other");
  }

  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    constexpr parameter source = in_place ? parameter::send_recv_buf : parameter::send_buf;
    using S = argument_t<source, Args...>;
    static_assert(comm_buffer<S>, "hetero: send_buf takes a Kokkos View, a contiguous range or one value");
    static_assert(!in_place || writable_argument<S>(),
                  "hetero: send_recv_buf takes a View or a non-const lvalue range or value");
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    using R = std::remove_cvref_t<decltype(get<parameter::op>(args...))>;
    static_assert(reduction_operation<R, T>,
                  "hetero: op's function must take two elements and return one convertible to the element type");
    auto call = new_call<T, M, R>(o);
    call.reduction = &get<parameter::op>(args...);
    checked_call(st, kind, [&](call_signature& s) {
      if constexpr (in_place) {
        const auto data = as_buffer(get<source>(args...), o.what, "send_recv_buf");
        call.send = call.recv = data.data;
        call.n = data.size;
      } else {
        const auto in = as_buffer(get<source>(args...), o.what, "send_buf");
        call.send = in.data;
        call.n = in.size;
        const auto out = optional_recv_buf<T, M>(o.what, args...);
        if constexpr (has_parameter<parameter::recv_buf, Args...>)
          require_size(out, in.size, o.what, "recv_buf", "the send_buf's count");
        call.recv = out.data;
      }
      s = {kind, static_cast<long long>(call.n), -1, static_cast<int>(R::builtin), static_cast<int>(o.forced)};
    });
    return call;
  }

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
    const R& reduction = *call.reduction;
    switch (a) {
      case comm_algorithm::shm: {
        shm_reduce<T, R> operation(*st.shm(), send, recv, n, reduction, -1);
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
        const mpi_reduction<T, R> mpi(reduction);
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
    using R = typename Call::reduction_type;
    return start_queued<shm_reduce<T, R>>(*st.shm(), call.send, call.recv, call.n, *call.reduction, -1);
  }
  template <class Call, class Keep>
  static bool start_mpi(comm_state& st, const Call& call, Keep& keep, MPI_Request* r) {
    using T = typename Call::element_type;
    auto mpi = std::make_shared<mpi_reduction<T, typename Call::reduction_type>>(*call.reduction);
    keep.operation = mpi;
    HETERO_MPI_CHECK(MPI_Iallreduce, send_or_in_place(call.send, call.recv), call.recv,
                     mpi_count(call.n, "allreduce count"), mpi->type(), mpi->op(), st.comm(), r);
    return true;
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_ALLREDUCE_HPP

/// @file
/// `communicator::allreduce` and `iallreduce`: the element-wise reduction of every rank's
/// vector, on every rank.
#ifndef HETERO_COMM_ALLREDUCE_HPP
#define HETERO_COMM_ALLREDUCE_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include "hetero/comm/buffer.hpp"
#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/detail/interface.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/mpi_type.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/request.hpp"

namespace hetero::detail {

template <class T, class Ops, class R>
void allreduce_with(comm_state& st, comm_algorithm a, const T* send, T* recv, std::size_t n, const R& reduction) {
  switch (a) {
    case comm_algorithm::shm: {
      shm_reduce<T, R> operation(*st.shm(), send, recv, n, reduction, -1);
      run_blocking(*st.shm(), operation, "allreduce");
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
          st, "allreduce", "MPI_Allreduce",
          [&] { return MPI_Allreduce(from, recv, count, mpi.type(), mpi.op(), st.comm()); },
          [&](MPI_Request* r) { return MPI_Iallreduce(from, recv, count, mpi.type(), mpi.op(), st.comm(), r); });
    }
  }
}

inline call_traits allreduce_traits(std::size_t bytes, std::size_t alignment, bool commutative) {
  return {collective::allreduce, bytes, bytes, alignment, commutative};
}

/// `send` equal to `recv` means in place.
template <class T, class MemorySpace, class R>
void run_allreduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction,
                   comm_algorithm forced) {
  const comm_algorithm a = choose(st, allreduce_traits(n * sizeof(T), alignof(T), R::commutative), forced);
  switch (route_for<MemorySpace>(st, a, "allreduce")) {
    case buffer_route::host: allreduce_with<T, host_ops>(st, a, send, recv, n, reduction); break;
    case buffer_route::direct: allreduce_with<T, kernel_ops<MemorySpace>>(st, a, send, recv, n, reduction); break;
    case buffer_route::staged:
      staged_chunks<T, MemorySpace>(st, send, 1, recv, 1, n, 1, [&](const T* in, T* out, std::size_t c) {
        allreduce_with<T, host_ops>(st, a, in, out, c, reduction);
      });
  }
}

template <class T, class MemorySpace, class R>
collective_request start_allreduce(const std::shared_ptr<comm_state>& state, const T* send, T* recv, std::size_t n,
                                   const R& reduction, comm_algorithm forced) {
  comm_state& st = *state;
  const comm_algorithm a =
      choose_nonblocking(st, allreduce_traits(n * sizeof(T), alignof(T), R::commutative), forced);
  struct keep_alive {
    request_buffers<T> buffers;
    std::unique_ptr<mpi_reduction<T, R>> mpi;
  };
  auto keep = std::make_shared<keep_alive>();
  std::function<void()> finish;
  if (route_for<MemorySpace>(st, a, "iallreduce") == buffer_route::staged) {
    T* host_send = keep->buffers.send.template get<T>(n);
    T* host_recv = keep->buffers.recv.template get<T>(n);
    copy_between<T, Kokkos::HostSpace, MemorySpace>(host_send, send, n);
    fence_copies<MemorySpace>();
    finish = [recv, host_recv, n] {
      copy_between<T, MemorySpace, Kokkos::HostSpace>(recv, host_recv, n);
      fence_copies<MemorySpace>();
    };
    send = host_send;
    recv = host_recv;
  }
  if (a == comm_algorithm::shm)
    return request_access::shm(state, start_queued<shm_reduce<T, R>>(*st.shm(), send, recv, n, reduction, -1),
                               "iallreduce", std::move(finish), keep);
  keep->mpi = std::make_unique<mpi_reduction<T, R>>(reduction);
  MPI_Request r = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Iallreduce, send_or_in_place(send, recv), recv, mpi_count(n, "allreduce count"),
                   keep->mpi->type(), keep->mpi->op(), st.comm(), &r);
  return request_access::mpi(state, r, "iallreduce", std::move(finish), keep);
}

/// The allreduce members of `communicator`.
template <class Derived>
class allreduce_interface {
 public:
  /// Every rank receives x_0 op x_1 op ... op x_{p-1}, element by element (operands in rank
  /// order). Parameters: `op(f)` (required); `send_buf(x)` and `recv_buf(y)` (y at least as
  /// long as x), or `send_recv_buf(x)` (in place), or only `send_buf(x)`: then the result is
  /// returned (a value for a value, a new View for a View, a std::vector for a range);
  /// `force_algorithm(a)` (mpi, shm, dissemination, recursive_doubling, recursive_halving,
  /// ring).
  /// @code
  /// double total = comm.allreduce(hetero::send_buf(mine), hetero::op(hetero::ops::sum{}));
  /// comm.allreduce(hetero::send_recv_buf(view), hetero::op(hetero::ops::max{}));
  /// @endcode
  template <class... Args>
  auto allreduce(Args&&... args) const {
    check_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const auto& reduction = get<parameter::op>(args...);
    if constexpr (has_parameter<parameter::send_buf, Args...> && !has_parameter<parameter::recv_buf, Args...>) {
      using B = argument_t<parameter::send_buf, Args...>;
      auto& send = get<parameter::send_buf>(args...);
      const auto in = prepare(st, send, nullptr, forced, reduction, "allreduce");
      if constexpr (single_value<B>) {
        buffer_element_t<B> result{};
        run_allreduce<buffer_element_t<B>, Kokkos::HostSpace>(st, in.data, &result, 1, reduction, forced);
        return result;
      } else {
        auto result = make_result(send, in.size, "hetero::allreduce");
        if (in.size > 0)
          run_allreduce<buffer_element_t<B>, buffer_space_t<B>>(st, in.data, result.data(), in.size, reduction,
                                                                forced);
        return result;
      }
    } else {
      auto [in, out] = buffers(st, forced, reduction, "allreduce", args...);
      if (out.size == 0) return;
      run_allreduce<typename decltype(out)::element_type, typename decltype(out)::memory_space>(
          st, in.data, out.data, in.size, reduction, forced);
    }
  }

  /// Starts an allreduce (with recv_buf or send_recv_buf; algorithm shm or mpi) and returns
  /// its request. The buffers must stay alive until it is done.
  template <class... Args>
  [[nodiscard]] collective_request iallreduce(Args&&... args) const {
    check_parameters<Args...>();
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: iallreduce needs recv_buf(...) or send_recv_buf(...): the result outlives the call");
    const auto& state = state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const auto& reduction = get<parameter::op>(args...);
    auto [in, out] = buffers(*state, forced, reduction, "iallreduce", args...);
    if (out.size == 0) return {};
    return start_allreduce<typename decltype(out)::element_type, typename decltype(out)::memory_space>(
        state, in.data, out.data, in.size, reduction, forced);
  }

 private:
  template <class... Args>
  static constexpr void check_parameters() {
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

  // The send buffer, checked (in place when `recv` is the same buffer).
  template <class S, class R>
  static auto prepare(comm_state& st, S& send, const void* recv, comm_algorithm forced, const R&,
                      const char* what) {
    static_assert(comm_buffer<S>, "hetero: send_buf takes a Kokkos View, a contiguous range or one value");
    static_assert(reduction_operation<R, buffer_element_t<S>>,
                  "hetero: op's function must take two elements and return one convertible to the element type");
    (void)recv;
    buffer_ref<const buffer_element_t<S>, buffer_space_t<S>> in;
    checked_call(st, collective::allreduce, [&](call_signature& s) {
      in = as_buffer(send, what, "send_buf");
      s = {collective::allreduce, static_cast<long long>(in.size), -1, static_cast<int>(R::builtin),
           static_cast<int>(forced)};
    });
    return in;
  }

  // (send, recv) for the recv_buf and send_recv_buf forms.
  template <class R, class... Args>
  static auto buffers(comm_state& st, comm_algorithm forced, const R&, const char* what, Args&... args) {
    if constexpr (has_parameter<parameter::send_recv_buf, Args...>) {
      using B = argument_t<parameter::send_recv_buf, Args...>;
      static_assert(comm_buffer<B> && writable_argument<B>(),
                    "hetero: send_recv_buf takes a View or a non-const lvalue range or value");
      static_assert(reduction_operation<R, buffer_element_t<B>>,
                    "hetero: op's function must take two elements and return one convertible to the element type");
      auto& buffer = get<parameter::send_recv_buf>(args...);
      buffer_ref<buffer_element_t<B>, buffer_space_t<B>> out;
      checked_call(st, collective::allreduce, [&](call_signature& s) {
        out = as_buffer(buffer, what, "send_recv_buf");
        s = {collective::allreduce, static_cast<long long>(out.size), -1, static_cast<int>(R::builtin),
             static_cast<int>(forced)};
      });
      return std::pair{out.as_const(), out};
    } else {
      using S = argument_t<parameter::send_buf, Args...>;
      using B = argument_t<parameter::recv_buf, Args...>;
      static_assert(comm_buffer<S> && comm_buffer<B> && writable_argument<B>(),
                    "hetero: recv_buf takes a View or a non-const lvalue range or value");
      static_assert(std::is_same_v<buffer_element_t<S>, buffer_element_t<B>>,
                    "hetero: send_buf and recv_buf must hold the same element type");
      static_assert(std::is_same_v<buffer_space_t<S>, buffer_space_t<B>>,
                    "hetero: send_buf and recv_buf must live in the same memory space");
      static_assert(reduction_operation<R, buffer_element_t<B>>,
                    "hetero: op's function must take two elements and return one convertible to the element type");
      auto& send = get<parameter::send_buf>(args...);
      auto& recv = get<parameter::recv_buf>(args...);
      buffer_ref<const buffer_element_t<S>, buffer_space_t<S>> in;
      buffer_ref<buffer_element_t<B>, buffer_space_t<B>> out;
      checked_call(st, collective::allreduce, [&](call_signature& s) {
        in = as_buffer(send, what, "send_buf");
        out = as_buffer(recv, what, "recv_buf");
        s = {collective::allreduce, static_cast<long long>(in.size), -1, static_cast<int>(R::builtin),
             static_cast<int>(forced)};
        require_size(out, in.size, what, "recv_buf", "the send_buf's count");
      });
      out.size = in.size;
      return std::pair{in, out};
    }
  }

  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_ALLREDUCE_HPP

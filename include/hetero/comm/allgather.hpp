/// @file
/// `communicator::allgather` and `iallgather`: every rank's block, in rank order, on every rank.
#ifndef HETERO_COMM_ALLGATHER_HPP
#define HETERO_COMM_ALLGATHER_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

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

/// `send` null: in place (this rank's block already sits in recv).
template <class T, class Ops>
void allgather_with(comm_state& st, comm_algorithm a, const T* send, T* recv, std::size_t n) {
  switch (a) {
    case comm_algorithm::shm: {
      shm_gather<T> operation(*st.shm(), send, recv, n, -1);
      run_blocking(*st.shm(), operation, "allgather");
      return;
    }
    case comm_algorithm::recursive_doubling: recursive_doubling_allgather<T, Ops>(st, send, recv, n); return;
    case comm_algorithm::ring: ring_allgather<T, Ops>(st, send, recv, n); return;
    case comm_algorithm::bruck: bruck_allgather<T, Ops>(st, send, recv, n); return;
    default: {
      const int count = mpi_count(n, "allgather count");
      const void* from = send ? static_cast<const void*>(send) : MPI_IN_PLACE;
      call_mpi(
          st, "allgather", "MPI_Allgather",
          [&] { return MPI_Allgather(from, count, mpi_type<T>(), recv, count, mpi_type<T>(), st.comm()); },
          [&](MPI_Request* r) {
            return MPI_Iallgather(from, count, mpi_type<T>(), recv, count, mpi_type<T>(), st.comm(), r);
          });
    }
  }
}

template <class T, class MemorySpace>
void run_allgather(comm_state& st, const T* send, T* recv, std::size_t n, comm_algorithm forced) {
  const std::size_t bytes = n * sizeof(T);
  const comm_algorithm a = choose(st, {collective::allgather, bytes, bytes, alignof(T)}, forced);
  switch (route_for<MemorySpace>(st, a, "allgather")) {
    case buffer_route::host: allgather_with<T, host_ops>(st, a, send, recv, n); break;
    case buffer_route::direct: allgather_with<T, kernel_ops<MemorySpace>>(st, a, send, recv, n); break;
    case buffer_route::staged: {
      const auto p = static_cast<std::size_t>(st.size());
      if (!send) send = recv + static_cast<std::size_t>(st.rank()) * n;
      staged_chunks<T, MemorySpace>(st, send, 1, recv, p, n, p, [&](const T* in, T* out, std::size_t c) {
        allgather_with<T, host_ops>(st, a, in, out, c);
      });
    }
  }
}

/// The allgather members of `communicator`.
template <class Derived>
class allgather_interface {
 public:
  /// Every rank receives every rank's `n` elements, rank r's at recv[r n]. Parameters:
  /// `send_buf(x)` (n = its size, or `send_count(n)`) with `recv_buf(y)` (p n elements), or
  /// `send_recv_buf(y)` (in place: this rank's block already at y[rank n]), or only
  /// `send_buf(x)`: the result is returned (a View or std::vector of p n);
  /// `force_algorithm(a)` (mpi, shm, recursive_doubling, ring, bruck).
  template <class... Args>
  auto allgather(Args&&... args) const {
    check_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    auto [in, out, n] = buffers(st, forced, "allgather", args...);
    using T = typename decltype(out)::element_type;
    using M = typename decltype(out)::memory_space;
    if constexpr (has_parameter<parameter::send_buf, Args...> && !has_parameter<parameter::recv_buf, Args...>) {
      auto result = make_result(get<parameter::send_buf>(args...), static_cast<std::size_t>(st.size()) * n,
                                "hetero::allgather");
      if (n > 0) run_allgather<T, M>(st, in.data, result.data(), n, forced);
      return result;
    } else {
      if (n > 0) run_allgather<T, M>(st, in.data, out.data, n, forced);
    }
  }

  /// Starts an allgather (with recv_buf or send_recv_buf; algorithm shm or mpi).
  template <class... Args>
  [[nodiscard]] collective_request iallgather(Args&&... args) const {
    check_parameters<Args...>();
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: iallgather needs recv_buf(...) or send_recv_buf(...): the result outlives the call");
    const auto& state = state_of::get(derived());
    comm_state& st = *state;
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    auto [in, out, n] = buffers(st, forced, "iallgather", args...);
    using T = typename decltype(out)::element_type;
    using M = typename decltype(out)::memory_space;
    if (n == 0) return {};
    const std::size_t bytes = n * sizeof(T), p = static_cast<std::size_t>(st.size());
    const comm_algorithm a = choose_nonblocking(st, {collective::allgather, bytes, bytes, alignof(T)}, forced);
    const T* send = in.data;
    T* recv = out.data;
    auto keep = std::make_shared<request_buffers<T>>();
    std::function<void()> finish;
    if (route_for<M>(st, a, "iallgather") == buffer_route::staged) {
      if (!send) send = recv + static_cast<std::size_t>(st.rank()) * n;
      T* host_send = keep->send.template get<T>(n);
      T* host_recv = keep->recv.template get<T>(p * n);
      copy_between<T, Kokkos::HostSpace, M>(host_send, send, n);
      fence_copies<M>();
      finish = [recv, host_recv, total = p * n] {
        copy_between<T, M, Kokkos::HostSpace>(recv, host_recv, total);
        fence_copies<M>();
      };
      send = host_send;
      recv = host_recv;
    }
    if (a == comm_algorithm::shm)
      return request_access::shm(state, start_queued<shm_gather<T>>(*st.shm(), send, recv, n, -1), "iallgather",
                                 std::move(finish), keep);
    MPI_Request request = MPI_REQUEST_NULL;
    const int count = mpi_count(n, "allgather count");
    HETERO_MPI_CHECK(MPI_Iallgather, send ? static_cast<const void*>(send) : MPI_IN_PLACE, count, mpi_type<T>(),
                     recv, count, mpi_type<T>(), st.comm(), &request);
    return request_access::mpi(state, request, "iallgather", std::move(finish), keep);
  }

 private:
  template <class... Args>
  static constexpr void check_parameters() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::send_count, parameter::algorithm}),
                  "hetero: allgather takes send_buf, recv_buf, send_recv_buf, send_count and force_algorithm");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: allgather needs send_buf(...) or send_recv_buf(...)");
    static_assert(
        !(has_parameter<parameter::recv_buf, Args...> && has_parameter<parameter::send_recv_buf, Args...>),
        "hetero: recv_buf and send_recv_buf exclude each other");
  }

  // (send, recv, n): send is null in place.
  template <class... Args>
  static auto buffers(comm_state& st, comm_algorithm forced, const char* what, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    static_assert(comm_buffer<S>, "hetero: allgather's buffers are Views, contiguous ranges or values");
    buffer_ref<const T, M> in;
    buffer_ref<T, M> out;
    std::size_t n = 0;
    const auto p = static_cast<std::size_t>(st.size());
    checked_call(st, collective::allgather, [&](call_signature& s) {
      if constexpr (in_place) {
        static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
        out = as_buffer(get<parameter::send_recv_buf>(args...), what, "send_recv_buf");
        n = in_place_block_count(out, p, what, args...);
      } else {
        in = as_buffer(get<parameter::send_buf>(args...), what, "send_buf");
        n = send_block_count(in, what, args...);
        if constexpr (has_parameter<parameter::recv_buf, Args...>) {
          using B = argument_t<parameter::recv_buf, Args...>;
          static_assert(comm_buffer<B> && writable_argument<B>() && std::is_same_v<buffer_element_t<B>, T> &&
                            std::is_same_v<buffer_space_t<B>, M>,
                        "hetero: recv_buf must be a writable buffer of send_buf's element type and memory space");
          out = as_buffer(get<parameter::recv_buf>(args...), what, "recv_buf");
        }
      }
      if (in_place || has_parameter<parameter::recv_buf, Args...>)
        require_size(out, p * n, what, in_place ? "send_recv_buf" : "recv_buf", "p times the count");
      s = {collective::allgather, static_cast<long long>(n), -1, -1, static_cast<int>(forced)};
    });
    return std::tuple{in, out, n};
  }

  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_ALLGATHER_HPP

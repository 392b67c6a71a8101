/// @file
/// `communicator::scatter` and `iscatter`: block r of the root's buffer to rank r.
#ifndef HETERO_COMM_SCATTER_HPP
#define HETERO_COMM_SCATTER_HPP

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
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/request.hpp"

namespace hetero::detail {

/// `recv` null at the root: in place (its block stays in send).
template <class T, class Ops>
void scatter_with(comm_state& st, comm_algorithm a, const T* send, T* recv, std::size_t n, int root) {
  switch (a) {
    case comm_algorithm::shm: {
      shm_scatter<T> operation(*st.shm(), send, recv, n, root);
      run_blocking(*st.shm(), operation, "scatter");
      return;
    }
    case comm_algorithm::linear: linear_scatter<T, Ops>(st, send, recv, n, root); return;
    case comm_algorithm::binomial: binomial_scatter<T, Ops>(st, send, recv, n, root); return;
    default: {
      const int count = mpi_count(n, "scatter count");
      void* to = recv ? static_cast<void*>(recv) : MPI_IN_PLACE;
      call_mpi(
          st, "scatter", "MPI_Scatter",
          [&] { return MPI_Scatter(send, count, mpi_type<T>(), to, count, mpi_type<T>(), root, st.comm()); },
          [&](MPI_Request* r) {
            return MPI_Iscatter(send, count, mpi_type<T>(), to, count, mpi_type<T>(), root, st.comm(), r);
          });
    }
  }
}

inline call_traits scatter_traits(const comm_state& st, std::size_t bytes, std::size_t alignment) {
  return {collective::scatter, bytes, bytes * static_cast<std::size_t>(st.size()), alignment};
}

template <class T, class MemorySpace>
void run_scatter(comm_state& st, const T* send, T* recv, std::size_t n, int root, comm_algorithm forced) {
  const comm_algorithm a = choose(st, scatter_traits(st, n * sizeof(T), alignof(T)), forced);
  switch (route_for<MemorySpace>(st, a, "scatter")) {
    case buffer_route::host: scatter_with<T, host_ops>(st, a, send, recv, n, root); break;
    case buffer_route::direct: scatter_with<T, kernel_ops<MemorySpace>>(st, a, send, recv, n, root); break;
    case buffer_route::staged: {
      const bool root_here = st.rank() == root;
      const auto p = static_cast<std::size_t>(st.size());
      staged_chunks<T, MemorySpace>(
          st, send, root_here ? p : 0, recv, recv ? 1 : 0, n, p,
          [&](const T* in, T* out, std::size_t c) { scatter_with<T, host_ops>(st, a, in, out, c, root); });
    }
  }
}

/// The scatter members of `communicator`.
template <class Derived>
class scatter_interface {
 public:
  /// Rank r receives the root's elements [r n, (r + 1) n). Parameters: `root(r)` (default 0);
  /// `send_buf(x)` (p n elements, read at the root only, may be left out elsewhere) with
  /// `recv_buf(y)` (n = its size, or `recv_count(n)`), or, at the root only,
  /// `send_recv_buf(x)` (in place: its block stays at x[root n]); `force_algorithm(a)` (mpi,
  /// shm, linear, binomial).
  template <class... Args>
  void scatter(Args&&... args) const {
    check_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    auto [in, out, n] = buffers(st, forced, r, "scatter", args...);
    if (n == 0) return;
    run_scatter<typename decltype(in)::element_type, typename decltype(in)::memory_space>(st, in.data, out.data, n,
                                                                                          r, forced);
  }

  /// Starts a scatter (same parameters; algorithm shm or mpi).
  template <class... Args>
  [[nodiscard]] collective_request iscatter(Args&&... args) const {
    check_parameters<Args...>();
    const auto& state = state_of::get(derived());
    comm_state& st = *state;
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    auto [in, out, n] = buffers(st, forced, r, "iscatter", args...);
    using T = typename decltype(in)::element_type;
    using M = typename decltype(in)::memory_space;
    if (n == 0) return {};
    const comm_algorithm a = choose_nonblocking(st, scatter_traits(st, n * sizeof(T), alignof(T)), forced);
    const T* send = in.data;
    T* recv = out.data;
    auto keep = std::make_shared<request_buffers<T>>();
    std::function<void()> finish;
    if (route_for<M>(st, a, "iscatter") == buffer_route::staged) {
      const auto p = static_cast<std::size_t>(st.size());
      T* host_send = st.rank() == r ? keep->send.template get<T>(p * n) : nullptr;
      T* host_recv = recv ? keep->recv.template get<T>(n) : nullptr;
      if (host_send) copy_between<T, Kokkos::HostSpace, M>(host_send, send, p * n);
      fence_copies<M>();
      if (recv)
        finish = [recv, host_recv, n] {
          copy_between<T, M, Kokkos::HostSpace>(recv, host_recv, n);
          fence_copies<M>();
        };
      send = host_send;
      recv = host_recv;
    }
    if (a == comm_algorithm::shm)
      return request_access::shm(state, start_queued<shm_scatter<T>>(*st.shm(), send, recv, n, r), "iscatter",
                                 std::move(finish), keep);
    MPI_Request request = MPI_REQUEST_NULL;
    const int count = mpi_count(n, "scatter count");
    HETERO_MPI_CHECK(MPI_Iscatter, send, count, mpi_type<T>(), recv ? static_cast<void*>(recv) : MPI_IN_PLACE,
                     count, mpi_type<T>(), r, st.comm(), &request);
    return request_access::mpi(state, request, "iscatter", std::move(finish), keep);
  }

 private:
  template <class... Args>
  static constexpr void check_parameters() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::recv_count, parameter::root, parameter::algorithm}),
                  "hetero: scatter takes send_buf, recv_buf, send_recv_buf, recv_count, root and force_algorithm");
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: scatter needs recv_buf(...) (or send_recv_buf(...) at the root)");
    static_assert(
        !(has_parameter<parameter::recv_buf, Args...> && has_parameter<parameter::send_recv_buf, Args...>),
        "hetero: recv_buf and send_recv_buf exclude each other");
  }

  // (send, recv, n): send is read at the root only; recv is null at an in-place root.
  template <class... Args>
  static auto buffers(comm_state& st, comm_algorithm forced, int root, const char* what, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using B = argument_t<in_place ? parameter::send_recv_buf : parameter::recv_buf, Args...>;
    using T = buffer_element_t<B>;
    using M = buffer_space_t<B>;
    static_assert(comm_buffer<B> && writable_argument<B>(),
                  "hetero: scatter's buffers are writable Views, contiguous ranges or values");
    buffer_ref<const T, M> in;
    buffer_ref<T, M> out;
    std::size_t n = 0;
    const bool root_here = st.rank() == root;
    const auto p = static_cast<std::size_t>(st.size());
    checked_call(st, collective::scatter, [&](call_signature& s) {
      check_root(st, root, what);
      if constexpr (in_place) {
        if (!root_here) raise<invalid_argument>(what, ": send_recv_buf (in place) is for the root only");
        in = as_buffer(get<parameter::send_recv_buf>(args...), what, "send_recv_buf");
        n = get_or<parameter::recv_count>(in.size / p, args...);
        if (!has_parameter<parameter::recv_count, Args...> && in.size % p != 0)
          raise<invalid_argument>(what, ": send_recv_buf holds ", in.size, " elements, not a multiple of the ", p,
                                  " ranks; give recv_count(n)");
      } else {
        out = as_buffer(get<parameter::recv_buf>(args...), what, "recv_buf");
        n = get_or<parameter::recv_count>(out.size, args...);
        require_size(out, n, what, "recv_buf", "recv_count");
        out.size = n;
        if constexpr (has_parameter<parameter::send_buf, Args...>) {
          using S = argument_t<parameter::send_buf, Args...>;
          static_assert(
              comm_buffer<S> && std::is_same_v<buffer_element_t<S>, T> && std::is_same_v<buffer_space_t<S>, M>,
              "hetero: send_buf and recv_buf must hold the same element type in the same memory space");
          if (root_here) in = as_buffer(get<parameter::send_buf>(args...), what, "send_buf");
        } else if (root_here) {
          raise<invalid_argument>(what, ": the root needs send_buf(...)");
        }
      }
      if (root_here) require_size(in, p * n, what, in_place ? "send_recv_buf" : "send_buf", "p times the count");
      s = {collective::scatter, static_cast<long long>(n), root, -1, static_cast<int>(forced)};
    });
    return std::tuple{in, out, n};
  }

  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_SCATTER_HPP

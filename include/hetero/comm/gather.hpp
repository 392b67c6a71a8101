/// @file
/// `communicator::gather` and `igather`: every rank's block, in rank order, on the root.
#ifndef HETERO_COMM_GATHER_HPP
#define HETERO_COMM_GATHER_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
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
/// `send` null at the root: in place (its block already sits in recv).
template <class T, class Ops>
void gather_with(comm_state& st, comm_algorithm a, const T* send, T* recv, std::size_t n, int root) {
  switch (a) {
    case comm_algorithm::shm: {
      shm_gather<T> operation(*st.shm(), send, recv, n, root);
      run_blocking(*st.shm(), operation, "gather");
      return;
    }
    case comm_algorithm::linear: linear_gather<T, Ops>(st, send, recv, n, root); return;
    case comm_algorithm::binomial: binomial_gather<T, Ops>(st, send, recv, n, root); return;
    default: {
      const int count = mpi_count(n, "gather count");
      const void* from = send ? static_cast<const void*>(send) : MPI_IN_PLACE;
      call_mpi(
          st, "gather", "MPI_Gather",
          [&] { return MPI_Gather(from, count, mpi_type<T>(), recv, count, mpi_type<T>(), root, st.comm()); },
          [&](MPI_Request* r) {
            return MPI_Igather(from, count, mpi_type<T>(), recv, count, mpi_type<T>(), root, st.comm(), r);
          });
    }
  }
}

template <class T, class MemorySpace>
void run_gather(comm_state& st, const T* send, T* recv, std::size_t n, int root, comm_algorithm forced) {
  const std::size_t bytes = n * sizeof(T);
  const comm_algorithm a = choose(st, {collective::gather, bytes, bytes, alignof(T)}, forced);
  switch (route_for<MemorySpace>(st, a, "gather")) {
    case buffer_route::host: gather_with<T, host_ops>(st, a, send, recv, n, root); break;
    case buffer_route::direct: gather_with<T, kernel_ops<MemorySpace>>(st, a, send, recv, n, root); break;
    case buffer_route::staged: {
      const bool root_here = st.rank() == root;
      if (!send) send = recv + static_cast<std::size_t>(root) * n;  // in place: stage the root's block too
      staged_chunks<T, MemorySpace>(st, send, 1, recv, root_here ? static_cast<std::size_t>(st.size()) : 0, n,
                                    static_cast<std::size_t>(st.size()), [&](const T* in, T* out, std::size_t c) {
                                      gather_with<T, host_ops>(st, a, in, out, c, root);
                                    });
    }
  }
}

/// The gather members of `communicator`.
template <class Derived>
class gather_interface {
 public:
  /// The root receives every rank's `n` elements, rank r's at recv[r n]. Parameters: `root(r)`
  /// (default 0); `send_buf(x)` (n = its size, or `send_count(n)`) with `recv_buf(y)` (p n
  /// elements at the root; may be left out elsewhere), or, at the root only, `send_recv_buf(y)`
  /// (in place: its own block already at y[root n]), or only `send_buf(x)`: the result is
  /// returned (a View or std::vector of p n at the root, empty elsewhere); `force_algorithm(a)`
  /// (mpi, shm, linear, binomial).
  template <class... Args>
  auto gather(Args&&... args) const {
    check_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    if constexpr (has_parameter<parameter::send_buf, Args...> && !has_parameter<parameter::recv_buf, Args...>) {
      using B = argument_t<parameter::send_buf, Args...>;
      auto [in, out, n] = buffers(st, forced, r, "gather", args...);
      const auto total = st.rank() == r ? static_cast<std::size_t>(st.size()) * n : 0;
      auto result = make_result(get<parameter::send_buf>(args...), total, "hetero::gather");
      if (n > 0) run_gather<buffer_element_t<B>, buffer_space_t<B>>(st, in.data, result.data(), n, r, forced);
      return result;
    } else {
      auto [in, out, n] = buffers(st, forced, r, "gather", args...);
      if (n == 0) return;
      run_gather<typename decltype(out)::element_type, typename decltype(out)::memory_space>(st, in.data, out.data,
                                                                                             n, r, forced);
    }
  }

  /// Starts a gather (with recv_buf or send_recv_buf; algorithm shm or mpi).
  template <class... Args>
  [[nodiscard]] collective_request igather(Args&&... args) const {
    check_parameters<Args...>();
    const auto& state = state_of::get(derived());
    comm_state& st = *state;
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    auto [in, out, n] = buffers(st, forced, r, "igather", args...);
    using T = typename decltype(out)::element_type;
    using M = typename decltype(out)::memory_space;
    if (n == 0) return {};
    if (st.rank() == r && out.data == nullptr)
      raise<invalid_argument>("igather: the root needs recv_buf(...) or send_recv_buf(...) for the result");
    const std::size_t bytes = n * sizeof(T), p = static_cast<std::size_t>(st.size());
    const comm_algorithm a = choose_nonblocking(st, {collective::gather, bytes, bytes, alignof(T)}, forced);
    const T* send = in.data;
    T* recv = out.data;
    auto keep = std::make_shared<request_buffers<T>>();
    std::function<void()> finish;
    if (route_for<M>(st, a, "igather") == buffer_route::staged) {
      const bool root_here = st.rank() == r;
      if (!send) send = recv + static_cast<std::size_t>(r) * n;
      T* host_send = keep->send.template get<T>(n);
      T* host_recv = root_here ? keep->recv.template get<T>(p * n) : nullptr;
      copy_between<T, Kokkos::HostSpace, M>(host_send, send, n);
      fence_copies<M>();
      if (root_here)
        finish = [recv, host_recv, total = p * n] {
          copy_between<T, M, Kokkos::HostSpace>(recv, host_recv, total);
          fence_copies<M>();
        };
      send = host_send;
      recv = host_recv;
    }
    if (a == comm_algorithm::shm)
      return request_access::shm(state, start_queued<shm_gather<T>>(*st.shm(), send, recv, n, r), "igather",
                                 std::move(finish), keep);
    MPI_Request request = MPI_REQUEST_NULL;
    const int count = mpi_count(n, "gather count");
    HETERO_MPI_CHECK(MPI_Igather, send ? static_cast<const void*>(send) : MPI_IN_PLACE, count, mpi_type<T>(), recv,
                     count, mpi_type<T>(), r, st.comm(), &request);
    return request_access::mpi(state, request, "igather", std::move(finish), keep);
  }

 private:
  template <class... Args>
  static constexpr void check_parameters() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::send_count, parameter::root, parameter::algorithm}),
                  "hetero: gather takes send_buf, recv_buf, send_recv_buf, send_count, root and force_algorithm");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: gather needs send_buf(...) or, at the root, send_recv_buf(...)");
  }

  template <class... Args>
  static auto buffers(comm_state& st, comm_algorithm forced, int root, const char* what, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    static_assert(comm_buffer<S>, "hetero: gather's buffers are Views, contiguous ranges or values");
    buffer_ref<const T, M> in;
    buffer_ref<T, M> out;
    std::size_t n = 0;
    const bool root_here = st.rank() == root;
    const auto p = static_cast<std::size_t>(st.size());
    checked_call(st, collective::gather, [&](call_signature& s) {
      check_root(st, root, what);
      if constexpr (in_place) {
        static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
        if (!root_here) raise<invalid_argument>(what, ": send_recv_buf (in place) is for the root only");
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
          if (root_here) out = as_buffer(get<parameter::recv_buf>(args...), what, "recv_buf");
        }
      }
      if (root_here && (in_place || has_parameter<parameter::recv_buf, Args...>))
        require_size(out, p * n, what, in_place ? "send_recv_buf" : "recv_buf", "p times the count");
      s = {collective::gather, static_cast<long long>(n), root, -1, static_cast<int>(forced)};
    });
    return std::tuple{in, out, n};
  }

  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_GATHER_HPP

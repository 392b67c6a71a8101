/// @file
/// `communicator::broadcast` and `ibroadcast`: the root's buffer to every rank, in place.
#ifndef HETERO_COMM_BROADCAST_HPP
#define HETERO_COMM_BROADCAST_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <type_traits>

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

template <class T, class Ops>
void broadcast_with(comm_state& st, comm_algorithm a, T* data, std::size_t n, int root) {
  switch (a) {
    case comm_algorithm::shm: {
      shm_broadcast<T> operation(*st.shm(), data, n, root);
      run_blocking(*st.shm(), operation, "broadcast");
      return;
    }
    case comm_algorithm::binomial: binomial_broadcast(st, data, n, root); return;
    default: {
      const int count = mpi_count(n, "broadcast count");
      call_mpi(
          st, "broadcast", "MPI_Bcast", [&] { return MPI_Bcast(data, count, mpi_type<T>(), root, st.comm()); },
          [&](MPI_Request* r) { return MPI_Ibcast(data, count, mpi_type<T>(), root, st.comm(), r); });
    }
  }
}

template <class T, class MemorySpace>
void run_broadcast(comm_state& st, T* data, std::size_t n, int root, comm_algorithm forced) {
  const comm_algorithm a = choose(st, {collective::broadcast, n * sizeof(T), n * sizeof(T), alignof(T)}, forced);
  switch (route_for<MemorySpace>(st, a, "broadcast")) {
    case buffer_route::host: broadcast_with<T, host_ops>(st, a, data, n, root); break;
    case buffer_route::direct: broadcast_with<T, kernel_ops<MemorySpace>>(st, a, data, n, root); break;
    case buffer_route::staged: {
      const bool sender = st.rank() == root;  // only the root's data goes out, only the others' comes back
      staged_chunks<T, MemorySpace>(
          st, data, sender ? 1 : 0, data, sender ? 0 : 1, n, 1, [&](const T* in, T* out, std::size_t c) {
            broadcast_with<T, host_ops>(st, a, sender ? const_cast<T*>(in) : out, c, root);
          });
    }
  }
}

template <class T, class MemorySpace>
collective_request start_broadcast(const std::shared_ptr<comm_state>& state, T* data, std::size_t n, int root,
                                   comm_algorithm forced) {
  comm_state& st = *state;
  const comm_algorithm a =
      choose_nonblocking(st, {collective::broadcast, n * sizeof(T), n * sizeof(T), alignof(T)}, forced);
  const buffer_route route = route_for<MemorySpace>(st, a, "ibroadcast");
  T* on_host = data;
  std::shared_ptr<request_buffers<T>> buffers;
  std::function<void()> finish;
  if (route == buffer_route::staged) {
    buffers = std::make_shared<request_buffers<T>>();
    on_host = buffers->recv.template get<T>(n + 1);
    if (st.rank() == root) copy_between<T, Kokkos::HostSpace, MemorySpace>(on_host, data, n);
    fence_copies<MemorySpace>();
    if (st.rank() != root)
      finish = [data, on_host, n] {
        copy_between<T, MemorySpace, Kokkos::HostSpace>(data, on_host, n);
        fence_copies<MemorySpace>();
      };
  }
  if (a == comm_algorithm::shm)
    return request_access::shm(state, start_queued<shm_broadcast<T>>(*st.shm(), on_host, n, root), "ibroadcast",
                               std::move(finish), buffers);
  MPI_Request r = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Ibcast, on_host, mpi_count(n, "broadcast count"), mpi_type<T>(), root, st.comm(), &r);
  return request_access::mpi(state, r, "ibroadcast", std::move(finish), buffers);
}

/// The broadcast members of `communicator`.
template <class Derived>
class broadcast_interface {
 public:
  /// Copies the root's buffer into every rank's buffer (same element count everywhere).
  /// Parameters: `send_recv_buf(b)` (required), `root(r)` (default 0), `force_algorithm(a)`
  /// (mpi, shm, binomial).
  /// @code
  /// comm.broadcast(hetero::send_recv_buf(view), hetero::root(1));
  /// @endcode
  template <class... Args>
  void broadcast(Args&&... args) const {
    check_parameters<Args...>();
    using B = argument_t<parameter::send_recv_buf, Args...>;
    auto& buffer = get<parameter::send_recv_buf>(args...);
    comm_state& st = *state_of::get(derived());
    const int r = get_or<parameter::root>(0, args...);
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    buffer_ref<buffer_element_t<B>, buffer_space_t<B>> data;
    checked_call(st, collective::broadcast, [&](call_signature& s) {
      data = as_buffer(buffer, "broadcast", "send_recv_buf");
      s = {collective::broadcast, static_cast<long long>(data.size), r, -1, static_cast<int>(forced)};
      check_root(st, r, "broadcast");
    });
    if (data.size == 0) return;
    run_broadcast<buffer_element_t<B>, buffer_space_t<B>>(st, data.data, data.size, r, forced);
  }

  /// Starts a broadcast and returns its request (same parameters; algorithm shm or mpi). The
  /// buffer must stay alive until the request is done.
  template <class... Args>
  [[nodiscard]] collective_request ibroadcast(Args&&... args) const {
    check_parameters<Args...>();
    using B = argument_t<parameter::send_recv_buf, Args...>;
    auto& buffer = get<parameter::send_recv_buf>(args...);
    const auto& state = state_of::get(derived());
    const int r = get_or<parameter::root>(0, args...);
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    buffer_ref<buffer_element_t<B>, buffer_space_t<B>> data;
    checked_call(*state, collective::broadcast, [&](call_signature& s) {
      data = as_buffer(buffer, "ibroadcast", "send_recv_buf");
      s = {collective::broadcast, static_cast<long long>(data.size), r, -1, static_cast<int>(forced)};
      check_root(*state, r, "ibroadcast");
    });
    if (data.size == 0) return {};
    return start_broadcast<buffer_element_t<B>, buffer_space_t<B>>(state, data.data, data.size, r, forced);
  }

 private:
  template <class... Args>
  static constexpr void check_parameters() {
    static_assert(only_parameters<Args...>({parameter::send_recv_buf, parameter::root, parameter::algorithm}),
                  "hetero: broadcast takes send_recv_buf(...), root(...) and force_algorithm(...), each once");
    static_assert(has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: broadcast needs send_recv_buf(buffer): the root's data, received in place elsewhere");
    if constexpr (has_parameter<parameter::send_recv_buf, Args...>) {
      using B = argument_t<parameter::send_recv_buf, Args...>;
      static_assert(
          comm_buffer<B>,
          "hetero: send_recv_buf takes a Kokkos View, a contiguous range or one trivially copyable value");
      static_assert(writable_argument<B>(),
                    "hetero: broadcast writes into send_recv_buf: pass a View or a non-const lvalue");
    }
  }
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_BROADCAST_HPP

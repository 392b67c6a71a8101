/// @file
/// `communicator::reduce` and `ireduce`: the element-wise reduction of every rank's vector, on
/// the root. Two paths as in seed 003: combine on the host (small vectors) or in one Kokkos
/// kernel where the data lives (device-side, large vectors).
#ifndef HETERO_COMM_REDUCE_HPP
#define HETERO_COMM_REDUCE_HPP

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
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/request.hpp"

namespace hetero::detail {

/// `recv` is read at the root only; `send` equal to `recv` at the root means in place.
template <class T, class Ops, class R>
void reduce_with(comm_state& st, comm_algorithm a, const T* send, T* recv, std::size_t n, const R& reduction,
                 int root) {
  switch (a) {
    case comm_algorithm::shm: {
      shm_reduce<T, R> operation(*st.shm(), send, recv, n, reduction, root);
      run_blocking(*st.shm(), operation, "reduce");
      return;
    }
    case comm_algorithm::binomial: binomial_reduce<T, Ops>(st, send, recv, n, reduction, root); return;
    case comm_algorithm::linear: linear_reduce<T, host_ops>(st, send, recv, n, reduction, root); return;
    case comm_algorithm::linear_device:
      linear_reduce<T, kernel_ops<typename Ops::memory_space>>(st, send, recv, n, reduction, root);
      return;
    default: {
      const mpi_reduction<T, R> mpi(reduction);
      const int count = mpi_count(n, "reduce count");
#if defined(MPICH_VERSION)
      // MPICH 4.0.2 crashes in MPI_Reduce(MPI_IN_PLACE) at a root other than 0 (shared-memory
      // path, seen from 1000 ints on): give it a copy instead.
      if (st.rank() == root && root != 0 && send == recv) {
        T* copy = Ops::template scratch<T>(st, 0, n);
        Ops::copy(copy, recv, n);
        send = copy;
      }
#endif
      const void* from = st.rank() == root ? send_or_in_place(send, recv) : send;
      call_mpi(
          st, "reduce", "MPI_Reduce",
          [&] { return MPI_Reduce(from, recv, count, mpi.type(), mpi.op(), root, st.comm()); },
          [&](MPI_Request* r) {
            return MPI_Ireduce(from, recv, count, mpi.type(), mpi.op(), root, st.comm(), r);
          });
    }
  }
}

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
  p2p_batch<T> batch(st, collective::reduce);
  for (int r = 0; r < p; ++r)
    if (r != root) batch.recv(on_host + static_cast<std::size_t>(r) * n, n, r);
  batch.wait();
  T* on_device = kernel_ops<MemorySpace>::template scratch<T>(st, 0, static_cast<std::size_t>(p) * n);
  copy_between<T, MemorySpace, host>(on_device, on_host, static_cast<std::size_t>(p) * n);
  fence_copies<MemorySpace>();
  kernel_ops<MemorySpace>::copy(on_device + static_cast<std::size_t>(root) * n, send, n);
  kernel_ops<MemorySpace>::fold(recv, on_device, static_cast<std::size_t>(p), n, n, reduction);
}

template <class T, class MemorySpace, class R>
void run_reduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction, int root,
                comm_algorithm forced) {
  const std::size_t bytes = n * sizeof(T);
  const comm_algorithm a = choose(st, {collective::reduce, bytes, bytes, alignof(T), R::commutative}, forced);
  buffer_route route = route_for<MemorySpace>(st, a, "reduce");
  if constexpr (!host_space<MemorySpace>) {
    if (a == comm_algorithm::linear && route == buffer_route::direct) route = buffer_route::staged;
    if (a == comm_algorithm::linear_device && route == buffer_route::staged)
      return linear_reduce_device_staged<T, MemorySpace>(st, send, recv, n, reduction, root);
  }
  switch (route) {
    case buffer_route::host: reduce_with<T, host_ops>(st, a, send, recv, n, reduction, root); break;
    case buffer_route::direct:
      reduce_with<T, kernel_ops<MemorySpace>>(st, a, send, recv, n, reduction, root);
      break;
    case buffer_route::staged: {
      const bool root_here = st.rank() == root;
      staged_chunks<T, MemorySpace>(st, send, 1, recv, root_here ? 1 : 0, n, 1,
                                    [&](const T* in, T* out, std::size_t c) {
                                      reduce_with<T, host_ops>(st, a, in, out, c, reduction, root);
                                    });
    }
  }
}

template <class T, class MemorySpace, class R>
collective_request start_reduce(const std::shared_ptr<comm_state>& state, const T* send, T* recv, std::size_t n,
                                const R& reduction, int root, comm_algorithm forced) {
  comm_state& st = *state;
  const std::size_t bytes = n * sizeof(T);
  const comm_algorithm a =
      choose_nonblocking(st, {collective::reduce, bytes, bytes, alignof(T), R::commutative}, forced);
  struct keep_alive {
    request_buffers<T> buffers;
    std::unique_ptr<mpi_reduction<T, R>> mpi;
  };
  auto keep = std::make_shared<keep_alive>();
  std::function<void()> finish;
  if (route_for<MemorySpace>(st, a, "ireduce") == buffer_route::staged) {
    T* host_send = keep->buffers.send.template get<T>(n);
    T* host_recv = st.rank() == root ? keep->buffers.recv.template get<T>(n) : nullptr;
    copy_between<T, Kokkos::HostSpace, MemorySpace>(host_send, send, n);
    fence_copies<MemorySpace>();
    if (host_recv)
      finish = [recv, host_recv, n] {
        copy_between<T, MemorySpace, Kokkos::HostSpace>(recv, host_recv, n);
        fence_copies<MemorySpace>();
      };
    send = host_send;
    recv = host_recv;
  }
  if (a == comm_algorithm::shm)
    return request_access::shm(state, start_queued<shm_reduce<T, R>>(*st.shm(), send, recv, n, reduction, root),
                               "ireduce", std::move(finish), keep);
  keep->mpi = std::make_unique<mpi_reduction<T, R>>(reduction);
  MPI_Request r = MPI_REQUEST_NULL;
  const void* from = st.rank() == root ? send_or_in_place(send, recv) : send;
  HETERO_MPI_CHECK(MPI_Ireduce, from, recv, mpi_count(n, "reduce count"), keep->mpi->type(), keep->mpi->op(), root,
                   st.comm(), &r);
  return request_access::mpi(state, r, "ireduce", std::move(finish), keep);
}

/// The reduce members of `communicator`.
template <class Derived>
class reduce_interface {
 public:
  /// The root receives x_0 op x_1 op ... op x_{p-1}, element by element. Parameters: `op(f)`
  /// (required), `root(r)` (default 0); `send_buf(x)` with `recv_buf(y)` (read at the root
  /// only, may be left out elsewhere), or `send_recv_buf(x)` (in place at the root), or only
  /// `send_buf(x)`: the result is returned (at other ranks: a value-initialised value, an
  /// empty View or vector); `force_algorithm(a)` (mpi, shm, binomial, linear, linear_device).
  template <class... Args>
  auto reduce(Args&&... args) const {
    check_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    const auto& reduction = get<parameter::op>(args...);
    constexpr bool returns =
        has_parameter<parameter::send_buf, Args...> && !has_parameter<parameter::recv_buf, Args...>;
    if constexpr (returns) {
      using B = argument_t<parameter::send_buf, Args...>;
      using T = buffer_element_t<B>;
      auto [in, out] = buffers(st, forced, reduction, r, "reduce", args...);
      const std::size_t n = st.rank() == r ? in.size : 0;
      if constexpr (single_value<B>) {
        T result{};
        run_reduce<T, Kokkos::HostSpace>(st, in.data, &result, 1, reduction, r, forced);
        return result;
      } else {
        auto result = make_result(get<parameter::send_buf>(args...), n, "hetero::reduce");
        if (in.size > 0)
          run_reduce<T, buffer_space_t<B>>(st, in.data, result.data(), in.size, reduction, r, forced);
        return result;
      }
    } else {
      auto [in, out] = buffers(st, forced, reduction, r, "reduce", args...);
      if (in.size == 0) return;
      run_reduce<typename decltype(out)::element_type, typename decltype(out)::memory_space>(
          st, in.data, out.data, in.size, reduction, r, forced);
    }
  }

  /// Starts a reduce (with recv_buf or send_recv_buf; algorithm shm or mpi).
  template <class... Args>
  [[nodiscard]] collective_request ireduce(Args&&... args) const {
    check_parameters<Args...>();
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: ireduce needs recv_buf(...) or send_recv_buf(...): the result outlives the call");
    const auto& state = state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    const auto& reduction = get<parameter::op>(args...);
    auto [in, out] = buffers(*state, forced, reduction, r, "ireduce", args...);
    if (in.size == 0) return {};
    return start_reduce<typename decltype(out)::element_type, typename decltype(out)::memory_space>(
        state, in.data, out.data, in.size, reduction, r, forced);
  }

 private:
  template <class... Args>
  static constexpr void check_parameters() {
    static_assert(
        only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                  parameter::op, parameter::root, parameter::algorithm}),
        "hetero: reduce takes send_buf, recv_buf, send_recv_buf, op, root and force_algorithm, each once");
    static_assert(has_parameter<parameter::op, Args...>,
                  "hetero: reduce needs op(...), e.g. hetero::op(hetero::ops::sum{})");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: reduce needs send_buf(...) (with or without recv_buf) or send_recv_buf(...)");
    static_assert(
        !(has_parameter<parameter::recv_buf, Args...> && has_parameter<parameter::send_recv_buf, Args...>),
        "hetero: recv_buf and send_recv_buf exclude each other");
  }

  // (send, recv); recv is empty where it is not needed (other ranks, or the result form).
  template <class R, class... Args>
  static auto buffers(comm_state& st, comm_algorithm forced, const R&, int root, const char* what, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    constexpr parameter source = in_place ? parameter::send_recv_buf : parameter::send_buf;
    using S = argument_t<source, Args...>;
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    static_assert(comm_buffer<S>, "hetero: send_buf takes a Kokkos View, a contiguous range or one value");
    static_assert(!in_place || writable_argument<S>(),
                  "hetero: send_recv_buf takes a View or a non-const lvalue range or value");
    static_assert(reduction_operation<R, T>,
                  "hetero: op's function must take two elements and return one convertible to the element type");
    buffer_ref<const T, M> in;
    buffer_ref<T, M> out;
    checked_call(st, collective::reduce, [&](call_signature& s) {
      auto& source_buffer = get<source>(args...);
      check_root(st, root, what);
      if constexpr (in_place) {
        out = as_buffer(source_buffer, what, "send_recv_buf");
        in = out;
      } else {
        in = as_buffer(source_buffer, what, "send_buf");
        if constexpr (has_parameter<parameter::recv_buf, Args...>) {
          using B = argument_t<parameter::recv_buf, Args...>;
          static_assert(comm_buffer<B> && writable_argument<B>(),
                        "hetero: recv_buf takes a View or a non-const lvalue range or value");
          static_assert(std::is_same_v<buffer_element_t<B>, T> && std::is_same_v<buffer_space_t<B>, M>,
                        "hetero: send_buf and recv_buf must hold the same element type in the same memory space");
          if (st.rank() == root) {
            out = as_buffer(get<parameter::recv_buf>(args...), what, "recv_buf");
            require_size(out, in.size, what, "recv_buf", "the send_buf's count");
          }
        }
      }
      s = {collective::reduce, static_cast<long long>(in.size), root, static_cast<int>(R::builtin),
           static_cast<int>(forced)};
    });
    return std::pair{in, out};
  }

  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_REDUCE_HPP

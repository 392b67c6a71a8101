/// @file
/// The shape of `communicator::scatter` and `iscatter`: block r of the root's buffer to rank r.
#ifndef HETERO_COMM_SCATTER_HPP
#define HETERO_COMM_SCATTER_HPP

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <memory>

#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/core/mpi/datatype.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, linear, binomial. `send` is read at the root only; `recv` null at the
/// root: in place (its block stays in send).
struct scatter_shape : shape_base<collective::scatter, shape_flags{.chunked = true}> {
  template <class... Args>
  static constexpr void check() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::recv_count, parameter::root, parameter::algorithm}),
                  "hetero: scatter takes send_buf, recv_buf, send_recv_buf, recv_count, root, force_algorithm, "
                  "and send_counts/send_displs for blocks of different sizes");
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: scatter needs recv_buf(...) (or send_recv_buf(...) at the root)");
    static_assert(
        !(has_parameter<parameter::recv_buf, Args...> && has_parameter<parameter::send_recv_buf, Args...>),
        "hetero: recv_buf and send_recv_buf exclude each other");
  }

  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using B = argument_t<in_place ? parameter::send_recv_buf : parameter::recv_buf, Args...>;
    static_assert(comm_buffer<B> && writable_argument<B>(),
                  "hetero: scatter's buffers are writable Views, contiguous ranges or values");
    using T = buffer_element_t<B>;
    using M = buffer_space_t<B>;
    auto call = new_call<T, M>(o);
    const bool root_here = st.rank() == o.root;
    const auto p = static_cast<std::size_t>(st.size());
    // A small scatter of host memory travels inline with the root's record where the ranks
    // agree by message (`run_inline`): its p blocks are the root's payload; the others send
    // nothing more, but agree to take it so.
    const auto offer = [&] {
      if constexpr (host_memory<M>) {
        const std::size_t bytes = p * call.n * sizeof(T);
        if (o.forced == comm_algorithm::automatic)
          return root_here ? inline_offer{call.send, bytes, true, bytes} : inline_offer{nullptr, 0, true, bytes};
      }
      return inline_offer{};
    };
    checked_call(
        st, o, kind,
        [&](call_signature& s) {
          check_root(st, o.root, o.what);
          buffer_ref<const T, M> in;
          if constexpr (in_place) {
            if (!root_here) raise<invalid_argument>(o.what, ": send_recv_buf (in place) is for the root only");
            in = as_buffer(get<parameter::send_recv_buf>(args...), o.what, "send_recv_buf");
            call.n = get_or<parameter::recv_count>(in.size / p, args...);
            if (!has_parameter<parameter::recv_count, Args...> && in.size % p != 0)
              raise<invalid_argument>(o.what, ": send_recv_buf holds ", in.size,
                                      " elements, not a multiple of the ", p, " ranks; give recv_count(n)");
          } else {
            const auto out = as_buffer(get<parameter::recv_buf>(args...), o.what, "recv_buf");
            call.n = get_or<parameter::recv_count>(out.size, args...);
            require_size(out, call.n, o.what, "recv_buf", "recv_count");
            call.recv = non_null(out.data);
            if constexpr (has_parameter<parameter::send_buf, Args...>) {
              using S = argument_t<parameter::send_buf, Args...>;
              static_assert(
                  comm_buffer<S> && std::is_same_v<buffer_element_t<S>, T> && std::is_same_v<buffer_space_t<S>, M>,
                  "hetero: send_buf and recv_buf must hold the same element type in the same memory space");
              if (root_here) in = as_buffer(get<parameter::send_buf>(args...), o.what, "send_buf");
            } else if (root_here) {
              raise<invalid_argument>(o.what, ": the root needs send_buf(...)");
            }
          }
          if (root_here)
            require_size(in, p * call.n, o.what, in_place ? "send_recv_buf" : "send_buf", "p times the count");
          call.send = in.data;
          s = {kind, static_cast<long long>(call.n), o.root, -1, static_cast<int>(o.forced), sizeof(T)};
        },
        offer);
    return call;
  }

  /// The root's p blocks came with its record of the agreement (`inline_offer`): rank r's
  /// payload at `at + r * stride` bytes; each rank takes its own block (the root from `send`).
  template <class Call>
  static void run_inline(const comm_state& st, const Call& call, const std::byte* at, std::size_t stride) {
    using T = typename Call::element_type;
    if (call.recv == nullptr || call.n == 0) return;  // the root in place: its block stays in send
    const std::size_t bytes = call.n * sizeof(T);
    const auto me = static_cast<std::size_t>(st.rank());
    const void* mine = st.rank() == call.root ? static_cast<const void*>(call.send + me * call.n)
                                              : at + static_cast<std::size_t>(call.root) * stride + me * bytes;
    std::memcpy(static_cast<void*>(call.recv), mine, bytes);
  }

  template <class Call>
  static call_traits traits(const comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    const std::size_t bytes = call.n * sizeof(T);
    return {kind, bytes, bytes * static_cast<std::size_t>(st.size()), alignof(T)};
  }
  template <class Call>
  static block_layout send_layout(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? block_layout::one(0, static_cast<std::size_t>(st.size()) * call.n)
                                  : block_layout::none();
  }
  template <class Call>
  static block_layout recv_layout(const comm_state&, const Call& call) {
    return call.recv ? block_layout::one(0, call.n) : block_layout::none();
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    run_rooted<scatter_shape, shm_scatter<T>>(st, a, call, linear_scatter<T, Ops>, binomial_scatter<T, Ops>);
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context&, MPI_Request* r) {
    const int n = mpi_count(call.n, "scatter count");
    const MPI_Datatype t = mpi_type<typename Call::element_type>();
    return mpi_form(r, MPI_Scatter, MPI_Iscatter, st.comm(), call.send, n, t, in_place_if_null(call.recv), n, t,
                    call.root);
  }

  template <class T, class M, class Call>
  static void run_staged(comm_state& st, comm_algorithm a, const Call& call) {
    const bool root_here = st.rank() == call.root;
    const auto p = static_cast<std::size_t>(st.size());
    staged_chunks<T, M>(
        st, call.send, root_here ? p : 0, call.recv, call.recv ? 1 : 0, call.n, p,
        [&](const T* in, T* out, std::size_t c) { run<T, host_ops>(st, a, on_buffers(call, in, out, c)); });
  }

  template <class Call>
  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    return start_queued<shm_scatter<T>>(*st.shm(), call.send, call.recv, call.n, call.root);
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_SCATTER_HPP

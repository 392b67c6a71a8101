/// @file
/// The shape of `communicator::gather` and `igather`: every rank's block, in rank order, on the
/// root.
#ifndef HETERO_COMM_GATHER_HPP
#define HETERO_COMM_GATHER_HPP

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <memory>

#include "hetero/comm/detail/node_collectives.hpp"
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/core/mpi/datatype.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, linear, binomial, hierarchical. `send` null at the root: in place (its block already
/// sits in recv).
struct gather_shape : shape_base<collective::gather, shape_flags{.chunked = true, .has_result = true}> {
  template <class... Args>
  static constexpr void check() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::send_count, parameter::root, parameter::algorithm}),
                  "hetero: gather takes send_buf, recv_buf, send_recv_buf, send_count, root, force_algorithm, "
                  "and recv_counts/recv_displs for blocks of different sizes");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: gather needs send_buf(...) or, at the root, send_recv_buf(...)");
  }

  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    static_assert(comm_buffer<S>, "hetero: gather's buffers are Views, contiguous ranges or values");
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    auto call = new_call<T, M>(o);
    const bool root_here = st.rank() == o.root;
    const auto p = static_cast<std::size_t>(st.size());
    // A small gather of host memory travels inline with the records where the ranks agree by
    // message (`run_inline`): each rank's block is its payload, the root takes them all.
    const auto offer = [&] {
      if constexpr (host_memory<M>) {
        const std::size_t bytes = call.n * sizeof(T);
        const T* mine = call.send ? call.send : call.recv + static_cast<std::size_t>(o.root) * call.n;
        if (o.forced == comm_algorithm::automatic) return inline_offer{mine, bytes, true, p * bytes};
      }
      return inline_offer{};
    };
    checked_call(
        st, o, kind,
        [&](call_signature& s) {
          check_root(st, o.root, o.what);
          buffer_ref<T, M> out;
          if constexpr (in_place) {
            static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
            if (!root_here) raise<invalid_argument>(o.what, ": send_recv_buf (in place) is for the root only");
            out = as_buffer(get<parameter::send_recv_buf>(args...), o.what, "send_recv_buf");
            call.n = in_place_block_count(out, p, o.what, args...);
          } else {
            const auto in = as_buffer(get<parameter::send_buf>(args...), o.what, "send_buf");
            call.n = send_block_count(in, o.what, args...);
            call.send = non_null(in.data);
            if (root_here) out = optional_recv_buf<T, M>(o.what, args...);
          }
          if (root_here && (in_place || has_parameter<parameter::recv_buf, Args...>))
            require_size(out, p * call.n, o.what, in_place ? "send_recv_buf" : "recv_buf", "p times the count");
          call.recv = out.data;
          s = {kind, static_cast<long long>(call.n), o.root, -1, static_cast<int>(o.forced), sizeof(T)};
        },
        offer);
    return call;
  }

  /// Every rank's block came with its record of the agreement (`inline_offer`): rank r's at
  /// `at + r * stride` bytes; the root puts them in rank order, the others are done.
  template <class Call>
  static void run_inline(const comm_state& st, const Call& call, const std::byte* at, std::size_t stride) {
    using T = typename Call::element_type;
    if (st.rank() != call.root || call.n == 0) return;
    const std::size_t bytes = call.n * sizeof(T);
    for (int r = 0; r < st.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r == call.root && call.send == nullptr) continue;  // in place: its block is there
      const void* block = r == call.root ? static_cast<const void*>(call.send) : at + i * stride;
      std::memcpy(static_cast<void*>(call.recv + i * call.n), block, bytes);
    }
  }

  template <class Call>
  static std::size_t result_size(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? static_cast<std::size_t>(st.size()) * call.n : 0;
  }
  template <class Call>
  static block_layout send_layout(const comm_state& st, const Call& call) {
    const bool root_here = st.rank() == call.root;
    return block_layout::one(call.send || !root_here ? 0 : static_cast<std::size_t>(call.root) * call.n, call.n);
  }
  template <class Call>
  static block_layout recv_layout(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? block_layout::one(0, static_cast<std::size_t>(st.size()) * call.n)
                                  : block_layout::none();
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    if (a == comm_algorithm::hierarchical)
      return hierarchical_gather<T>(st, call.send, call.recv, call.n, call.root);
    run_rooted<gather_shape, shm_gather<T>>(st, a, call, linear_gather<T, Ops>, binomial_gather<T, Ops>,
                                            checks_of(st) == argument_check::consistent);
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context&, MPI_Request* r) {
    const int n = mpi_count(call.n, "gather count");
    const MPI_Datatype t = mpi_type<typename Call::element_type>();
    return mpi_form(r, MPI_Gather, MPI_Igather, st.comm(), in_place_if_null(call.send), n, t, call.recv, n, t,
                    call.root);
  }

  template <class T, class M, class Call>
  static void run_staged(comm_state& st, comm_algorithm a, const Call& call) {
    const bool root_here = st.rank() == call.root;
    const auto p = static_cast<std::size_t>(st.size());
    // In place: stage the root's block too.
    const T* send = call.send ? call.send : call.recv + static_cast<std::size_t>(call.root) * call.n;
    staged_chunks<T, M>(
        st, send, 1, call.recv, root_here ? p : 0, call.n, p,
        [&](const T* in, T* out, std::size_t c) { run<T, host_ops>(st, a, on_buffers(call, in, out, c)); });
  }

  template <class Call>
  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    return start_queued<shm_gather<T>>(*st.shm(), call.send, call.recv, call.n, call.root);
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_GATHER_HPP

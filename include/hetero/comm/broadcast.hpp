/// @file
/// The shape of `communicator::broadcast` and `ibroadcast`: the root's buffer to every rank, in
/// place.
#ifndef HETERO_COMM_BROADCAST_HPP
#define HETERO_COMM_BROADCAST_HPP

#include <mpi.h>

#include <cstring>

#include <cstddef>
#include <memory>

#include "hetero/comm/detail/node_collectives.hpp"
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/core/mpi/datatype.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, binomial. The call is in place everywhere: send null, recv the data.
struct broadcast_shape : shape_base<collective::broadcast, shape_flags{.chunked = true}> {
  template <class... Args>
  static constexpr void check() {
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

  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    using B = argument_t<parameter::send_recv_buf, Args...>;
    using T = buffer_element_t<B>;
    using M = buffer_space_t<B>;
    auto call = new_call<T, M>(o);
    // A small broadcast of host memory travels inline with the root's record where the ranks
    // agree by message (`run_inline`); the others send nothing more, but agree to take it so.
    const auto offer = [&] {
      if constexpr (host_memory<M>) {
        if (o.forced == comm_algorithm::automatic)
          return st.rank() == o.root ? inline_offer{call.recv, call.n * sizeof(T), true, call.n * sizeof(T)}
                                     : inline_offer{nullptr, 0, true, call.n * sizeof(T)};
      }
      return inline_offer{};
    };
    checked_call(
        st, o, kind,
        [&](call_signature& s) {
          const auto data = as_buffer(get<parameter::send_recv_buf>(args...), o.what, "send_recv_buf");
          call.recv = data.data;
          call.n = data.size;
          s = {kind, static_cast<long long>(call.n), o.root, -1, static_cast<int>(o.forced), sizeof(T)};
          check_root(st, o.root, o.what);
        },
        offer);
    return call;
  }

  /// The root's data came with its record of the agreement (`inline_offer`): rank r's payload
  /// at `at + r * stride` bytes.
  template <class Call>
  static void run_inline(const comm_state& st, const Call& call, const std::byte* at, std::size_t stride) {
    if (st.rank() == call.root || call.n == 0) return;
    std::memcpy(static_cast<void*>(call.recv), at + static_cast<std::size_t>(call.root) * stride,
                call.n * sizeof(typename Call::element_type));
  }

  // Only the root's data goes out, only the others' comes back.
  template <class Call>
  static block_layout send_layout(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? block_layout::one(0, call.n) : block_layout::none();
  }
  template <class Call>
  static block_layout recv_layout(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? block_layout::none() : block_layout::one(0, call.n);
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    switch (a) {
      case comm_algorithm::shm: return run_shm<shm_broadcast<T>>(*st.shm(), name, call.recv, call.n, call.root);
      case comm_algorithm::binomial: return binomial_broadcast(st, call.recv, call.n, call.root);
      case comm_algorithm::hierarchical: return hierarchical_broadcast(st, call.recv, call.n, call.root);
      default: return run_mpi<broadcast_shape>(st, call);
    }
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context&, MPI_Request* r) {
    return mpi_form(r, MPI_Bcast, MPI_Ibcast, st.comm(), call.recv, mpi_count(call.n, "broadcast count"),
                    mpi_type<typename Call::element_type>(), call.root);
  }

  template <class T, class M, class Call>
  static void run_staged(comm_state& st, comm_algorithm a, const Call& call) {
    const bool sender = st.rank() == call.root;
    staged_chunks<T, M>(st, call.recv, sender ? 1 : 0, call.recv, sender ? 0 : 1, call.n, 1,
                        [&](const T* in, T* out, std::size_t c) {
                          Call chunk = call;
                          chunk.recv = sender ? const_cast<T*>(in) : out;
                          chunk.n = c;
                          run<T, host_ops>(st, a, chunk);
                        });
  }

  template <class Call>
  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    return start_queued<shm_broadcast<T>>(*st.shm(), call.recv, call.n, call.root);
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_BROADCAST_HPP

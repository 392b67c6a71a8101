/// @file
/// The shape of `communicator::allgather` with `recv_counts` (and `allgatherv`, `iallgatherv`):
/// every rank's block, of its own size, on every rank at the displacement given for it.
#ifndef HETERO_COMM_ALLGATHERV_HPP
#define HETERO_COMM_ALLGATHERV_HPP

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "hetero/comm/allgather.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"
#include "hetero/core/mpi/datatype.hpp"

namespace hetero::detail {

/// Algorithms: mpi, shm, ring. `n` is this rank's count; `send` null: in place.
struct allgatherv_shape
    : shape_base<collective::allgatherv,
                 shape_flags{.has_result = true, .listed = true, .start_needs_recv_buf = true}> {
  template <class... Args>
  static constexpr void check() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::recv_counts, parameter::recv_displs, parameter::algorithm}),
                  "hetero: allgather with recv_counts (allgatherv) takes send_buf, recv_buf, send_recv_buf, "
                  "recv_counts, recv_displs and force_algorithm");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: allgatherv needs send_buf(...) or send_recv_buf(...)");
    static_assert(
        !has_parameter<parameter::send_recv_buf, Args...> || has_parameter<parameter::recv_counts, Args...>,
        "hetero: allgatherv in place (send_recv_buf) needs recv_counts(...)");
  }

  // The counts are exchanged first when no rank gave them.
  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    static_assert(comm_buffer<S>, "hetero: allgatherv's buffers are Views, contiguous ranges or values");
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    auto call = new_call<T, M>(o);
    const auto me = static_cast<std::size_t>(st.rank());
    std::vector<std::size_t>& counts = st.size_list(0);
    std::vector<std::size_t>& displs = st.size_list(1);
    buffer_ref<T, M> out;
    const auto check_counts = [&] {
      if constexpr (has_parameter<parameter::recv_displs, Args...>)
        to_sizes(get<parameter::recv_displs>(args...), counts.size(), o.what, "recv_displs", displs);
      else
        packed_displs(counts, displs);
      if constexpr (in_place) {
        call.n = counts[me];
        require_size(out, extent_of(counts, displs), o.what, "send_recv_buf", "recv_counts and recv_displs");
      } else {
        if (counts[me] != call.n)
          raise<invalid_argument>(o.what, ": recv_counts[", me, "] is ", counts[me], " but this rank sends ",
                                  call.n, " element(s)");
        out = optional_recv_buf<T, M>(o.what, args...);
        if constexpr (has_parameter<parameter::recv_buf, Args...>)
          require_size(out, extent_of(counts, displs), o.what, "recv_buf", "recv_counts and recv_displs");
      }
    };
    const call_signature signature{kind, 0, -1, -1, static_cast<int>(o.forced), sizeof(T)};
    checked_call(st, o, kind, [&](call_signature& s) {
      s = signature;
      if constexpr (in_place) {
        static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
        out = as_buffer(get<parameter::send_recv_buf>(args...), o.what, "send_recv_buf");
      } else {
        const auto in = as_buffer(get<parameter::send_buf>(args...), o.what, "send_buf");
        call.send = non_null(in.data);
        call.n = in.size;
      }
      if constexpr (has_parameter<parameter::recv_counts, Args...>) {
        to_sizes(get<parameter::recv_counts>(args...), static_cast<std::size_t>(st.size()), o.what, "recv_counts",
                 counts);
        check_counts();
      }
    });
    if constexpr (!has_parameter<parameter::recv_counts, Args...>) {
      exchange_counts<allgather_shape>(st, call.n, -1, true, o.what, counts);
      checked_call(st, o, kind, [&](call_signature& s) {
        s = signature;
        check_counts();
      });
    }
    call.recv = out.data;
    call.counts = counts;
    call.displs = displs;
    return call;
  }

  template <class Call>
  static std::size_t result_size(const comm_state&, const Call& call) {
    return extent_of(call.counts, call.displs);
  }
  // Keyed on the largest block: every rank knows every count, so every rank chooses alike.
  template <class Call>
  static call_traits traits(const comm_state&, const Call& call) {
    using T = typename Call::element_type;
    const std::size_t bytes = *std::max_element(call.counts.begin(), call.counts.end()) * sizeof(T);
    return {kind, bytes, bytes, alignof(T)};
  }
  template <class Call>
  static block_layout send_layout(const comm_state& st, const Call& call) {
    return block_layout::one(call.send ? 0 : call.displs[static_cast<std::size_t>(st.rank())], call.n);
  }
  template <class Call>
  static block_layout recv_layout(const comm_state&, const Call& call) {
    return block_layout::listed(call.counts, call.displs);
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    switch (a) {
      case comm_algorithm::shm:
        return run_shm<shm_allgatherv<T>>(*st.shm(), name, call.send, call.recv, call.counts, call.displs);
      case comm_algorithm::ring:
        return ring_allgatherv<T, Ops>(st, call.send, call.recv, call.counts, call.displs);
      default:
        if (st.size() == 1) {  // MPICH 4.0.2's MPI_Allgatherv ignores the displacement on one rank
          if (call.send) Ops::copy(call.recv + call.displs[0], call.send, call.counts[0]);
          return;
        }
        return run_mpi<allgatherv_shape>(st, call);
    }
  }
  // On one rank (the non-blocking form only: `run` copies on its own), done at once: the
  // request stays null.
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context& x, MPI_Request* r) {
    using T = typename Call::element_type;
    if (st.size() == 1) {  // MPICH 4.0.2's MPI_Allgatherv ignores the displacement on one rank
      if (call.send)
        copy_between<T, Kokkos::HostSpace, Kokkos::HostSpace>(call.recv + call.displs[0], call.send,
                                                              call.counts[0]);
      return MPI_SUCCESS;
    }
    mpi_counts(call.counts, "allgatherv count", x.counts);
    mpi_counts(call.displs, "allgatherv displacement", x.displs);
    const MPI_Datatype t = mpi_type<T>();
    return mpi_form(r, MPI_Allgatherv, MPI_Iallgatherv, st.comm(), in_place_if_null(call.send),
                    x.counts[static_cast<std::size_t>(st.rank())], t, call.recv, x.counts.data(), x.displs.data(),
                    t);
  }

  template <class Call>
  static std::shared_ptr<shm_pending> start_shm(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    return start_queued<shm_allgatherv<T>>(*st.shm(), call.send, call.recv, call.counts, call.displs);
  }
};

/// The shape of `allgather(...)`: allgatherv's when per-rank counts or displacements are given.
template <class... Args>
using allgather_shape_for = std::conditional_t<has_parameter<parameter::recv_counts, Args...> ||
                                                   has_parameter<parameter::recv_displs, Args...>,
                                               allgatherv_shape, allgather_shape>;

}  // namespace hetero::detail

#endif  // HETERO_COMM_ALLGATHERV_HPP

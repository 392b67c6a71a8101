/// @file
/// The shape of `communicator::scatter` with `send_counts` (and `scatterv`, `iscatterv`):
/// counts[r] elements at displs[r] of the root's buffer to rank r.
#ifndef HETERO_COMM_SCATTERV_HPP
#define HETERO_COMM_SCATTERV_HPP

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include "hetero/comm/detail/p2p.hpp"
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/scatter.hpp"
#include "hetero/core/mpi/datatype.hpp"

namespace hetero::detail {

/// The root's slot for the blocks that fit a rank's region of it, messages for the others.
template <class T>
void hybrid_scatterv(comm_state& st, const T* send, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs, T* recv, std::size_t recv_n, int root) {
  shm_scatterv<T> operation(*st.shm(), send, counts, displs, recv, recv_n, root,
                            checks_of(st) == argument_check::consistent);
  p2p_batch<T> batch(st, collective::scatterv);
  if (st.rank() == root) {
    for (int r = 0; r < st.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r != root && !operation.fits(counts[i])) batch.send(send + displs[i], counts[i], r);
    }
  } else if (!operation.fits(recv_n)) {
    batch.recv(recv, recv_n, root);
  }
  try {
    run_blocking(*st.shm(), operation, "scatterv");
  } catch (const invalid_argument&) {
    // The root sent this rank another count than it expects, as a message (too large for the
    // region) that this rank posted no receive for: take it and drop it, so that no later call
    // on the communicator matches it. A wait that gives up here marks the communicator out of
    // step (p2p_batch); the caller hears the count error either way.
    if (const auto sent = operation.mismatched_count(); sent && !operation.fits(*sent)) {
      try {
        std::vector<T> sink(*sent);
        batch.recv(sink.data(), *sent, root);
        batch.wait();
      } catch (const std::bad_alloc&) {  // the message stays in flight
        st.mark_out_of_step("scatterv", "found ranks that passed different counts");
      } catch (const error&) {
      }
    }
    throw;
  }
  batch.wait();
}

/// Algorithms: mpi, shm (with messages for large blocks), linear. `n` is this rank's count;
/// `send`, `counts` and `displs` are read at the root only; `recv` null at the root: in place.
struct scatterv_shape : shape_base<collective::scatterv, shape_flags{.listed = true, .shm_start = false}> {
  template <class... Args>
  static constexpr void check() {
    static_assert(
        only_parameters<Args...>({parameter::send_buf, parameter::send_recv_buf, parameter::recv_buf,
                                  parameter::send_counts, parameter::send_displs, parameter::recv_count,
                                  parameter::root, parameter::algorithm}),
        "hetero: scatter with send_counts (scatterv) takes send_buf, send_recv_buf, recv_buf, send_counts, "
        "send_displs, recv_count, root and force_algorithm");
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: scatterv needs recv_buf(...) (or send_recv_buf(...) at the root)");
  }

  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using B = argument_t<in_place ? parameter::send_recv_buf : parameter::recv_buf, Args...>;
    static_assert(comm_buffer<B> && writable_argument<B>(),
                  "hetero: scatterv's buffers are writable Views, ranges or values");
    using T = buffer_element_t<B>;
    using M = buffer_space_t<B>;
    auto call = new_call<T, M>(o);
    const int r = o.root;
    const bool root_here = st.rank() == r;
    std::vector<std::size_t>& counts = st.size_list(0);
    std::vector<std::size_t>& displs = st.size_list(1);
    counts.clear();
    displs.clear();
    // A small scatterv of host memory travels inline with the root's record where the ranks
    // agree by message (`run_inline`): the root's payload is every rank's count, then the
    // blocks in rank order (`pack_inline`); the others send nothing more, but agree to take it so.
    const auto offer = [&] {
      if constexpr (host_memory<M>) {
        if (o.forced == comm_algorithm::automatic) {
          if (!root_here) return inline_offer{nullptr, 0, true, 0};
          if (const std::span<const std::byte> packed = pack_inline<T>(st, call.send, counts, displs);
              !packed.empty())
            return inline_offer{packed.data(), packed.size(), true, packed.size()};
        }
      }
      return inline_offer{};
    };
    checked_call(
        st, o, kind,
        [&](call_signature& s) {
          s = {kind, 0, r, -1, static_cast<int>(o.forced), sizeof(T)};
          check_root(st, r, o.what);
          buffer_ref<const T, M> in;
          if constexpr (in_place) {
            if (!root_here) raise<invalid_argument>(o.what, ": send_recv_buf (in place) is for the root only");
            in = as_buffer(get<parameter::send_recv_buf>(args...), o.what, "send_recv_buf");
          } else {
            const auto out = as_buffer(get<parameter::recv_buf>(args...), o.what, "recv_buf");
            call.n = get_or<parameter::recv_count>(out.size, args...);
            require_size(out, call.n, o.what, "recv_buf", "recv_count");
            call.recv = non_null(out.data);
          }
          if (!root_here) return;
          if constexpr (has_parameter<parameter::send_buf, Args...>) {
            using S = argument_t<parameter::send_buf, Args...>;
            static_assert(
                comm_buffer<S> && std::is_same_v<buffer_element_t<S>, T> && std::is_same_v<buffer_space_t<S>, M>,
                "hetero: send_buf and recv_buf must hold the same element type in the same memory space");
            in = as_buffer(get<parameter::send_buf>(args...), o.what, "send_buf");
          } else if constexpr (!in_place) {
            raise<invalid_argument>(o.what, ": the root needs send_buf(...)");
          }
          if constexpr (has_parameter<parameter::send_counts, Args...>)
            to_sizes(get<parameter::send_counts>(args...), static_cast<std::size_t>(st.size()), o.what,
                     "send_counts", counts);
          else
            raise<invalid_argument>(o.what, ": the root needs send_counts(...)");
          if constexpr (has_parameter<parameter::send_displs, Args...>)
            to_sizes(get<parameter::send_displs>(args...), counts.size(), o.what, "send_displs", displs);
          else
            packed_displs(counts, displs);
          require_size(in, extent_of(counts, displs), o.what, in_place ? "send_recv_buf" : "send_buf",
                       "send_counts and send_displs");
          if (in_place) call.n = counts[static_cast<std::size_t>(r)];
          if (counts[static_cast<std::size_t>(r)] != call.n)
            raise<invalid_argument>(o.what, ": send_counts[root] is ", counts[static_cast<std::size_t>(r)],
                                    " but the root receives ", call.n, " element(s)");
          call.send = in.data;
        },
        offer);
    call.counts = counts;
    call.displs = displs;
    return call;
  }

  /// At the root: its inline payload in the communicator's scratch, [count of rank 0 ... of
  /// rank p - 1][rank 0's block ... rank p - 1's], counts as 64-bit words; empty where it
  /// exceeds what any agreement carries.
  template <class T>
  static std::span<const std::byte> pack_inline(comm_state& st, const T* send, std::span<const std::size_t> counts,
                                                std::span<const std::size_t> displs) {
    const std::size_t p = counts.size();
    std::size_t bytes = p * sizeof(std::uint64_t);
    for (const std::size_t c : counts) bytes += c * sizeof(T);
    if (bytes > largest_inline_bytes) return {};
    std::byte* packed = st.scratch(0).get(bytes);
    std::byte* at = packed + p * sizeof(std::uint64_t);
    for (std::size_t i = 0; i < p; ++i) {
      const std::uint64_t c = counts[i];
      std::memcpy(packed + i * sizeof(c), &c, sizeof(c));
      if (c > 0) std::memcpy(at, send + displs[i], c * sizeof(T));
      at += c * sizeof(T);
    }
    return {packed, bytes};
  }

  /// The root's counts and blocks came with its record of the agreement (`pack_inline`; rank
  /// r's payload at `at + r * stride` bytes): each rank takes its own block, after checking that
  /// the root sends the count it expects (else it raises, alone: the others are done).
  template <class Call>
  static void run_inline(const comm_state& st, const Call& call, const std::byte* at, std::size_t stride) {
    using T = typename Call::element_type;
    const auto me = static_cast<std::size_t>(st.rank());
    if (st.rank() == call.root) {
      if (call.recv && call.n > 0)
        std::memcpy(static_cast<void*>(call.recv), call.send + call.displs[me], call.n * sizeof(T));
      return;
    }
    const std::byte* packed = at + static_cast<std::size_t>(call.root) * stride;
    const auto p = static_cast<std::size_t>(st.size());
    std::size_t offset = p * sizeof(std::uint64_t);
    std::uint64_t c = 0;
    for (std::size_t i = 0; i <= me; ++i) {
      std::memcpy(&c, packed + i * sizeof(c), sizeof(c));
      if (i < me) offset += static_cast<std::size_t>(c) * sizeof(T);
    }
    if (c != call.n) raise_scatterv_count(c, me, call.n);
    if (c > 0) std::memcpy(static_cast<void*>(call.recv), packed + offset, call.n * sizeof(T));
  }

  template <class Call>
  static block_layout send_layout(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? block_layout::listed(call.counts, call.displs) : block_layout::none();
  }
  template <class Call>
  static block_layout recv_layout(const comm_state&, const Call& call) {
    return call.recv ? block_layout::one(0, call.n) : block_layout::none();
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    if (a == comm_algorithm::linear)
      return linear_scatterv<T, Ops>(st, call.send, call.counts, call.displs, call.recv, call.n, call.root);
    if (a == comm_algorithm::shm)
      return hybrid_scatterv(st, call.send, call.counts, call.displs, call.recv, call.n, call.root);
    run_mpi<scatterv_shape>(st, call);
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context& x, MPI_Request* r) {
    rooted_mpi_lists(st, call, "scatterv count", "scatterv displacement", x.counts, x.displs);
    const int n = mpi_count(call.n, "scatterv count");
    const MPI_Datatype t = mpi_type<typename Call::element_type>();
    return mpi_form(r, MPI_Scatterv, MPI_Iscatterv, st.comm(), call.send, x.counts.data(), x.displs.data(), t,
                    in_place_if_null(call.recv), n, t, call.root);
  }
};

/// The shape of `scatter(...)`: scatterv's when per-rank counts or displacements are given.
template <class... Args>
using scatter_shape_for = std::conditional_t<has_parameter<parameter::send_counts, Args...> ||
                                                 has_parameter<parameter::send_displs, Args...>,
                                             scatterv_shape, scatter_shape>;

}  // namespace hetero::detail

#endif  // HETERO_COMM_SCATTERV_HPP

/// @file
/// The shape of `communicator::gather` with `recv_counts` (and `gatherv`, `igatherv`): every
/// rank's block, of its own size, on the root at the displacement given for it.
#ifndef HETERO_COMM_GATHERV_HPP
#define HETERO_COMM_GATHERV_HPP

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "hetero/comm/detail/p2p.hpp"
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/skeleton.hpp"
#include "hetero/comm/gather.hpp"
#include "hetero/core/mpi/datatype.hpp"

namespace hetero::detail {

/// Shared memory for the blocks that fit a slot, messages for the others (posted first, waited
/// last, so the shared-memory part never waits for them).
template <class T>
void hybrid_gatherv(comm_state& st, const T* send, std::size_t send_n, T* recv,
                    std::span<const std::size_t> counts, std::span<const std::size_t> displs, int root) {
  shm_gatherv<T> operation(*st.shm(), send, send_n, recv, counts, displs, root,
                           checks_of(st) == argument_check::consistent);
  p2p_batch<T> batch(st, collective::gatherv);
  if (st.rank() == root) {
    for (int r = 0; r < st.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r != root && !operation.fits(counts[i])) batch.recv(recv + displs[i], counts[i], r);
    }
  }
  run_blocking(*st.shm(), operation, "gatherv");
  // A large block leaves once the root's slot said it accepted its arguments (consistent
  // checks): a root that rejected them posts no receive, and the send would never complete.
  if (st.rank() != root && !operation.fits(send_n)) batch.send(send, send_n, root);
  batch.wait();
}

/// Algorithms: mpi, shm (with messages for large blocks), linear. `n` is this rank's count;
/// `counts` and `displs` are read at the root only; `send` null at the root: in place.
struct gatherv_shape
    : shape_base<collective::gatherv, shape_flags{.has_result = true, .listed = true, .shm_start = false}> {
  template <class... Args>
  static constexpr void check() {
    static_assert(
        only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                  parameter::recv_counts, parameter::recv_displs, parameter::root,
                                  parameter::algorithm}),
        "hetero: gather with recv_counts (gatherv) takes send_buf, recv_buf, send_recv_buf, recv_counts, "
        "recv_displs, root and force_algorithm");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: gatherv needs send_buf(...) or, at the root, send_recv_buf(...)");
    static_assert(
        !has_parameter<parameter::send_recv_buf, Args...> || has_parameter<parameter::recv_counts, Args...>,
        "hetero: gatherv in place (send_recv_buf) needs recv_counts(...)");
  }

  // The counts are gathered first when no rank gave them.
  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    static_assert(comm_buffer<S>, "hetero: gatherv's buffers are Views, contiguous ranges or values");
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    auto call = new_call<T, M>(o);
    const int r = o.root;
    const bool root_here = st.rank() == r;
    std::vector<std::size_t>& counts = st.size_list(0);
    std::vector<std::size_t>& displs = st.size_list(1);
    counts.clear();
    displs.clear();
    buffer_ref<T, M> out;
    const auto check_counts = [&] {  // at the root, once the counts are known
      if (!root_here) return;
      if constexpr (has_parameter<parameter::recv_displs, Args...>)
        to_sizes(get<parameter::recv_displs>(args...), counts.size(), o.what, "recv_displs", displs);
      else
        packed_displs(counts, displs);
      if constexpr (in_place) {
        call.n = counts[static_cast<std::size_t>(r)];
        require_size(out, extent_of(counts, displs), o.what, "send_recv_buf", "recv_counts and recv_displs");
      } else {
        if (counts[static_cast<std::size_t>(r)] != call.n)
          raise<invalid_argument>(o.what, ": recv_counts[root] is ", counts[static_cast<std::size_t>(r)],
                                  " but the root sends ", call.n, " element(s)");
        out = optional_recv_buf<T, M>(o.what, args...);
        if constexpr (has_parameter<parameter::recv_buf, Args...>)
          require_size(out, extent_of(counts, displs), o.what, "recv_buf", "recv_counts and recv_displs");
      }
    };
    const call_signature signature{kind, 0, r, -1, static_cast<int>(o.forced), sizeof(T)};
    // A small gatherv of host memory travels inline with the records where the ranks agree by
    // message (`run_inline`): each rank's payload is its count, then its block (`pack_inline`);
    // the root takes them all. Offered with the last check, once the root knows the counts.
    constexpr bool counts_given = has_parameter<parameter::recv_counts, Args...>;
    const auto offer = [&] {
      if constexpr (host_memory<M>) {
        if (o.forced == comm_algorithm::automatic) {
          if (root_here) return inline_offer{nullptr, 0, true, 0};
          const std::span<const std::byte> packed = pack_inline(st, call);
          const auto p = static_cast<std::size_t>(st.size());
          if (!packed.empty()) return inline_offer{packed.data(), packed.size(), true, p * packed.size()};
        }
      }
      return inline_offer{};
    };
    checked_call(
        st, o, kind,
        [&](call_signature& s) {
          s = signature;
          check_root(st, r, o.what);
          if constexpr (in_place) {
            static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
            if (!root_here) raise<invalid_argument>(o.what, ": send_recv_buf (in place) is for the root only");
            out = as_buffer(get<parameter::send_recv_buf>(args...), o.what, "send_recv_buf");
          } else {
            const auto in = as_buffer(get<parameter::send_buf>(args...), o.what, "send_buf");
            call.send = non_null(in.data);
            call.n = in.size;
          }
          if constexpr (has_parameter<parameter::recv_counts, Args...>) {
            if (root_here)
              to_sizes(get<parameter::recv_counts>(args...), static_cast<std::size_t>(st.size()), o.what,
                       "recv_counts", counts);
            check_counts();
          }
        },
        [&] { return counts_given ? offer() : inline_offer{}; });
    if constexpr (!counts_given) {
      exchange_counts<gather_shape>(st, call.n, r, root_here, o.what, counts);
      checked_call(
          st, o, kind,
          [&](call_signature& s) {
            s = signature;
            check_counts();
          },
          offer);
    }
    call.recv = out.data;
    call.counts = counts;
    call.displs = displs;
    return call;
  }

  /// Off the root: this rank's inline payload in the communicator's scratch, [its count as a
  /// 64-bit word][its block]; empty where it exceeds what any agreement carries.
  template <class Call>
  static std::span<const std::byte> pack_inline(comm_state& st, const Call& call) {
    using T = typename Call::element_type;
    const std::uint64_t c = call.n;
    const std::size_t bytes = sizeof(c) + call.n * sizeof(T);
    if (bytes > largest_inline_bytes) return {};
    std::byte* packed = st.scratch(0).get(bytes);
    std::memcpy(packed, &c, sizeof(c));
    if (call.n > 0) std::memcpy(packed + sizeof(c), call.send, call.n * sizeof(T));
    return {packed, bytes};
  }

  /// Every rank's count and block came with its record of the agreement (`pack_inline`; rank
  /// r's payload at `at + r * stride` bytes): the root checks each count against recv_counts
  /// (a mismatch raises there, alone: the others are done) and puts each block at its place.
  template <class Call>
  static void run_inline(const comm_state& st, const Call& call, const std::byte* at, std::size_t stride) {
    using T = typename Call::element_type;
    if (st.rank() != call.root) return;
    for (int r = 0; r < st.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r == call.root) {
        if (call.send && call.n > 0)
          std::memcpy(static_cast<void*>(call.recv + call.displs[i]), call.send, call.n * sizeof(T));
        continue;
      }
      const std::byte* packed = at + i * stride;
      std::uint64_t c = 0;
      std::memcpy(&c, packed, sizeof(c));
      if (c != call.counts[i])
        raise<invalid_argument>("gatherv: rank ", r, " sends ", c, " element(s) where the root expects ",
                                call.counts[i], " (recv_counts)");
      if (c > 0) std::memcpy(static_cast<void*>(call.recv + call.displs[i]), packed + sizeof(c), c * sizeof(T));
    }
  }

  template <class Call>
  static std::size_t result_size(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? extent_of(call.counts, call.displs) : 0;
  }
  template <class Call>
  static block_layout send_layout(const comm_state& st, const Call& call) {
    if (call.send || st.rank() != call.root) return block_layout::one(0, call.n);
    return block_layout::one(call.displs[static_cast<std::size_t>(call.root)], call.n);
  }
  template <class Call>
  static block_layout recv_layout(const comm_state& st, const Call& call) {
    return st.rank() == call.root ? block_layout::listed(call.counts, call.displs) : block_layout::none();
  }

  template <class T, class Ops, class Call>
  static void run(comm_state& st, comm_algorithm a, const Call& call) {
    if (a == comm_algorithm::linear)
      return linear_gatherv<T, Ops>(st, call.send, call.n, call.recv, call.counts, call.displs, call.root);
    if (a == comm_algorithm::shm)
      return hybrid_gatherv(st, call.send, call.n, call.recv, call.counts, call.displs, call.root);
    run_mpi<gatherv_shape>(st, call);
  }
  template <class Call>
  static int mpi(const comm_state& st, const Call& call, const mpi_context& x, MPI_Request* r) {
    rooted_mpi_lists(st, call, "gatherv count", "gatherv displacement", x.counts, x.displs);
    const int n = mpi_count(call.n, "gatherv count");
    const MPI_Datatype t = mpi_type<typename Call::element_type>();
    return mpi_form(r, MPI_Gatherv, MPI_Igatherv, st.comm(), in_place_if_null(call.send), n, t, call.recv,
                    x.counts.data(), x.displs.data(), t, call.root);
  }
};

/// The shape of `gather(...)`: gatherv's when per-rank counts or displacements are given.
template <class... Args>
using gather_shape_for = std::conditional_t<has_parameter<parameter::recv_counts, Args...> ||
                                                has_parameter<parameter::recv_displs, Args...>,
                                            gatherv_shape, gather_shape>;

}  // namespace hetero::detail

#endif  // HETERO_COMM_GATHERV_HPP

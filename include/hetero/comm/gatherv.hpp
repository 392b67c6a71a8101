/// @file
/// `communicator::gatherv` and `igatherv`: every rank's block, of its own size, on the root at
/// the displacement given for it.
#ifndef HETERO_COMM_GATHERV_HPP
#define HETERO_COMM_GATHERV_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "hetero/comm/buffer.hpp"
#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/detail/interface.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/mpi_type.hpp"
#include "hetero/comm/detail/rooted_algorithms.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/gather.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/request.hpp"

namespace hetero::detail {

/// Shared memory for the blocks that fit a slot, messages for the others (posted first, waited
/// last, so the shared-memory part never waits for them).
template <class T>
void hybrid_gatherv(comm_state& st, const T* send, std::size_t send_n, T* recv,
                    std::span<const std::size_t> counts, std::span<const std::size_t> displs, int root) {
  shm_gatherv<T> operation(*st.shm(), send, send_n, recv, counts, displs, root);
  p2p_batch<T> batch(st, collective::gatherv);
  if (st.rank() == root) {
    for (int r = 0; r < st.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r != root && !operation.fits(counts[i])) batch.recv(recv + displs[i], counts[i], r);
    }
  } else if (!operation.fits(send_n)) {
    batch.send(send, send_n, root);
  }
  run_blocking(*st.shm(), operation, "gatherv");
  batch.wait();
}

template <class T, class Ops>
void gatherv_with(comm_state& st, comm_algorithm a, const T* send, std::size_t send_n, T* recv,
                  std::span<const std::size_t> counts, std::span<const std::size_t> displs, int root) {
  if (a == comm_algorithm::linear) return linear_gatherv<T, Ops>(st, send, send_n, recv, counts, displs, root);
  if (a == comm_algorithm::shm) return hybrid_gatherv(st, send, send_n, recv, counts, displs, root);
  const bool root_here = st.rank() == root;
  std::vector<int>& c = st.int_list(0);
  std::vector<int>& d = st.int_list(1);
  c.clear();
  d.clear();
  if (root_here) {
    mpi_counts(counts, "gatherv count", c);
    mpi_counts(displs, "gatherv displacement", d);
  }
  const int count = mpi_count(send_n, "gatherv count");
  const void* from = send ? static_cast<const void*>(send) : MPI_IN_PLACE;
  call_mpi(
      st, "gatherv", "MPI_Gatherv",
      [&] {
        return MPI_Gatherv(from, count, mpi_type<T>(), recv, c.data(), d.data(), mpi_type<T>(), root, st.comm());
      },
      [&](MPI_Request* r) {
        return MPI_Igatherv(from, count, mpi_type<T>(), recv, c.data(), d.data(), mpi_type<T>(), root, st.comm(),
                            r);
      });
}

template <class T, class MemorySpace>
void run_gatherv(comm_state& st, const T* send, std::size_t send_n, T* recv, std::span<const std::size_t> counts,
                 std::span<const std::size_t> displs, int root, comm_algorithm forced) {
  const comm_algorithm a = choose(st, {collective::gatherv, 0, 0, alignof(T)}, forced);
  switch (route_for<MemorySpace>(st, a, "gatherv")) {
    case buffer_route::host: gatherv_with<T, host_ops>(st, a, send, send_n, recv, counts, displs, root); break;
    case buffer_route::direct:
      gatherv_with<T, kernel_ops<MemorySpace>>(st, a, send, send_n, recv, counts, displs, root);
      break;
    case buffer_route::staged: {
      const bool root_here = st.rank() == root;
      if (!send) send = recv + displs[static_cast<std::size_t>(root)];
      const std::size_t zero = 0;
      staged_blocks<T, MemorySpace>(
          st, send, std::span(&send_n, 1), std::span(&zero, 1), root_here ? recv : nullptr, counts, displs,
          [&](const T* in, T* out) { gatherv_with<T, host_ops>(st, a, in, send_n, out, counts, displs, root); });
    }
  }
}

/// The gatherv members of `communicator`.
template <class Derived>
class gatherv_interface {
 public:
  /// The root receives rank r's elements at recv[displs[r]]. Parameters: `root(r)`;
  /// `send_buf(x)` (or `send_recv_buf(y)` at the root: in place at y[displs[root]]);
  /// `recv_buf(y)` (at the root); `recv_counts(c)` (one per rank, read at the root: when left
  /// out on every rank, the counts are gathered first); `recv_displs(d)` (default: packed);
  /// without recv_buf the result is returned (a View or std::vector, empty off the root);
  /// `force_algorithm(a)` (mpi, linear).
  template <class... Args>
  auto gatherv(Args&&... args) const {
    check_v_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    auto call = v_arguments(st, forced, r, args...);
    using T = typename decltype(call.out)::element_type;
    using M = typename decltype(call.out)::memory_space;
    if constexpr (has_parameter<parameter::send_buf, Args...> && !has_parameter<parameter::recv_buf, Args...>) {
      auto result = make_result(get<parameter::send_buf>(args...),
                                st.rank() == r ? extent_of(call.counts, call.displs) : 0, "hetero::gatherv");
      run_gatherv<T, M>(st, call.send, call.send_n, result.data(), call.counts, call.displs, r, forced);
      return result;
    } else {
      run_gatherv<T, M>(st, call.send, call.send_n, call.out.data, call.counts, call.displs, r, forced);
    }
  }

  /// Starts a gatherv on MPI's non-blocking call (recv_counts required; recv_buf or
  /// send_recv_buf at the root).
  template <class... Args>
  [[nodiscard]] collective_request igatherv(Args&&... args) const {
    check_v_parameters<Args...>();
    static_assert(has_parameter<parameter::recv_counts, Args...>, "hetero: igatherv needs recv_counts(...)");
    const auto& state = state_of::get(derived());
    comm_state& st = *state;
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    auto call = v_arguments(st, forced, r, args...);
    using T = typename decltype(call.out)::element_type;
    using M = typename decltype(call.out)::memory_space;
    const bool root_here = st.rank() == r;
    if (root_here && !call.out.data && extent_of(call.counts, call.displs) > 0)
      raise<invalid_argument>("igatherv: the root needs recv_buf(...) or send_recv_buf(...) for the result");
    if (forced != comm_algorithm::automatic && forced != comm_algorithm::mpi)
      raise<invalid_argument>("non-blocking gatherv runs on mpi; ", to_string(forced), " was forced");
    struct keep_alive {
      request_buffers<T> buffers;
      std::vector<std::size_t> counts, displs;
      std::vector<int> mpi_counts, mpi_displs;
    };
    auto keep = std::make_shared<keep_alive>();
    keep->counts.assign(call.counts.begin(), call.counts.end());
    keep->displs.assign(call.displs.begin(), call.displs.end());
    const T* send = call.send;
    T* recv = call.out.data;
    std::function<void()> finish;
    if (route_for<M>(st, comm_algorithm::mpi, "igatherv") == buffer_route::staged) {
      if (!send) send = recv + keep->displs[static_cast<std::size_t>(r)];
      T* host_send = keep->buffers.send.template get<T>(call.send_n + 1);
      T* host_recv =
          root_here ? keep->buffers.recv.template get<T>(extent_of(keep->counts, keep->displs) + 1) : nullptr;
      copy_between<T, Kokkos::HostSpace, M>(host_send, send, call.send_n);
      fence_copies<M>();
      if (root_here)
        finish = [recv, host_recv, k = keep.get()] {
          for (std::size_t i = 0; i < k->counts.size(); ++i)
            copy_between<T, M, Kokkos::HostSpace>(recv + k->displs[i], host_recv + k->displs[i], k->counts[i]);
          fence_copies<M>();
        };
      send = host_send;
      recv = host_recv;
    }
    if (root_here) {
      mpi_counts(keep->counts, "gatherv count", keep->mpi_counts);
      mpi_counts(keep->displs, "gatherv displacement", keep->mpi_displs);
    }
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Igatherv, send ? static_cast<const void*>(send) : MPI_IN_PLACE,
                     mpi_count(call.send_n, "gatherv count"), mpi_type<T>(), recv, keep->mpi_counts.data(),
                     keep->mpi_displs.data(), mpi_type<T>(), r, st.comm(), &request);
    return request_access::mpi(state, request, "igatherv", std::move(finish), keep);
  }

 private:
  template <class T, class M>
  struct v_call {
    const T* send = nullptr;  // null in place
    std::size_t send_n = 0;
    buffer_ref<T, M> out;                         // at the root
    std::span<const std::size_t> counts, displs;  // at the root (the communicator's lists)
  };

  template <class... Args>
  static constexpr void check_v_parameters() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::recv_counts, parameter::recv_displs, parameter::root,
                                            parameter::algorithm}),
                  "hetero: gatherv takes send_buf, recv_buf, send_recv_buf, recv_counts, recv_displs, root and "
                  "force_algorithm");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: gatherv needs send_buf(...) or, at the root, send_recv_buf(...)");
    static_assert(
        !has_parameter<parameter::send_recv_buf, Args...> || has_parameter<parameter::recv_counts, Args...>,
        "hetero: gatherv in place (send_recv_buf) needs recv_counts(...)");
  }

  // The checked buffers, counts and displacements (counts gathered when not given).
  template <class... Args>
  static auto v_arguments(comm_state& st, comm_algorithm forced, int r, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    static_assert(comm_buffer<S>, "hetero: gatherv's buffers are Views, contiguous ranges or values");
    auto& source = get < in_place ? parameter::send_recv_buf : parameter::send_buf > (args...);
    const bool root_here = st.rank() == r;
    buffer_ref<const T, M> in;
    v_call<T, M> call;
    std::vector<std::size_t>& counts = st.size_list(0);
    std::vector<std::size_t>& displs = st.size_list(1);
    counts.clear();
    displs.clear();
    auto& out = call.out;
    // Checks that need the counts (at the root): after the counts are known.
    const auto check_counts = [&] {
      if (!root_here) return;
      if constexpr (has_parameter<parameter::recv_displs, Args...>)
        to_sizes(get<parameter::recv_displs>(args...), counts.size(), "gatherv", "recv_displs", displs);
      else
        packed_displs(counts, displs);
      if constexpr (in_place) {
        call.send_n = counts[static_cast<std::size_t>(r)];
        require_size(out, extent_of(counts, displs), "gatherv", "send_recv_buf", "recv_counts and recv_displs");
      } else {
        if (counts[static_cast<std::size_t>(r)] != call.send_n)
          raise<invalid_argument>("gatherv: recv_counts[root] is ", counts[static_cast<std::size_t>(r)],
                                  " but the root sends ", call.send_n, " element(s)");
        if constexpr (has_parameter<parameter::recv_buf, Args...>) {
          using B = argument_t<parameter::recv_buf, Args...>;
          static_assert(comm_buffer<B> && writable_argument<B>() && std::is_same_v<buffer_element_t<B>, T> &&
                            std::is_same_v<buffer_space_t<B>, M>,
                        "hetero: recv_buf must be a writable buffer of send_buf's element type and memory space");
          out = as_buffer(get<parameter::recv_buf>(args...), "gatherv", "recv_buf");
          require_size(out, extent_of(counts, displs), "gatherv", "recv_buf", "recv_counts and recv_displs");
        }
      }
    };
    const call_signature signature{collective::gatherv, 0, r, -1, static_cast<int>(forced)};
    checked_call(st, collective::gatherv, [&](call_signature& s) {
      s = signature;
      check_root(st, r, "gatherv");
      if constexpr (in_place) {
        static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
        if (!root_here) raise<invalid_argument>("gatherv: send_recv_buf (in place) is for the root only");
        out = as_buffer(source, "gatherv", "send_recv_buf");
      } else {
        in = as_buffer(source, "gatherv", "send_buf");
        call.send_n = in.size;
      }
      if constexpr (has_parameter<parameter::recv_counts, Args...>) {
        if (root_here)
          to_sizes(get<parameter::recv_counts>(args...), static_cast<std::size_t>(st.size()), "gatherv",
                   "recv_counts", counts);
        check_counts();
      }
    });
    if constexpr (!has_parameter<parameter::recv_counts, Args...>) {
      const unsigned long long mine = call.send_n;
      std::vector<unsigned long long> all(root_here ? static_cast<std::size_t>(st.size()) : 0);
      run_gather<unsigned long long, Kokkos::HostSpace>(st, &mine, all.data(), 1, r, comm_algorithm::automatic);
      counts.assign(all.begin(), all.end());
      checked_call(st, collective::gatherv, [&](call_signature& s) {
        s = signature;
        check_counts();
      });
    }
    call.send = in_place ? nullptr : non_null(in.data);
    call.counts = counts;
    call.displs = displs;
    return call;
  }

  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_GATHERV_HPP

/// @file
/// `communicator::scatterv` and `iscatterv`: counts[r] elements at displs[r] of the root's
/// buffer to rank r.
#ifndef HETERO_COMM_SCATTERV_HPP
#define HETERO_COMM_SCATTERV_HPP

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
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/request.hpp"

namespace hetero::detail {
/// The root's slot for the blocks that fit a rank's region of it, messages for the others.
template <class T>
void hybrid_scatterv(comm_state& st, const T* send, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs, T* recv, std::size_t recv_n, int root) {
  shm_scatterv<T> operation(*st.shm(), send, counts, displs, recv, recv_n, root);
  p2p_batch<T> batch(st, collective::scatterv);
  if (st.rank() == root) {
    for (int r = 0; r < st.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r != root && !operation.fits(counts[i])) batch.send(send + displs[i], counts[i], r);
    }
  } else if (!operation.fits(recv_n)) {
    batch.recv(recv, recv_n, root);
  }
  run_blocking(*st.shm(), operation, "scatterv");
  batch.wait();
}

template <class T, class Ops>
void scatterv_with(comm_state& st, comm_algorithm a, const T* send, std::span<const std::size_t> counts,
                   std::span<const std::size_t> displs, T* recv, std::size_t recv_n, int root) {
  if (a == comm_algorithm::linear) return linear_scatterv<T, Ops>(st, send, counts, displs, recv, recv_n, root);
  if (a == comm_algorithm::shm) return hybrid_scatterv(st, send, counts, displs, recv, recv_n, root);
  const bool root_here = st.rank() == root;
  std::vector<int>& c = st.int_list(0);
  std::vector<int>& d = st.int_list(1);
  c.clear();
  d.clear();
  if (root_here) {
    mpi_counts(counts, "scatterv count", c);
    mpi_counts(displs, "scatterv displacement", d);
  }
  const int count = mpi_count(recv_n, "scatterv count");
  void* to = recv ? static_cast<void*>(recv) : MPI_IN_PLACE;
  call_mpi(
      st, "scatterv", "MPI_Scatterv",
      [&] {
        return MPI_Scatterv(send, c.data(), d.data(), mpi_type<T>(), to, count, mpi_type<T>(), root, st.comm());
      },
      [&](MPI_Request* r) {
        return MPI_Iscatterv(send, c.data(), d.data(), mpi_type<T>(), to, count, mpi_type<T>(), root, st.comm(),
                             r);
      });
}

template <class T, class MemorySpace>
void run_scatterv(comm_state& st, const T* send, std::span<const std::size_t> counts,
                  std::span<const std::size_t> displs, T* recv, std::size_t recv_n, int root,
                  comm_algorithm forced) {
  const comm_algorithm a = choose(st, {collective::scatterv, 0, 0, alignof(T)}, forced);
  switch (route_for<MemorySpace>(st, a, "scatterv")) {
    case buffer_route::host: scatterv_with<T, host_ops>(st, a, send, counts, displs, recv, recv_n, root); break;
    case buffer_route::direct:
      scatterv_with<T, kernel_ops<MemorySpace>>(st, a, send, counts, displs, recv, recv_n, root);
      break;
    case buffer_route::staged: {
      const std::size_t zero = 0;
      staged_blocks<T, MemorySpace>(
          st, st.rank() == root ? send : nullptr, counts, displs, recv, std::span(&recv_n, 1), std::span(&zero, 1),
          [&](const T* in, T* out) { scatterv_with<T, host_ops>(st, a, in, counts, displs, out, recv_n, root); });
    }
  }
}

/// The scatterv members of `communicator`.
template <class Derived>
class scatterv_interface {
 public:
  /// Rank r receives counts[r] elements from the root's send + displs[r]. Parameters:
  /// `root(r)`; at the root `send_buf(x)` (or `send_recv_buf(x)`: in place, its own part
  /// stays), `send_counts(c)` and `send_displs(d)` (default: packed); everywhere `recv_buf(y)`
  /// (n = its size, or `recv_count(n)`; not at an in-place root); `force_algorithm(a)` (mpi,
  /// linear).
  template <class... Args>
  void scatterv(Args&&... args) const {
    check_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    auto call = arguments(st, forced, r, args...);
    using T = typename decltype(call.in)::element_type;
    using M = typename decltype(call.in)::memory_space;
    run_scatterv<T, M>(st, call.in.data, call.counts, call.displs, call.recv, call.recv_n, r, forced);
  }

  /// Starts a scatterv on MPI (same parameters). Buffers must stay alive until done.
  template <class... Args>
  [[nodiscard]] collective_request iscatterv(Args&&... args) const {
    check_parameters<Args...>();
    const auto& state = state_of::get(derived());
    comm_state& st = *state;
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    const int r = get_or<parameter::root>(0, args...);
    auto call = arguments(st, forced, r, args...);
    using T = typename decltype(call.in)::element_type;
    using M = typename decltype(call.in)::memory_space;
    if (forced != comm_algorithm::automatic && forced != comm_algorithm::mpi)
      raise<invalid_argument>("non-blocking scatterv runs on mpi; ", to_string(forced), " was forced");
    const bool root_here = st.rank() == r;
    struct keep_alive {
      request_buffers<T> buffers;
      std::vector<int> mpi_counts, mpi_displs;
    };
    auto keep = std::make_shared<keep_alive>();
    const T* send = call.in.data;
    T* recv = call.recv;
    std::function<void()> finish;
    if (route_for<M>(st, comm_algorithm::mpi, "iscatterv") == buffer_route::staged) {
      T* host_send = nullptr;
      if (root_here) {
        host_send = keep->buffers.send.template get<T>(extent_of(call.counts, call.displs) + 1);
        for (std::size_t i = 0; i < call.counts.size(); ++i)
          copy_between<T, Kokkos::HostSpace, M>(host_send + call.displs[i], send + call.displs[i], call.counts[i]);
      }
      T* host_recv = recv ? keep->buffers.recv.template get<T>(call.recv_n + 1) : nullptr;
      fence_copies<M>();
      if (recv)
        finish = [recv, host_recv, n = call.recv_n] {
          copy_between<T, M, Kokkos::HostSpace>(recv, host_recv, n);
          fence_copies<M>();
        };
      send = host_send;
      recv = host_recv;
    }
    if (root_here) {
      mpi_counts(call.counts, "scatterv count", keep->mpi_counts);
      mpi_counts(call.displs, "scatterv displacement", keep->mpi_displs);
    }
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Iscatterv, send, keep->mpi_counts.data(), keep->mpi_displs.data(), mpi_type<T>(),
                     recv ? static_cast<void*>(recv) : MPI_IN_PLACE, mpi_count(call.recv_n, "scatterv count"),
                     mpi_type<T>(), r, st.comm(), &request);
    return request_access::mpi(state, request, "iscatterv", std::move(finish), keep);
  }

 private:
  template <class T, class M>
  struct call_arguments {
    buffer_ref<const T, M> in;                    // at the root
    std::span<const std::size_t> counts, displs;  // at the root (the communicator's lists)
    T* recv = nullptr;                            // null at an in-place root
    std::size_t recv_n = 0;
  };

  template <class... Args>
  static constexpr void check_parameters() {
    static_assert(
        only_parameters<Args...>({parameter::send_buf, parameter::send_recv_buf, parameter::recv_buf,
                                  parameter::send_counts, parameter::send_displs, parameter::recv_count,
                                  parameter::root, parameter::algorithm}),
        "hetero: scatterv takes send_buf, send_recv_buf, recv_buf, send_counts, send_displs, recv_count, "
        "root and force_algorithm");
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: scatterv needs recv_buf(...) (or send_recv_buf(...) at the root)");
  }

  template <class... Args>
  static auto arguments(comm_state& st, comm_algorithm forced, int r, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using B = argument_t<in_place ? parameter::send_recv_buf : parameter::recv_buf, Args...>;
    using T = buffer_element_t<B>;
    using M = buffer_space_t<B>;
    static_assert(comm_buffer<B> && writable_argument<B>(),
                  "hetero: scatterv's buffers are writable Views, ranges or values");
    const bool root_here = st.rank() == r;
    call_arguments<T, M> call;
    buffer_ref<T, M> out;
    std::vector<std::size_t>& counts = st.size_list(0);
    std::vector<std::size_t>& displs = st.size_list(1);
    counts.clear();
    displs.clear();
    checked_call(st, collective::scatterv, [&](call_signature& s) {
      s = {collective::scatterv, 0, r, -1, static_cast<int>(forced)};
      check_root(st, r, "scatterv");
      if constexpr (in_place) {
        if (!root_here) raise<invalid_argument>("scatterv: send_recv_buf (in place) is for the root only");
        call.in = as_buffer(get<parameter::send_recv_buf>(args...), "scatterv", "send_recv_buf");
      } else {
        out = as_buffer(get<parameter::recv_buf>(args...), "scatterv", "recv_buf");
        call.recv_n = get_or<parameter::recv_count>(out.size, args...);
        require_size(out, call.recv_n, "scatterv", "recv_buf", "recv_count");
      }
      if (!root_here) return;
      if constexpr (has_parameter<parameter::send_buf, Args...>) {
        using S = argument_t<parameter::send_buf, Args...>;
        static_assert(
            comm_buffer<S> && std::is_same_v<buffer_element_t<S>, T> && std::is_same_v<buffer_space_t<S>, M>,
            "hetero: send_buf and recv_buf must hold the same element type in the same memory space");
        call.in = as_buffer(get<parameter::send_buf>(args...), "scatterv", "send_buf");
      } else if constexpr (!in_place) {
        raise<invalid_argument>("scatterv: the root needs send_buf(...)");
      }
      if constexpr (has_parameter<parameter::send_counts, Args...>)
        to_sizes(get<parameter::send_counts>(args...), static_cast<std::size_t>(st.size()), "scatterv",
                 "send_counts", counts);
      else
        raise<invalid_argument>("scatterv: the root needs send_counts(...)");
      if constexpr (has_parameter<parameter::send_displs, Args...>)
        to_sizes(get<parameter::send_displs>(args...), counts.size(), "scatterv", "send_displs", displs);
      else
        packed_displs(counts, displs);
      require_size(call.in, extent_of(counts, displs), "scatterv", in_place ? "send_recv_buf" : "send_buf",
                   "send_counts and send_displs");
      if (in_place) call.recv_n = counts[static_cast<std::size_t>(r)];
      if (counts[static_cast<std::size_t>(r)] != call.recv_n)
        raise<invalid_argument>("scatterv: send_counts[root] is ", counts[static_cast<std::size_t>(r)],
                                " but the root receives ", call.recv_n, " element(s)");
    });
    call.counts = counts;
    call.displs = displs;
    call.recv = in_place ? nullptr : non_null(out.data);
    return call;
  }

  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_SCATTERV_HPP

/// @file
/// `communicator::allgatherv` and `iallgatherv`: every rank's block, of its own size, on every
/// rank at the displacement given for it.
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
#include "hetero/comm/buffer.hpp"
#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/detail/interface.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/mpi_type.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/comm/detail/symmetric_algorithms.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/request.hpp"

namespace hetero::detail {

template <class T, class Ops>
void allgatherv_with(comm_state& st, comm_algorithm a, const T* send, T* recv, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs) {
  switch (a) {
    case comm_algorithm::shm: {
      shm_allgatherv<T> operation(*st.shm(), send, recv, counts, displs);
      run_blocking(*st.shm(), operation, "allgatherv");
      return;
    }
    case comm_algorithm::ring: ring_allgatherv<T, Ops>(st, send, recv, counts, displs); return;
    default: {
      if (st.size() == 1) {  // MPICH 4.0.2's MPI_Allgatherv ignores the displacement on one rank
        if (send) Ops::copy(recv + displs[0], send, counts[0]);
        return;
      }
      const std::vector<int>& c = mpi_counts(counts, "allgatherv count", st.int_list(0));
      const std::vector<int>& d = mpi_counts(displs, "allgatherv displacement", st.int_list(1));
      const int count = c[static_cast<std::size_t>(st.rank())];
      const void* from = send ? static_cast<const void*>(send) : MPI_IN_PLACE;
      call_mpi(
          st, "allgatherv", "MPI_Allgatherv",
          [&] {
            return MPI_Allgatherv(from, count, mpi_type<T>(), recv, c.data(), d.data(), mpi_type<T>(), st.comm());
          },
          [&](MPI_Request* r) {
            return MPI_Iallgatherv(from, count, mpi_type<T>(), recv, c.data(), d.data(), mpi_type<T>(), st.comm(),
                                   r);
          });
    }
  }
}

inline std::size_t max_count(std::span<const std::size_t> counts) {
  std::size_t m = 0;
  for (std::size_t c : counts) m = std::max(m, c);
  return m;
}

template <class T, class MemorySpace>
void run_allgatherv(comm_state& st, const T* send, T* recv, std::span<const std::size_t> counts,
                    std::span<const std::size_t> displs, comm_algorithm forced) {
  // Keyed on the largest block: every rank knows every count, so every rank chooses alike.
  const std::size_t bytes = max_count(counts) * sizeof(T);
  const comm_algorithm a = choose(st, {collective::allgatherv, bytes, bytes, alignof(T)}, forced);
  switch (route_for<MemorySpace>(st, a, "allgatherv")) {
    case buffer_route::host: allgatherv_with<T, host_ops>(st, a, send, recv, counts, displs); break;
    case buffer_route::direct:
      allgatherv_with<T, kernel_ops<MemorySpace>>(st, a, send, recv, counts, displs);
      break;
    case buffer_route::staged: {
      const auto me = static_cast<std::size_t>(st.rank());
      if (!send) send = recv + displs[me];
      const std::size_t zero = 0;
      staged_blocks<T, MemorySpace>(
          st, send, counts.subspan(me, 1), std::span(&zero, 1), recv, counts, displs,
          [&](const T* in, T* out) { allgatherv_with<T, host_ops>(st, a, in, out, counts, displs); });
    }
  }
}

/// The allgatherv members of `communicator`.
template <class Derived>
class allgatherv_interface {
 public:
  /// Every rank receives rank r's elements at recv[displs[r]]. Parameters: `send_buf(x)` with
  /// `recv_buf(y)`, or `send_recv_buf(y)` (in place at y[displs[rank]]), or only `send_buf(x)`
  /// (the result is returned); `recv_counts(c)` (one per rank, the same on every rank; when
  /// left out on every rank, the counts are exchanged first); `recv_displs(d)` (default:
  /// packed); `force_algorithm(a)` (mpi, shm, ring).
  template <class... Args>
  auto allgatherv(Args&&... args) const {
    check_v_parameters<Args...>();
    comm_state& st = *state_of::get(derived());
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    auto call = v_arguments(st, forced, args...);
    using T = typename decltype(call.out)::element_type;
    using M = typename decltype(call.out)::memory_space;
    if constexpr (has_parameter<parameter::send_buf, Args...> && !has_parameter<parameter::recv_buf, Args...>) {
      auto result = make_result(get<parameter::send_buf>(args...), extent_of(call.counts, call.displs),
                                "hetero::allgatherv");
      run_allgatherv<T, M>(st, call.send, result.data(), call.counts, call.displs, forced);
      return result;
    } else {
      run_allgatherv<T, M>(st, call.send, call.out.data, call.counts, call.displs, forced);
    }
  }

  /// Starts an allgatherv (recv_counts and recv_buf or send_recv_buf required; algorithm shm
  /// or mpi). The buffers and counts are copied where needed; the buffers must stay alive.
  template <class... Args>
  [[nodiscard]] collective_request iallgatherv(Args&&... args) const {
    check_v_parameters<Args...>();
    static_assert(has_parameter<parameter::recv_counts, Args...>, "hetero: iallgatherv needs recv_counts(...)");
    static_assert(has_parameter<parameter::recv_buf, Args...> || has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: iallgatherv needs recv_buf(...) or send_recv_buf(...): the result outlives the call");
    const auto& state = state_of::get(derived());
    comm_state& st = *state;
    const auto forced = get_or<parameter::algorithm>(comm_algorithm::automatic, args...);
    auto call = v_arguments(st, forced, args...);
    using T = typename decltype(call.out)::element_type;
    using M = typename decltype(call.out)::memory_space;
    const std::size_t bytes = max_count(call.counts) * sizeof(T);
    const comm_algorithm a = choose_nonblocking(st, {collective::allgatherv, bytes, bytes, alignof(T)}, forced);
    struct keep_alive {
      request_buffers<T> buffers;
      std::vector<std::size_t> counts, displs;
      std::vector<int> mpi_counts, mpi_displs;
    };
    auto keep = std::make_shared<keep_alive>();
    keep->counts.assign(call.counts.begin(), call.counts.end());
    keep->displs.assign(call.displs.begin(), call.displs.end());
    const auto me = static_cast<std::size_t>(st.rank());
    const T* send = call.send;
    T* recv = call.out.data;
    std::function<void()> finish;
    if (route_for<M>(st, a, "iallgatherv") == buffer_route::staged) {
      if (!send) send = recv + keep->displs[me];
      const std::size_t extent = extent_of(keep->counts, keep->displs);
      T* host_send = keep->buffers.send.template get<T>(keep->counts[me] + 1);
      T* host_recv = keep->buffers.recv.template get<T>(extent + 1);
      copy_between<T, Kokkos::HostSpace, M>(host_send, send, keep->counts[me]);
      fence_copies<M>();
      finish = [recv, host_recv, k = keep.get()] {
        for (std::size_t r = 0; r < k->counts.size(); ++r)
          copy_between<T, M, Kokkos::HostSpace>(recv + k->displs[r], host_recv + k->displs[r], k->counts[r]);
        fence_copies<M>();
      };
      send = host_send;
      recv = host_recv;
    }
    if (a == comm_algorithm::shm)
      return request_access::shm(
          state, start_queued<shm_allgatherv<T>>(*st.shm(), send, recv, keep->counts, keep->displs), "iallgatherv",
          std::move(finish), keep);
    if (st.size() == 1) {  // MPICH 4.0.2's MPI_Allgatherv ignores the displacement on one rank
      if (send)
        copy_between<T, Kokkos::HostSpace, Kokkos::HostSpace>(recv + keep->displs[0], send, keep->counts[0]);
      if (finish) finish();
      return {};
    }
    mpi_counts(keep->counts, "allgatherv count", keep->mpi_counts);
    mpi_counts(keep->displs, "allgatherv displacement", keep->mpi_displs);
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Iallgatherv, send ? static_cast<const void*>(send) : MPI_IN_PLACE, keep->mpi_counts[me],
                     mpi_type<T>(), recv, keep->mpi_counts.data(), keep->mpi_displs.data(), mpi_type<T>(),
                     st.comm(), &request);
    return request_access::mpi(state, request, "iallgatherv", std::move(finish), keep);
  }

 private:
  template <class T, class M>
  struct v_call {
    const T* send = nullptr;  // null in place
    buffer_ref<T, M> out;
    std::span<const std::size_t> counts, displs;  // the communicator's lists
  };

  template <class... Args>
  static constexpr void check_v_parameters() {
    static_assert(only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                            parameter::recv_counts, parameter::recv_displs, parameter::algorithm}),
                  "hetero: allgatherv takes send_buf, recv_buf, send_recv_buf, recv_counts, recv_displs and "
                  "force_algorithm");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: allgatherv needs send_buf(...) or send_recv_buf(...)");
    static_assert(
        !has_parameter<parameter::send_recv_buf, Args...> || has_parameter<parameter::recv_counts, Args...>,
        "hetero: allgatherv in place (send_recv_buf) needs recv_counts(...)");
  }

  // The checked buffers, counts and displacements of an allgatherv (counts exchanged when not
  // given).
  template <class... Args>
  static auto v_arguments(comm_state& st, comm_algorithm forced, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    using S = argument_t<in_place ? parameter::send_recv_buf : parameter::send_buf, Args...>;
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    static_assert(comm_buffer<S>, "hetero: allgatherv's buffers are Views, contiguous ranges or values");
    auto& source = get < in_place ? parameter::send_recv_buf : parameter::send_buf > (args...);
    const auto me = static_cast<std::size_t>(st.rank());
    buffer_ref<const T, M> in;
    v_call<T, M> call;
    std::vector<std::size_t>& counts = st.size_list(0);
    std::vector<std::size_t>& displs = st.size_list(1);
    auto& out = call.out;
    const auto check_counts = [&] {
      if constexpr (has_parameter<parameter::recv_displs, Args...>)
        to_sizes(get<parameter::recv_displs>(args...), counts.size(), "allgatherv", "recv_displs", displs);
      else
        packed_displs(counts, displs);
      if constexpr (in_place) {
        require_size(out, extent_of(counts, displs), "allgatherv", "send_recv_buf", "recv_counts and recv_displs");
      } else {
        if (counts[me] != in.size)
          raise<invalid_argument>("allgatherv: recv_counts[", me, "] is ", counts[me], " but this rank sends ",
                                  in.size, " element(s)");
        if constexpr (has_parameter<parameter::recv_buf, Args...>) {
          using B = argument_t<parameter::recv_buf, Args...>;
          static_assert(comm_buffer<B> && writable_argument<B>() && std::is_same_v<buffer_element_t<B>, T> &&
                            std::is_same_v<buffer_space_t<B>, M>,
                        "hetero: recv_buf must be a writable buffer of send_buf's element type and memory space");
          out = as_buffer(get<parameter::recv_buf>(args...), "allgatherv", "recv_buf");
          require_size(out, extent_of(counts, displs), "allgatherv", "recv_buf", "recv_counts and recv_displs");
        }
      }
    };
    const call_signature signature{collective::allgatherv, 0, -1, -1, static_cast<int>(forced)};
    checked_call(st, collective::allgatherv, [&](call_signature& s) {
      s = signature;
      if constexpr (in_place) {
        static_assert(writable_argument<S>(), "hetero: send_recv_buf takes a View or a non-const lvalue");
        out = as_buffer(source, "allgatherv", "send_recv_buf");
      } else {
        in = as_buffer(source, "allgatherv", "send_buf");
      }
      if constexpr (has_parameter<parameter::recv_counts, Args...>) {
        to_sizes(get<parameter::recv_counts>(args...), static_cast<std::size_t>(st.size()), "allgatherv",
                 "recv_counts", counts);
        check_counts();
      }
    });
    if constexpr (!has_parameter<parameter::recv_counts, Args...>) {
      const unsigned long long mine = in.size;
      std::vector<unsigned long long> all(static_cast<std::size_t>(st.size()));
      run_allgather<unsigned long long, Kokkos::HostSpace>(st, &mine, all.data(), 1, comm_algorithm::automatic);
      counts.assign(all.begin(), all.end());
      checked_call(st, collective::allgatherv, [&](call_signature& s) {
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

#endif  // HETERO_COMM_ALLGATHERV_HPP

/// @file
/// What the two reductions (allreduce, reduce) take and how they read it: send_buf (with or
/// without recv_buf) or send_recv_buf, op, force_algorithm, and for reduce the root, which alone
/// receives. Their shapes inherit check() and parse() from here.
#ifndef HETERO_COMM_DETAIL_REDUCTION_ARGUMENTS_HPP
#define HETERO_COMM_DETAIL_REDUCTION_ARGUMENTS_HPP

#include <type_traits>

#include "hetero/comm/detail/skeleton.hpp"

namespace hetero::detail {

template <collective Kind, bool Rooted>
struct reduction_arguments {
  template <class... Args>
  static constexpr void check() {
    static_assert(
        only_parameters<Args...>({parameter::send_buf, parameter::recv_buf, parameter::send_recv_buf,
                                  parameter::op, parameter::algorithm, Rooted ? parameter::root : parameter::op}),
        "hetero: allreduce takes send_buf, recv_buf, send_recv_buf, op and force_algorithm, each once; "
        "reduce takes root as well");
    static_assert(has_parameter<parameter::op, Args...>,
                  "hetero: a reduction needs op(...), e.g. hetero::op(hetero::ops::sum{})");
    static_assert(has_parameter<parameter::send_buf, Args...> != has_parameter<parameter::send_recv_buf, Args...>,
                  "hetero: a reduction needs send_buf(...) (with or without recv_buf) or send_recv_buf(...)");
    static_assert(
        !(has_parameter<parameter::recv_buf, Args...> && has_parameter<parameter::send_recv_buf, Args...>),
        "hetero: recv_buf and send_recv_buf exclude each other");
  }

  template <class... Args>
  static auto parse(comm_state& st, const call_options& o, Args&... args) {
    constexpr bool in_place = has_parameter<parameter::send_recv_buf, Args...>;
    constexpr parameter source = in_place ? parameter::send_recv_buf : parameter::send_buf;
    using S = argument_t<source, Args...>;
    static_assert(comm_buffer<S>, "hetero: send_buf takes a Kokkos View, a contiguous range or one value");
    static_assert(!in_place || writable_argument<S>(),
                  "hetero: send_recv_buf takes a View or a non-const lvalue range or value");
    using T = buffer_element_t<S>;
    using M = buffer_space_t<S>;
    using R = std::remove_cvref_t<decltype(get<parameter::op>(args...))>;
    static_assert(reduction_operation<R, T>,
                  "hetero: op's function must take two elements and return one convertible to the element type");
    auto call = new_call<T, M, R>(o);
    call.reduction = &get<parameter::op>(args...);
    const auto check = [&](call_signature& s) {
      if constexpr (Rooted) check_root(st, o.root, o.what);
      if constexpr (in_place) {
        const auto data = as_buffer(get<source>(args...), o.what, "send_recv_buf");
        call.send = call.recv = data.data;
        call.n = data.size;
      } else {
        const auto in = as_buffer(get<source>(args...), o.what, "send_buf");
        call.send = in.data;
        call.n = in.size;
        if (!Rooted || st.rank() == o.root) {
          const auto out = optional_recv_buf<T, M>(o.what, args...);
          if constexpr (has_parameter<parameter::recv_buf, Args...>)
            require_size(out, in.size, o.what, "recv_buf", "the send_buf's count");
          call.recv = out.data;
        }
      }
      s = {Kind,
           static_cast<long long>(call.n),
           Rooted ? o.root : -1,
           static_cast<int>(R::builtin),
           static_cast<int>(o.forced),
           sizeof(T)};
    };
    // A small reduction with a built-in operation on host memory travels inline with the
    // records where the ranks agree by message, and is then reduced where it arrives, in rank
    // order (the shape's `run_inline`).
    const auto offer = [&] {
      if constexpr (!user_operation<R> && host_memory<M>) {
        const std::size_t bytes = call.n * sizeof(T);
        if (o.forced == comm_algorithm::automatic)
          return inline_offer{call.send, bytes, true, bytes * static_cast<std::size_t>(st.size())};
      }
      return inline_offer{};
    };
    if constexpr (user_operation<R>) {
      // The others settle the reduction (`run_parsed`) once they have seen this rank's rejection:
      // this rank joins them, or they would wait for it in the settling allreduce.
      (void)offer;  // a user's operation may throw: not reduced inline
      try {
        checked_call(st, o, Kind, check);
      } catch (const error&) {
        if (!rejection_settles(st, o, Kind)) throw;
        op_failure failure;
        failure.record(std::current_exception());
        settle_reduction(st, Kind, failure);
        throw;  // not reached: settle_reduction raised the recorded error
      }
    } else {
      checked_call(st, o, Kind, check, offer);
    }
    return call;
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_REDUCTION_ARGUMENTS_HPP

/// @file
/// Named parameters of the collectives, given in any order:
/// <!-- snippet: fragment
/// hetero::communicator comm;
/// double local = 1, global = 0, x = 2;
/// Kokkos::View<double*> view("view", 8);
/// -->
/// @code
/// comm.allreduce(hetero::send_buf(local), hetero::recv_buf(global), hetero::op(hetero::ops::sum{}));
/// comm.broadcast(hetero::send_recv_buf(view), hetero::root(2));
/// double total = comm.allreduce(hetero::send_buf(x), hetero::op(hetero::ops::max{}));
/// @endcode
/// Each collective states which parameters it takes; a missing, repeated or foreign one fails
/// to compile with a message that starts with "hetero:".
#ifndef HETERO_COMM_PARAMETERS_HPP
#define HETERO_COMM_PARAMETERS_HPP

#include <cstddef>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/reduce_ops.hpp"
#include "hetero/core/error.hpp"

namespace hetero {

/// What a named parameter is.
enum class parameter {
  send_buf,       ///< data this rank sends (read only)
  recv_buf,       ///< where this rank receives
  send_recv_buf,  ///< in place: data this rank sends and where it receives
  root,           ///< the root rank of a rooted collective (default 0)
  op,             ///< the reduction operation
  send_counts,    ///< scatterv: elements for each rank (root)
  send_displs,    ///< scatterv: offset of each rank's elements in send_buf (root)
  recv_counts,    ///< gatherv, allgatherv: elements from each rank
  recv_displs,    ///< gatherv, allgatherv: offset of each rank's elements in recv_buf
  recv_count,     ///< scatter(v): elements this rank receives (default: recv_buf's size)
  send_count,     ///< gather, allgather: elements this rank sends (default: send_buf's size)
  algorithm       ///< forces one algorithm instead of the tuned choice
};

namespace detail {

/// A parameter: its kind and its value (a reference for lvalues, a value for temporaries).
template <parameter P, class T>
struct named_parameter {
  static constexpr parameter kind = P;
  using value_type = T;  ///< a reference for lvalues, a value for temporaries
  T value;
};

template <class A>
struct is_named_parameter : std::false_type {};
template <parameter P, class T>
struct is_named_parameter<named_parameter<P, T>> : std::true_type {};

template <class A>
concept named_argument = is_named_parameter<std::remove_cvref_t<A>>::value;

template <parameter P, class... Args>
constexpr int count_of() {
  return (0 + ... + (std::remove_cvref_t<Args>::kind == P ? 1 : 0));
}

/// True when a parameter of kind `P` is among `Args`.
template <parameter P, class... Args>
constexpr bool has_parameter = count_of<P, Args...>() > 0;

/// True when every argument is a named parameter, of one of the kinds `allowed`, at most once.
template <class... Args>
constexpr bool only_parameters(std::initializer_list<parameter> allowed) {
  if constexpr (!(named_argument<Args> && ...)) {
    return false;
  } else if constexpr (sizeof...(Args) == 0) {
    return true;
  } else {
    constexpr parameter given[] = {std::remove_cvref_t<Args>::kind...};
    for (std::size_t i = 0; i < sizeof...(Args); ++i) {
      bool ok = false;
      for (parameter a : allowed) ok = ok || a == given[i];
      for (std::size_t j = i + 1; j < sizeof...(Args); ++j) ok = ok && given[j] != given[i];
      if (!ok) return false;
    }
    return true;
  }
}

template <parameter P, class... Args>
constexpr std::size_t index_of() {
  constexpr parameter given[] = {std::remove_cvref_t<Args>::kind..., P};
  std::size_t i = 0;
  while (given[i] != P) ++i;
  return i;
}

/// The type the parameter of kind `P` among `Args` holds (`B&` for an lvalue `B`, `B` for a
/// temporary).
template <parameter P, class... Args>
using argument_t =
    typename std::remove_cvref_t<std::tuple_element_t<index_of<P, Args...>(), std::tuple<Args...>>>::value_type;

/// The value of the parameter of kind `P` (which must be among `args`).
template <parameter P, class... Args>
decltype(auto) get(Args&... args) {
  static_assert(has_parameter<P, Args...>, "hetero: internal: parameter looked up but not given");
  return (std::get<index_of<P, Args...>()>(std::tie(args...)).value);
}

/// The value of the parameter of kind `P`, or `fallback` when it was not given.
template <parameter P, class Fallback, class... Args>
auto get_or(Fallback fallback, Args&... args) {
  if constexpr (has_parameter<P, Args...>) {
    return static_cast<Fallback>(get<P>(args...));
  } else {
    return fallback;
  }
}

template <parameter P, class T>
auto make_parameter(T&& value) {
  return named_parameter<P, T>{std::forward<T>(value)};
}

}  // namespace detail

/// The data this rank contributes (a View, a contiguous range or one value; read only).
template <class B>
auto send_buf(B&& buffer) {
  return detail::make_parameter<parameter::send_buf>(std::forward<B>(buffer));
}

/// Where this rank receives (a writable View, contiguous range or value, large enough).
template <class B>
auto recv_buf(B&& buffer) {
  return detail::make_parameter<parameter::recv_buf>(std::forward<B>(buffer));
}

/// In place: the buffer holds this rank's data on entry and the result on return.
template <class B>
auto send_recv_buf(B&& buffer) {
  return detail::make_parameter<parameter::send_recv_buf>(std::forward<B>(buffer));
}

/// The root rank of broadcast, scatter(v), gather(v) and reduce (default 0).
inline auto root(int rank) { return detail::named_parameter<parameter::root, int>{rank}; }

/// The reduction: `op(hetero::ops::sum{})`, or a user functor, taken as non-commutative unless
/// tagged: `op(f, hetero::ops::commutative)`. `ops::sum` and `ops::prod` reorder operands of
/// numbers only; on a class type tag them `ops::commutative` if its operator commutes.
template <class F>
auto op(F&& f) {
  using reduction = detail::reduction<std::remove_cvref_t<F>, detail::is_builtin_op_v<F>>;
  return detail::named_parameter<parameter::op, reduction>{reduction{std::forward<F>(f)}};
}

/// A reduction whose operands may be reordered (enables more algorithms).
template <class F>
auto op(F&& f, ops::commutative_t) {
  using reduction = detail::reduction<std::remove_cvref_t<F>, true, true>;
  return detail::named_parameter<parameter::op, reduction>{reduction{std::forward<F>(f)}};
}

/// A reduction whose operands must stay in rank order.
template <class F>
auto op(F&& f, ops::non_commutative_t) {
  using reduction = detail::reduction<std::remove_cvref_t<F>, false, true>;
  return detail::named_parameter<parameter::op, reduction>{reduction{std::forward<F>(f)}};
}

/// scatterv (root): how many elements each rank receives (a range of integers, one per rank).
template <class R>
auto send_counts(R&& counts) {
  return detail::make_parameter<parameter::send_counts>(std::forward<R>(counts));
}

/// scatterv (root): where each rank's elements start in send_buf (default: packed in rank order).
template <class R>
auto send_displs(R&& displs) {
  return detail::make_parameter<parameter::send_displs>(std::forward<R>(displs));
}

/// gatherv (root), allgatherv (every rank): how many elements each rank contributes.
template <class R>
auto recv_counts(R&& counts) {
  return detail::make_parameter<parameter::recv_counts>(std::forward<R>(counts));
}

/// gatherv, allgatherv: where each rank's elements go in recv_buf (default: packed).
template <class R>
auto recv_displs(R&& displs) {
  return detail::make_parameter<parameter::recv_displs>(std::forward<R>(displs));
}

namespace detail {
/// A count given by the user (`send_count`, `recv_count`): any integer type. A negative one is
/// refused where the call reads it (as one rank's argument error, so the argument checks carry
/// it to the others), instead of wrapping to 18446744073709551615 in a `std::size_t`.
struct user_count {
  long long value;
  const char* name;
  operator std::size_t() const {  // NOLINT(google-explicit-constructor): read as a count
    if (value < 0) raise<invalid_argument>(name, "(", value, "): a negative count; allowed: 0 or more elements");
    return static_cast<std::size_t>(value);
  }
};

template <class N>
user_count count_argument(N n, const char* name) {
  static_assert(!std::is_same_v<N, bool>, "hetero: a count is an integer, not a bool");
  if constexpr (std::is_unsigned_v<N>)
    if (n > static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
      raise<invalid_argument>(name, "(", n, "): more elements than any buffer holds");
  return {static_cast<long long>(n), name};
}
}  // namespace detail

/// scatter(v): elements this rank receives, when recv_buf is larger than that (0 or more).
template <class N>
requires std::is_integral_v<N>
auto recv_count(N n) {
  return detail::named_parameter<parameter::recv_count, detail::user_count>{
      detail::count_argument(n, "recv_count")};
}

/// gather, allgather: elements this rank sends, when send_buf is larger than that (0 or more).
template <class N>
requires std::is_integral_v<N>
auto send_count(N n) {
  return detail::named_parameter<parameter::send_count, detail::user_count>{
      detail::count_argument(n, "send_count")};
}

/// Forces `a` instead of the communicator's tuned choice (every rank must force the same).
inline auto force_algorithm(comm_algorithm a) {
  return detail::named_parameter<parameter::algorithm, comm_algorithm>{a};
}

}  // namespace hetero

#endif  // HETERO_COMM_PARAMETERS_HPP

/// @file
/// Reduction operations for `reduce` and `allreduce`: `ops::sum`, `ops::prod`, `ops::min`,
/// `ops::max` and user functors, with what the algorithms must know about them (may operands
/// be reordered? is there an MPI built-in for this element type?).
#ifndef HETERO_COMM_REDUCE_OPS_HPP
#define HETERO_COMM_REDUCE_OPS_HPP

#include <Kokkos_Core.hpp>

#include <complex>
#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace hetero {
namespace detail {
/// `std::complex<T>`, whose operators are host functions (device code uses `Kokkos::complex`).
template <class T>
inline constexpr bool is_std_complex = false;
template <class T>
inline constexpr bool is_std_complex<std::complex<T>> = true;
}  // namespace detail

namespace ops {

/// a + b. MPI_SUM for arithmetic types. `std::complex` is summed on the host only (its
/// operators are host functions): in device memory use `Kokkos::complex`.
struct sum {
  /// Returns `a + b` (callable on the host and the device).
  template <class T>
  requires(!detail::is_std_complex<T>) && requires(const T& a, const T& b) { static_cast<T>(a + b); }
  KOKKOS_INLINE_FUNCTION constexpr T operator()(const T& a, const T& b) const { return static_cast<T>(a + b); }
  /// Returns `a + b` for `std::complex` (host only).
  template <class T>
  requires detail::is_std_complex<T>
  constexpr T operator()(const T& a, const T& b) const { return a + b; }
};

/// a * b. MPI_PROD for arithmetic types; `std::complex` on the host only, as for `sum`.
struct prod {
  /// Returns `a * b` (callable on the host and the device).
  template <class T>
  requires(!detail::is_std_complex<T>) && requires(const T& a, const T& b) { static_cast<T>(a * b); }
  KOKKOS_INLINE_FUNCTION constexpr T operator()(const T& a, const T& b) const { return static_cast<T>(a * b); }
  /// Returns `a * b` for `std::complex` (host only).
  template <class T>
  requires detail::is_std_complex<T>
  constexpr T operator()(const T& a, const T& b) const { return a * b; }
};

/// The smaller of a and b (a when equal). MPI_MIN for arithmetic types.
struct min {
  /// Returns the smaller of `a` and `b`, `a` when equal (callable on the host and the device).
  template <class T>
  requires requires(const T& a, const T& b) { static_cast<bool>(b < a); }
  KOKKOS_INLINE_FUNCTION constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};

/// The larger of a and b (a when equal). MPI_MAX for arithmetic types.
struct max {
  /// Returns the larger of `a` and `b`, `a` when equal (callable on the host and the device).
  template <class T>
  requires requires(const T& a, const T& b) { static_cast<bool>(a < b); }
  KOKKOS_INLINE_FUNCTION constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

/// Tag: the user's operation gives the same result for (a, b) and (b, a).
struct commutative_t {};
/// Tag: the operands of the user's operation must stay in rank order.
struct non_commutative_t {};
/// Pass as `op(f, ops::commutative)` to declare that `f` may take its operands in any order.
inline constexpr commutative_t commutative{};
/// Pass as `op(f, ops::non_commutative)` to keep the operands of `f` in rank order
/// (the default for user functors).
inline constexpr non_commutative_t non_commutative{};

}  // namespace ops

/// A binary operation on `T` that reductions can apply: `f(a, b)` converts to `T`. It must be
/// associative; for device buffers it must also be callable on the device (`KOKKOS_LAMBDA` or a
/// functor with `KOKKOS_INLINE_FUNCTION`).
template <class F, class T>
concept reduction_operation = std::copy_constructible<F> && requires(const F& f, const T& a, const T& b) {
  { f(a, b) } -> std::convertible_to<T>;
};

namespace detail {

/// Which MPI built-in operation an operation is (none for user functors).
enum class builtin_op : std::uint8_t { none = 0, sum = 1, prod = 2, min = 3, max = 4 };

template <class F>
constexpr builtin_op builtin_op_of() {
  if constexpr (std::is_same_v<F, ops::sum>) return builtin_op::sum;
  if constexpr (std::is_same_v<F, ops::prod>) return builtin_op::prod;
  if constexpr (std::is_same_v<F, ops::min>) return builtin_op::min;
  if constexpr (std::is_same_v<F, ops::max>) return builtin_op::max;
  return builtin_op::none;
}

/// An operation together with whether its operands may be reordered. Built-in operations are
/// commutative on the types whose operators are known to commute (`commutative_for`); a user
/// functor is taken as non-commutative unless tagged `ops::commutative` (always correct, only
/// some algorithms are then excluded). `Declared`: the user tagged it, either way.
template <class F, bool Commutative, bool Declared = false>
struct reduction {
  using function_type = F;
  static constexpr bool commutative = Commutative;
  static constexpr bool declared = Declared;
  static constexpr builtin_op builtin = builtin_op_of<F>();

  F function;

  template <class T>
  requires(!is_std_complex<T>) && requires(const F& f, const T& a, const T& b) { static_cast<T>(f(a, b)); }
  KOKKOS_INLINE_FUNCTION T operator()(const T& a, const T& b) const { return static_cast<T>(function(a, b)); }
  template <class T>
  requires is_std_complex<T> && requires(const F& f, const T& a, const T& b) { static_cast<T>(f(a, b)); }
  T operator()(const T& a, const T& b) const { return static_cast<T>(function(a, b)); }

  /// The same in host code, for host buffers: the user's function may then be host-only (a
  /// plain lambda), which the host-device `operator()` could not call without nvcc's warning.
  template <class T>
  T on_host(const T& a, const T& b) const {
    return static_cast<T>(function(a, b));
  }
};

template <class F>
constexpr bool is_builtin_op_v = builtin_op_of<std::remove_cvref_t<F>>() != builtin_op::none;

/// Whether reduction `R` over elements `T` gives the same bits in any order and grouping of its
/// operands: the built-in operations on integers (sums and products wrap alike, min and max
/// choose by value). Floating-point sums round by grouping, min and max of signed zeros keep
/// the first, and a user's operation is not known to.
template <class R, class T>
inline constexpr bool regroups_exactly = std::is_integral_v<T>&& R::builtin != builtin_op::none;

/// Element types whose `<` orders values alone, so that two that compare equal are the same
/// element (up to the sign of a zero, as for float): numbers, enumerations and Kokkos' half
/// type (a class on GPU backends, `float` elsewhere).
template <class T>
inline constexpr bool ordered_by_value =
    std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, Kokkos::Experimental::half_t>;

/// `Kokkos::complex<T>`, whose sums and products commute as `std::complex`'s do.
template <class T>
inline constexpr bool is_kokkos_complex = false;
template <class T>
inline constexpr bool is_kokkos_complex<Kokkos::complex<T>> = true;

/// Element types whose `+` and `*` are known to commute: numbers and complex numbers. A class's
/// operators may not (matrices, quaternions).
template <class T>
inline constexpr bool commutes_by_type = ordered_by_value<T> || is_std_complex<T> || is_kokkos_complex<T>;

template <class R, class T>
constexpr bool reorderable() {
  if constexpr (!R::commutative) {
    return false;
  } else if constexpr (R::builtin == builtin_op::none) {
    return true;  // a user functor tagged ops::commutative
  } else if constexpr (R::builtin == builtin_op::min || R::builtin == builtin_op::max) {
    return ordered_by_value<T> || R::declared;
  } else {
    return commutes_by_type<T> || R::declared;
  }
}

/// Whether reduction `R` may reorder the operands of elements `T`:
/// - `ops::min` and `ops::max` keep `a` of two equal operands, which is the same element either
///   way only for types ordered by value (a struct ordered by a key, two equal keys with other
///   fields: an argmin), so for other types they are taken in rank order unless tagged
///   `op(ops::min{}, ops::commutative)` (the keys unique, or any of the equal ones will do);
/// - `ops::sum` and `ops::prod` on numbers and complex numbers; on a class only when tagged
///   `op(ops::sum{}, ops::commutative)`, since its `+` or `*` may not commute (a product of
///   matrices folded out of rank order is silently wrong);
/// - a user functor when tagged `ops::commutative`.
template <class R, class T>
inline constexpr bool commutative_for = reorderable<R, std::remove_cv_t<T>>();

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_COMM_REDUCE_OPS_HPP

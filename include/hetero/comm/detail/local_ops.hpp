/// @file
/// What the algorithms do locally, written once for every place data may live: copy elements,
/// combine two vectors with a reduction, borrow scratch. `host_ops` works with host loops
/// (the host-side reduction path); `kernel_ops<MemorySpace>` with Kokkos copies and kernels in
/// the buffer's memory space (the device-side path, also usable on host memory).
#ifndef HETERO_COMM_DETAIL_LOCAL_OPS_HPP
#define HETERO_COMM_DETAIL_LOCAL_OPS_HPP

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <utility>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/reduce_ops.hpp"

namespace hetero::detail {

/// The first exception a user's reduction operation threw during one blocking reduction. A rank
/// must not leave an algorithm half-way (the others would wait for its messages forever), so the
/// guarded operation records the exception, returns its left operand and skips the rest; the
/// collective raises it once the protocol is complete (see `settle_reduction`).
struct op_failure {
  std::atomic<bool> failed{false};
  std::exception_ptr error;

  void record(std::exception_ptr e) noexcept {
    bool expected = false;
    if (failed.compare_exchange_strong(expected, true)) error = std::move(e);  // the first one wins
  }
};

/// The failure record of the blocking reduction running on this thread (null: none, and user
/// exceptions propagate as they are). MPI calls a user operation on the thread that drives the
/// collective, which is how its callback finds this record.
inline thread_local op_failure* t_op_failure = nullptr;

/// Sets `t_op_failure` for the lifetime of a blocking reduction (or the start of a non-blocking one).
class op_failure_scope {
 public:
  explicit op_failure_scope(op_failure& failure) noexcept : m_previous(t_op_failure) { t_op_failure = &failure; }
  /// Sets `failure` (may be null) instead.
  explicit op_failure_scope(op_failure* failure) noexcept : m_previous(t_op_failure) { t_op_failure = failure; }
  op_failure_scope(const op_failure_scope&) = delete;
  op_failure_scope& operator=(const op_failure_scope&) = delete;
  ~op_failure_scope() { t_op_failure = m_previous; }

 private:
  op_failure* m_previous;
};

/// True for a user's reduction operation, which may throw (MPI's built-ins cannot).
template <class R>
inline constexpr bool user_operation = R::builtin == builtin_op::none;

/// A user's reduction whose host calls record an exception in `failure` instead of throwing.
template <class R>
struct guarded_reduction {
  using function_type = typename R::function_type;
  static constexpr bool commutative = R::commutative;
  static constexpr bool declared = R::declared;
  static constexpr builtin_op builtin = R::builtin;

  R inner;
  op_failure* failure = nullptr;

  template <class T>
  requires(!is_std_complex<T>) KOKKOS_INLINE_FUNCTION T operator()(const T& a, const T& b) const {
    return inner(a, b);
  }
  template <class T>
  requires is_std_complex<T> T operator()(const T& a, const T& b) const { return inner(a, b); }

  template <class T>
  T on_host(const T& a, const T& b) const {
    if (failure == nullptr) return inner.on_host(a, b);
    if (failure->failed.load(std::memory_order_relaxed)) return a;  // the result is void anyway
    try {
      return inner.on_host(a, b);
    } catch (...) {
      failure->record(std::current_exception());
      return a;
    }
  }
};

/// The reduction the algorithms apply: a user operation guarded by this thread's failure
/// record, a built-in one as it is.
template <class R>
auto guarded(const R& reduction) {
  if constexpr (user_operation<R>)
    return guarded_reduction<R>{reduction, t_op_failure};
  else
    return reduction;
}

/// Host memory, host loops.
struct host_ops {
  using memory_space = Kokkos::HostSpace;

  template <class T>
  static void copy(T* dst, const T* src, std::size_t n) noexcept {
    if (n != 0 && dst != src) std::memcpy(static_cast<void*>(dst), static_cast<const void*>(src), n * sizeof(T));
  }

  /// acc[i] = in[i] op acc[i] when `in_first` (in holds lower ranks), else acc[i] op in[i].
  template <class T, class R>
  static void combine(T* acc, const T* in, std::size_t n, const R& reduction, bool in_first) {
    if (in_first) {
      for (std::size_t i = 0; i < n; ++i) acc[i] = reduction.on_host(in[i], acc[i]);
    } else {
      for (std::size_t i = 0; i < n; ++i) acc[i] = reduction.on_host(acc[i], in[i]);
    }
  }

  /// acc[i] = x_0[i] op x_1[i] op ... over `count` vectors spaced `stride` elements apart.
  template <class T, class R>
  static void fold(T* acc, const T* vectors, std::size_t count, std::size_t stride, std::size_t n,
                   const R& reduction) {
    fold_bytes(acc, reinterpret_cast<const std::byte*>(vectors), count, stride * sizeof(T), n, reduction);
  }

  /// The same over vectors spaced `stride` bytes apart (the agreement's records: a stride that
  /// need not be a multiple of sizeof(T), each vector aligned for T).
  template <class T, class R>
  static void fold_bytes(T* acc, const std::byte* vectors, std::size_t count, std::size_t stride, std::size_t n,
                         const R& reduction) {
    copy(acc, reinterpret_cast<const T*>(vectors), n);
    for (std::size_t j = 1; j < count; ++j)
      combine(acc, reinterpret_cast<const T*>(vectors + j * stride), n, reduction, false);
  }

  template <class T>
  static T* scratch(comm_state& state, int slot, std::size_t n) {
    return state.scratch(slot).template get<T>(n);
  }
};

template <class T, class MemorySpace>
using unmanaged_view = Kokkos::View<T*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The two reduction kernels are functors, not lambdas: a user's reduction written as a lambda
// has a type local to a function, which nvcc refuses as a template argument of a device lambda.
// Each has a host-only form for host memory, where the user's function may be host code.

template <class MemorySpace>
inline constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

/// a(i) = reduction(a(i), b(i)), or reduction(b(i), a(i)) when `in_first`.
template <class T, class R, class MemorySpace, bool Host = host_memory<MemorySpace>>
struct combine_body {
  unmanaged_view<T, MemorySpace> a;
  unmanaged_view<const T, MemorySpace> b;
  R reduction;
  bool in_first;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    a(i) = in_first ? reduction(b(i), a(i)) : reduction(a(i), b(i));
  }
};

template <class T, class R, class MemorySpace>
struct combine_body<T, R, MemorySpace, true> {
  unmanaged_view<T, MemorySpace> a;
  unmanaged_view<const T, MemorySpace> b;
  R reduction;
  bool in_first;
  void operator()(const std::int64_t i) const {
    a(i) = in_first ? reduction.on_host(b(i), a(i)) : reduction.on_host(a(i), b(i));
  }
};

/// a(i) = x(i) (+) x(stride + i) (+) ... over `count` vectors.
template <class T, class R, class MemorySpace, bool Host = host_memory<MemorySpace>>
struct fold_body {
  unmanaged_view<T, MemorySpace> a;
  unmanaged_view<const T, MemorySpace> x;
  R reduction;
  std::size_t count, stride;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const auto i = static_cast<std::size_t>(k);
    T value = x(i);
    for (std::size_t j = 1; j < count; ++j) value = reduction(value, x(j * stride + i));
    a(i) = value;
  }
};

template <class T, class R, class MemorySpace>
struct fold_body<T, R, MemorySpace, true> {
  unmanaged_view<T, MemorySpace> a;
  unmanaged_view<const T, MemorySpace> x;
  R reduction;
  std::size_t count, stride;
  void operator()(const std::int64_t k) const {
    const auto i = static_cast<std::size_t>(k);
    T value = x(i);
    for (std::size_t j = 1; j < count; ++j) value = reduction.on_host(value, x(j * stride + i));
    a(i) = value;
  }
};

template <class T, class MemorySpace>
inline constexpr bool reducible_in = host_memory<MemorySpace> || !is_std_complex<T>;

template <class Exec, class T, class R>
void combine_kernel(T* acc, const T* in, std::size_t n, const R& reduction, bool in_first) {
  using space = typename Exec::memory_space;
  static_assert(reducible_in<T, space>,
                "hetero: std::complex cannot be reduced in device memory (its operators "
                "are host-only); use Kokkos::complex for device buffers");
  Kokkos::parallel_for("hetero::comm::combine",
                       Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(n)),
                       combine_body<T, R, space>{unmanaged_view<T, space>(acc, n),
                                                 unmanaged_view<const T, space>(in, n), reduction, in_first});
}

template <class Exec, class T, class R>
void fold_kernel(T* acc, const T* vectors, std::size_t count, std::size_t stride, std::size_t n,
                 const R& reduction) {
  using space = typename Exec::memory_space;
  static_assert(reducible_in<T, space>,
                "hetero: std::complex cannot be reduced in device memory (its operators "
                "are host-only); use Kokkos::complex for device buffers");
  Kokkos::parallel_for(
      "hetero::comm::fold",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(n)),
      fold_body<T, R, space>{unmanaged_view<T, space>(acc, n),
                             unmanaged_view<const T, space>(vectors, count * stride), reduction, count, stride});
}

/// Memory of `MemorySpace`, Kokkos copies and kernels on its execution space.
template <class MemorySpace>
struct kernel_ops {
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;

  template <class T>
  static void copy(T* dst, const T* src, std::size_t n) {
    if (n == 0 || dst == src) return;
    Kokkos::deep_copy(unmanaged_view<T, MemorySpace>(dst, n), unmanaged_view<const T, MemorySpace>(src, n));
  }

  template <class T, class R>
  static void combine(T* acc, const T* in, std::size_t n, const R& reduction, bool in_first) {
    if (n == 0) return;
    combine_kernel<execution_space>(acc, in, n, reduction, in_first);
    execution_space().fence();
  }

  template <class T, class R>
  static void fold(T* acc, const T* vectors, std::size_t count, std::size_t stride, std::size_t n,
                   const R& reduction) {
    if (n == 0) return;
    fold_kernel<execution_space>(acc, vectors, count, stride, n, reduction);
    execution_space().fence();
  }

  template <class T>
  static T* scratch(comm_state& state, int slot, std::size_t n) {
    return reinterpret_cast<T*>(state.device_scratch().template get<MemorySpace>(slot, n * sizeof(T)));
  }
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_LOCAL_OPS_HPP

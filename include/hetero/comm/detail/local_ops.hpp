/// @file
/// What the algorithms do locally, written once for every place data may live: copy elements,
/// combine two vectors with a reduction, borrow scratch. `host_ops` works with host loops
/// (the host-side reduction path); `kernel_ops<MemorySpace>` with Kokkos copies and kernels in
/// the buffer's memory space (the device-side path, also usable on host memory).
#ifndef HETERO_COMM_DETAIL_LOCAL_OPS_HPP
#define HETERO_COMM_DETAIL_LOCAL_OPS_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/reduce_ops.hpp"

namespace hetero::detail {

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
    copy(acc, vectors, n);
    for (std::size_t j = 1; j < count; ++j) combine(acc, vectors + j * stride, n, reduction, false);
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

/// @file
/// What the distributed-array module accepts as element types and array ranks, and the Kokkos View types
/// it builds from them.
#ifndef HETERO_DISTARRAY_CONCEPTS_HPP
#define HETERO_DISTARRAY_CONCEPTS_HPP

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "hetero/core/concepts.hpp"

namespace hetero {

/// The highest array rank the distributed-array module supports.
inline constexpr int max_dist_rank = 3;

/// A value that can live in a distributed array or coarray and travel between ranks as bytes:
/// arithmetic types and trivially copyable structs. Pointers are refused (an address means
/// nothing on another rank), and so are const or volatile types.
template <class T>
concept distributable = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> && !std::is_const_v<T> &&
                        !std::is_volatile_v<T> && !std::is_reference_v<T>;

/// An array rank the distributed-array module supports (1-D, 2-D, 3-D).
template <int Rank>
concept supported_rank = Rank >= 1 && Rank <= max_dist_rank;

/// A Kokkos memory space (HostSpace, CudaSpace, ...).
template <class M>
concept memory_space = Kokkos::is_memory_space<M>::value;

namespace detail {

template <class T, int Rank>
struct view_data {
  using type = typename view_data<T, Rank - 1>::type*;
};
template <class T>
struct view_data<T, 0> {
  using type = T;
};

/// `Kokkos::View<T*..., Layout, Space>` with `Rank` stars.
template <class T, int Rank, class Layout, class Space>
using view_of = Kokkos::View<typename view_data<T, Rank>::type, Layout, Space>;

/// An unmanaged one-dimensional view of `n` values at `p` in `Space`.
template <class T, class Space>
using flat_view = Kokkos::View<T*, Kokkos::LayoutRight, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_DISTARRAY_CONCEPTS_HPP

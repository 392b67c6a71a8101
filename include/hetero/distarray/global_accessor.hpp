/// @file
/// `hetero::global_accessor`: reads and writes a rank's block of a distributed array by
/// global indices, inside kernels (the array reference of an XcalableMP loop body).
#ifndef HETERO_DISTARRAY_GLOBAL_ACCESSOR_HPP
#define HETERO_DISTARRAY_GLOBAL_ACCESSOR_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "hetero/distarray/concepts.hpp"
#include "hetero/distarray/detail/axis_map.hpp"

namespace hetero {

/// How a global_accessor turns global indices into storage indices.
enum class index_mapping {
  any,    ///< every distribution kind: a branch (and, on cyclic axes, a division) per axis and access
  blocks  ///< block and gen-block axes only: one subtraction per axis, as fast as indexing a View
};

/// A copyable handle, usable in kernels, to this rank's block of a distributed array,
/// indexed by global indices. Valid indices are the owned ones and, on axes with shadows,
/// those within the shadow widths around the block (e.g. u(i - 1, j) at the block's first
/// row reads the shadow row refreshed by reflect). Made by `distributed_array::global_view()`
/// (any distribution) or `distributed_array::block_view()` (block and gen-block axes only, and
/// as fast as a plain View: prefer it for stencils on such arrays).
/// <!-- snippet: fragment
/// hetero::distributed_array<double, 1> array(hetero::block_space(100));
/// -->
/// @code
/// auto u = array.block_view();
/// hetero::for_each_owned("scale", array.space(), array.space().box(),
///                        KOKKOS_LAMBDA(std::int64_t i) { u(i) *= 2; });
/// @endcode
template <class T, int Rank, class MemorySpace, index_mapping Mapping = index_mapping::any>
requires distributable<T> && supported_rank<Rank>
class global_accessor {
 public:
  /// The storage (block with shadows, row-major) the indices are mapped into.
  using storage_view = detail::view_of<T, Rank, Kokkos::LayoutRight, MemorySpace>;

  global_accessor() = default;
  /// Maps global indices into `storage` by this rank's index map of each axis (`maps`);
  /// `shadow_lower` is the shadow width before the owned block on each axis. Made by `distributed_array`.
  global_accessor(storage_view storage, Kokkos::Array<detail::axis_map, Rank> maps,
                  Kokkos::Array<std::int64_t, Rank> shadow_lower)
      : m_storage(storage), m_maps(maps) {
    for (int d = 0; d < Rank; ++d) m_origin[d] = shadow_lower[d] - maps[d].offset;
  }

  /// The element at global index i (1-D).
  KOKKOS_INLINE_FUNCTION T& operator()(std::int64_t i) const requires(Rank == 1) { return m_storage(slot(0, i)); }
  /// The element at global index (i, j) (2-D).
  KOKKOS_INLINE_FUNCTION T& operator()(std::int64_t i, std::int64_t j) const requires(Rank == 2) {
    return m_storage(slot(0, i), slot(1, j));
  }
  /// The element at global index (i, j, k) (3-D).
  KOKKOS_INLINE_FUNCTION T& operator()(std::int64_t i, std::int64_t j, std::int64_t k) const requires(Rank == 3) {
    return m_storage(slot(0, i), slot(1, j), slot(2, k));
  }

  /// The storage index of global index `g` on `axis`.
  KOKKOS_INLINE_FUNCTION std::int64_t slot(int axis, std::int64_t g) const {
    if constexpr (Mapping == index_mapping::blocks) {
      return g + m_origin[axis];
    } else {
      return m_maps[axis].to_local(g) + m_origin[axis] + m_maps[axis].offset;
    }
  }
  /// The underlying storage.
  [[nodiscard]] const storage_view& storage() const noexcept { return m_storage; }

 private:
  storage_view m_storage;
  Kokkos::Array<detail::axis_map, Rank> m_maps;
  Kokkos::Array<std::int64_t, Rank> m_origin;  // storage index of global index 0 (blocks), shadow - offset
};

}  // namespace hetero

#endif  // HETERO_DISTARRAY_GLOBAL_ACCESSOR_HPP

/// @file
/// The global <-> local index map of one axis on one rank, small enough to copy into kernels.
#ifndef HETERO_DISTARRAY_DETAIL_AXIS_MAP_HPP
#define HETERO_DISTARRAY_DETAIL_AXIS_MAP_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace hetero::detail {

/// Maps between the global indices one part owns and its local indices 0, 1, ... For the
/// contiguous kinds (block, gen-block) local = global - offset, which also holds for shadow
/// indices just outside the block; for the cyclic kinds a part owns blocks of `width` indices
/// every `width * parts`.
struct axis_map {
  std::int64_t offset = 0;  ///< contiguous kinds: the global index of local index 0
  std::int64_t width = 0;   ///< 0 for the contiguous kinds, else the block width (1: cyclic)
  std::int64_t parts = 1;   ///< parts of the axis
  std::int64_t part = 0;    ///< the part this map belongs to

  /// The global index of local index `l`.
  KOKKOS_INLINE_FUNCTION std::int64_t to_global(std::int64_t l) const {
    if (width == 0) return l + offset;
    if (width == 1) return l * parts + part;
    return (l / width) * width * parts + part * width + l % width;
  }

  /// The local index of global index `g` (owned by this part, or in its shadow).
  KOKKOS_INLINE_FUNCTION std::int64_t to_local(std::int64_t g) const {
    if (width == 0) return g - offset;
    if (width == 1) return g / parts;
    return (g / (width * parts)) * width + g % width;
  }
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_AXIS_MAP_HPP

/// @file
/// `hetero::index_space<Rank>`: a global index space distributed per axis over a process
/// grid (XcalableMP's `template` + `distribute ... onto`). Arrays are aligned to it and
/// owner-computes loops run over it.
#ifndef HETERO_DISTARRAY_INDEX_SPACE_HPP
#define HETERO_DISTARRAY_INDEX_SPACE_HPP

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/distarray/concepts.hpp"
#include "hetero/distarray/detail/axis_map.hpp"
#include "hetero/distarray/distribution.hpp"
#include "hetero/distarray/process_grid.hpp"
#include "hetero/distarray/section.hpp"

namespace hetero {

/// A distributed index space: axis d has `extents[d]` indices, distributed by `formats[d]`
/// over the grid's axis d. A cheap handle to copy (it shares the grid's communicator).
/// <!-- snippet: fragment -->
/// @code
/// hetero::process_grid<2> grid({0, 1});  // all ranks along rows
/// hetero::index_space<2> space({1000, 500}, grid,
///                              {hetero::distribution::block(), hetero::distribution::block()});
/// int owner = space.owner_of({420, 7});
/// @endcode
template <int Rank>
requires supported_rank<Rank>
class index_space {
 public:
  /// A multi-index.
  using index_type = std::array<std::int64_t, Rank>;

  /// Distributes `extents` over `grid`, axis d by `formats[d]`. Throws `distribution_error`
  /// when a format does not fit its axis (gen-block sizes that do not sum to the extent...).
  index_space(index_type extents, process_grid<Rank> grid, std::array<distribution, Rank> formats)
      : m_grid(std::move(grid)) {
    for (int d = 0; d < Rank; ++d) {
      HETERO_EXPECTS(extents[d] >= 0, "index space extent ", extents[d], " on axis ", d, " is negative");
      try {
        m_axes.emplace_back(extents[d], m_grid.extent(d), formats[d]);
      } catch (const distribution_error& e) {
        detail::raise<distribution_error>("axis ", d, ": ", e.what());
      }
    }
    m_extents = extents;
  }

  /// Block distribution on every axis.
  index_space(index_type extents, process_grid<Rank> grid) : index_space(extents, std::move(grid), all_block()) {}

  /// The extents.
  [[nodiscard]] const index_type& extents() const noexcept { return m_extents; }
  /// The extent of `axis`.
  [[nodiscard]] std::int64_t extent(int axis) const { return this->axis(axis).extent(); }
  /// Indices in the whole space.
  [[nodiscard]] std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (auto e : m_extents) n *= e;
    return n;
  }
  /// The process grid.
  [[nodiscard]] const process_grid<Rank>& grid() const noexcept { return m_grid; }
  /// The distribution of `axis`, with its own queries (owner_of, local_size, ...).
  [[nodiscard]] const axis_distribution& axis(int axis) const {
    HETERO_EXPECTS(axis >= 0 && axis < Rank, "axis ", axis, " is outside [0, ", Rank, ")");
    return m_axes[static_cast<std::size_t>(axis)];
  }
  /// The whole space as a box.
  [[nodiscard]] index_box<Rank> box() const noexcept { return {index_type{}, m_extents}; }

  /// The grid rank that owns global index `g`.
  [[nodiscard]] int owner_of(const index_type& g) const {
    std::array<int, Rank> c{};
    for (int d = 0; d < Rank; ++d) c[d] = m_axes[d].owner_of(g[d]);
    return m_grid.rank_of(c);
  }
  /// Whether this rank owns global index `g`.
  [[nodiscard]] bool owns(const index_type& g) const { return owner_of(g) == m_grid.rank(); }

  /// The extents of the block grid rank `r` owns.
  [[nodiscard]] index_type local_extents(int r) const {
    const auto c = m_grid.coords_of(r);
    index_type e{};
    for (int d = 0; d < Rank; ++d) e[d] = m_axes[d].local_size(c[d]);
    return e;
  }
  /// The extents of this rank's block.
  [[nodiscard]] index_type local_extents() const { return local_extents(m_grid.rank()); }
  /// Indices grid rank `r` owns.
  [[nodiscard]] std::int64_t local_size(int r) const {
    std::int64_t n = 1;
    for (auto e : local_extents(r)) n *= e;
    return n;
  }
  /// Indices this rank owns.
  [[nodiscard]] std::int64_t local_size() const { return local_size(m_grid.rank()); }

  /// The local index of global index `g` in its owner's block.
  [[nodiscard]] index_type to_local(const index_type& g) const {
    index_type l{};
    for (int d = 0; d < Rank; ++d) l[d] = m_axes[d].to_local(g[d]);
    return l;
  }
  /// The global index of local index `l` of grid rank `r`.
  [[nodiscard]] index_type to_global(int r, const index_type& l) const {
    const auto c = m_grid.coords_of(r);
    index_type g{};
    for (int d = 0; d < Rank; ++d) g[d] = m_axes[d].to_global(c[d], l[d]);
    return g;
  }

  /// The local indices of the part of the global box `global` grid rank `r` owns (a box:
  /// owned indices of an interval are contiguous in local indices, whatever the kind).
  [[nodiscard]] index_box<Rank> local_range(const index_box<Rank>& global, int r) const {
    const auto c = m_grid.coords_of(r);
    index_box<Rank> local;
    for (int d = 0; d < Rank; ++d) {
      const auto [first, last] = m_axes[d].local_range(c[d], global.begin[d], global.end[d]);
      local.begin[d] = first;
      local.end[d] = last;
    }
    return local;
  }
  /// The part of `global` this rank owns, in local indices.
  [[nodiscard]] index_box<Rank> local_range(const index_box<Rank>& global) const {
    return local_range(global, m_grid.rank());
  }

  /// The index maps of grid rank `r`, for kernels.
  [[nodiscard]] Kokkos::Array<detail::axis_map, Rank> maps(int r) const {
    const auto c = m_grid.coords_of(r);
    Kokkos::Array<detail::axis_map, Rank> m;
    for (int d = 0; d < Rank; ++d) m[d] = m_axes[d].map(c[d]);
    return m;
  }
  /// This rank's index maps.
  [[nodiscard]] Kokkos::Array<detail::axis_map, Rank> maps() const { return maps(m_grid.rank()); }

  /// Whether `other` distributes the same extents the same way over the same processes.
  [[nodiscard]] bool same_layout(const index_space& other) const {
    return m_axes == other.m_axes && m_grid.same_layout(other.m_grid);
  }

  /// A canonical description (extents, grid shape, formats): equal descriptions mean equal
  /// layouts on congruent communicators. Used as part of the key of cached exchange plans.
  [[nodiscard]] std::vector<std::int64_t> describe() const {
    std::vector<std::int64_t> out{Rank};
    for (int d = 0; d < Rank; ++d) {
      const auto& a = m_axes[d];
      out.insert(out.end(), {a.extent(), a.parts(), static_cast<std::int64_t>(a.kind()), a.format().width(),
                             static_cast<std::int64_t>(a.format().sizes().size())});
      out.insert(out.end(), a.format().sizes().begin(), a.format().sizes().end());
    }
    return out;
  }

 private:
  static std::array<distribution, Rank> all_block() { return {}; }

  process_grid<Rank> m_grid;
  index_type m_extents{};
  std::vector<axis_distribution> m_axes;
};

/// A one-dimensional block-distributed index space over every rank of `comm`.
inline index_space<1> block_space(std::int64_t extent, MPI_Comm comm = MPI_COMM_WORLD) {
  return index_space<1>({extent}, process_grid<1>({0}, comm));
}

}  // namespace hetero

#endif  // HETERO_DISTARRAY_INDEX_SPACE_HPP

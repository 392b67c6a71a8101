/// @file
/// `hetero::process_grid<Rank>`: the ranks of a communicator arranged on a Cartesian grid
/// (XcalableMP's `nodes`), onto which each axis of an index space is distributed.
#ifndef HETERO_DISTARRAY_PROCESS_GRID_HPP
#define HETERO_DISTARRAY_PROCESS_GRID_HPP

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/distarray/concepts.hpp"

namespace hetero {

namespace detail {
template <class Int, std::size_t N>
std::string format_array(const std::array<Int, N>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < N; ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}
}  // namespace detail

/// The ranks of a communicator on a `Rank`-dimensional grid, row-major (the last axis
/// varies fastest, as in `MPI_Cart_create` without reordering). A cheap, copyable handle;
/// construction makes the grid's `hetero::communicator` (a duplicate of `comm`) and is
/// collective over `comm`. Arrays on the grid hand out that communicator, so collectives on
/// them need no MPI of their own.
/// <!-- snippet: fragment
/// double local = 1;
/// -->
/// @code
/// hetero::process_grid<2> grid({2, 0});  // 2 rows of size/2 ranks; 0: let MPI choose
/// auto [row, col] = grid.coords();
/// double most = grid.comm().allreduce(hetero::send_buf(local), hetero::op(hetero::ops::max{}));
/// @endcode
template <int Rank>
requires supported_rank<Rank>
class process_grid {
 public:
  /// Every rank of `comm` on a grid of `shape`; zeros are chosen by `MPI_Dims_create`. Throws
  /// `distribution_error` when the shape does not hold exactly the ranks of `comm`.
  explicit process_grid(std::array<int, Rank> shape = {}, MPI_Comm comm = MPI_COMM_WORLD)
      : process_grid(shape, communicator(comm)) {}

  /// Every rank of `comm` on a grid of `shape`, sharing `comm` (no duplicate is made).
  process_grid(std::array<int, Rank> shape, const communicator& comm) : m_comm(comm) {
    const int size = comm.size();
    long long fixed = 1;
    bool free_axis = false;
    for (int d = 0; d < Rank; ++d) {
      HETERO_EXPECTS(shape[d] >= 0, "process grid extent ", shape[d], " on axis ", d,
                     " is negative; allowed: 0 (let MPI choose) or more");
      if (shape[d] > 0) fixed *= shape[d];
      free_axis = free_axis || shape[d] == 0;
    }
    if (free_axis ? size % fixed != 0 : fixed != size)
      detail::raise<distribution_error>("process grid ", detail::format_array(shape), " does not fit the ", size,
                                        " ranks of the communicator: its fixed extents multiply to ", fixed,
                                        free_axis ? ", which does not divide " : ", not ", size);
    HETERO_MPI_CHECK(MPI_Dims_create, size, Rank, shape.data());
    m_shape = shape;
    m_coords = coords_of(m_comm.rank());
  }

  /// The grid's extents.
  [[nodiscard]] const std::array<int, Rank>& shape() const noexcept { return m_shape; }
  /// The grid's extent on `axis`.
  [[nodiscard]] int extent(int axis) const { return m_shape[checked_axis(axis)]; }
  /// The number of ranks on the grid.
  [[nodiscard]] int size() const noexcept { return m_comm.size(); }
  /// This process's rank in the grid's communicator.
  [[nodiscard]] int rank() const noexcept { return m_comm.rank(); }
  /// This process's grid coordinates.
  [[nodiscard]] const std::array<int, Rank>& coords() const noexcept { return m_coords; }
  /// The grid's communicator: collectives over the grid's ranks.
  [[nodiscard]] const communicator& comm() const noexcept { return m_comm; }
  /// The MPI communicator underneath `comm()` (errors are returned, not fatal).
  [[nodiscard]] MPI_Comm mpi_comm() const noexcept { return m_comm.mpi_comm(); }

  /// The coordinates of rank `r`.
  [[nodiscard]] std::array<int, Rank> coords_of(int r) const {
    HETERO_EXPECTS(r >= 0 && r < size(), "rank ", r, " is outside the grid's ranks [0, ", size(), ")");
    std::array<int, Rank> c{};
    for (int d = Rank - 1; d >= 0; --d) {
      c[d] = r % m_shape[d];
      r /= m_shape[d];
    }
    return c;
  }

  /// The rank at coordinates `c`.
  [[nodiscard]] int rank_of(const std::array<int, Rank>& c) const {
    int r = 0;
    for (int d = 0; d < Rank; ++d) {
      HETERO_EXPECTS(c[d] >= 0 && c[d] < m_shape[d], "grid coordinate ", c[d], " on axis ", d, " is outside [0, ",
                     m_shape[d], ")");
      r = r * m_shape[d] + c[d];
    }
    return r;
  }

  /// The rank `displacement` steps from this one along `axis`, wrapping around when
  /// `periodic`; -1 when there is none (off the grid's edge).
  [[nodiscard]] int neighbor(int axis, int displacement, bool periodic) const {
    auto c = m_coords;
    const int n = m_shape[checked_axis(axis)];
    c[axis] += displacement;
    if (periodic) {
      c[axis] = ((c[axis] % n) + n) % n;
    } else if (c[axis] < 0 || c[axis] >= n) {
      return -1;
    }
    return rank_of(c);
  }

  /// Whether two grids have the same shape over the same processes in the same order.
  [[nodiscard]] bool same_layout(const process_grid& other) const {
    return m_shape == other.m_shape && detail::congruent(mpi_comm(), other.mpi_comm());
  }

 private:
  static int checked_axis(int axis) {
    HETERO_EXPECTS(axis >= 0 && axis < Rank, "axis ", axis, " is outside [0, ", Rank, ")");
    return axis;
  }

  std::array<int, Rank> m_shape{};
  std::array<int, Rank> m_coords{};
  communicator m_comm;
};

}  // namespace hetero

#endif  // HETERO_DISTARRAY_PROCESS_GRID_HPP

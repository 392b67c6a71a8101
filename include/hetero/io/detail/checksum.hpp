/// @file
/// An order-free checksum of a distributed array: the sum, modulo 2^64, of a mix of each
/// element's bytes with its global row-major index. Every rank sums the elements it owns and
/// one allreduce adds the parts, so the value does not depend on the distribution: a file
/// written on 4 cyclic ranks checks against a read on 3 block ranks. It catches changed bytes
/// and elements in the wrong place; it is not a defence against a deliberate change.
#ifndef HETERO_IO_DETAIL_CHECKSUM_HPP
#define HETERO_IO_DETAIL_CHECKSUM_HPP

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>

#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/distarray/index_space.hpp"
#include "hetero/io/detail/checksum_run.hpp"

namespace hetero::detail {

/// The most elements of a row that one work item of the checksum sums: a 1-D block is one row,
/// and summed whole it would keep every thread but one idle.
inline constexpr std::int64_t checksum_piece = std::int64_t{1} << 15;

/// This rank's part of the checksum: `storage` is its block with shadows on the host
/// (row-major), `lower` the shadow widths. Parallel over the rows of the block (all axes but
/// the last), each cut into pieces of at most `checksum_piece` elements; along a row the global
/// index grows by a constant over each run the last axis's map keeps contiguous in the global
/// index space (a whole row for block and cyclic, a block of `width` for block-cyclic), and
/// each run is one checksum_run. `simd` false: the scalar loop only (tests compare the two).
template <class T, int Rank, class HostView>
std::uint64_t local_checksum(const HostView& storage, const std::array<std::int64_t, Rank>& lower,
                             const index_space<Rank>& space, bool simd = true) {
  const auto local = space.local_extents();
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < Rank; ++d) rows *= local[d];
  const std::int64_t row_length = local[Rank - 1];
  if (rows == 0 || row_length == 0) return 0;
  const std::int64_t pieces = (row_length + checksum_piece - 1) / checksum_piece;  // per row
  const auto maps = space.maps();
  const auto global = space.extents();
  constexpr std::uint64_t words = (sizeof(T) + 7) / 8;
  std::uint64_t sum = 0;
  Kokkos::parallel_reduce(
      "hetero::io::checksum", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, rows * pieces),
      [=](std::int64_t item, std::uint64_t& part) {
        const std::int64_t row = item / pieces;
        const std::int64_t j_begin = item % pieces * checksum_piece;
        const std::int64_t j_end = j_begin + checksum_piece < row_length ? j_begin + checksum_piece : row_length;
        // The row's local and global indices on the axes before the last.
        std::array<std::int64_t, Rank> l{};
        std::int64_t rest = row;
        for (int d = Rank - 2; d >= 0; --d) {
          l[d] = rest % local[d];
          rest /= local[d];
        }
        std::uint64_t base = 0;
        for (int d = 0; d + 1 < Rank; ++d)
          base = base * static_cast<std::uint64_t>(global[d]) + maps[d].to_global(l[d]);
        base *= static_cast<std::uint64_t>(global[Rank - 1]);
        const T* first = nullptr;
        if constexpr (Rank == 1) first = &storage(lower[0]);
        if constexpr (Rank == 2) first = &storage(l[0] + lower[0], lower[1]);
        if constexpr (Rank == 3) first = &storage(l[0] + lower[0], l[1] + lower[1], lower[2]);
        const auto last_axis = maps[Rank - 1];
        // Along a run the global index grows by `stride`: 1 (block, and within a block-cyclic
        // block) or the parts (cyclic), so an element's first word index times the factor
        // grows by `step`.
        const std::uint64_t stride = last_axis.width == 1 ? static_cast<std::uint64_t>(last_axis.parts) : 1;
        const std::uint64_t step = stride * words * checksum_index_factor;
        for (std::int64_t j = j_begin; j < j_end;) {
          const std::int64_t block_end = last_axis.width <= 1 ? j_end : j - j % last_axis.width + last_axis.width;
          const std::int64_t run_end = block_end < j_end ? block_end : j_end;
          const std::uint64_t index = base + static_cast<std::uint64_t>(last_axis.to_global(j));
          part += checksum_run(reinterpret_cast<const unsigned char*>(first + j), run_end - j, sizeof(T),
                               index * words * checksum_index_factor, step, simd);
          j = run_end;
        }
      },
      sum);
  return sum;
}

/// The whole array's checksum (collective over `comm`), waited with the communicator's policy:
/// a rank that failed before it and never comes leaves the others a `deadlock_error`, not a
/// hang in `MPI_Allreduce`.
inline std::uint64_t sum_checksum(std::uint64_t local, MPI_Comm comm) {
  return allreduce_sum<1>({local}, comm, make_wait_policy(comm), "hetero::io: the array's checksum")[0];
}

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_CHECKSUM_HPP

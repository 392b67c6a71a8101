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
#include <cstring>

#include "hetero/core/mpi.hpp"
#include "hetero/distarray/index_space.hpp"

namespace hetero::detail {

/// The factor that spreads a word's index over 64 bits before it meets the word.
inline constexpr std::uint64_t checksum_index_factor = 0x9e3779b97f4a7c15ULL;

/// The multiply-xorshift round that ends a word's mix.
inline std::uint64_t checksum_finish(std::uint64_t x) {
  x *= 0xbf58476d1ce4e5b9ULL;
  return x ^ (x >> 31);
}

/// The mix of one 8-byte word `word` of an element, `index` the word's global index (element
/// index times words per element, plus the word): one multiply-xorshift round, cheap next to a
/// file system's bandwidth, and a changed bit changes the sum.
inline std::uint64_t checksum_mix(std::uint64_t word, std::uint64_t index) {
  return checksum_finish(word ^ (index * checksum_index_factor));
}

/// The most elements of a row that one work item of the checksum sums: a 1-D block is one row,
/// and summed whole it would keep every thread but one idle.
inline constexpr std::int64_t checksum_piece = std::int64_t{1} << 15;

/// This rank's part of the checksum: `storage` is its block with shadows on the host
/// (row-major), `lower` the shadow widths. Parallel over the rows of the block (all axes but
/// the last), each cut into pieces of at most `checksum_piece` elements; along a row the global
/// index grows by the last axis's map, without a division per element where the axis is
/// contiguous or cyclic.
template <class T, int Rank, class HostView>
std::uint64_t local_checksum(const HostView& storage, const std::array<std::int64_t, Rank>& lower,
                             const index_space<Rank>& space) {
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
        // Word w of the element at local index j along the row (zero-padded past sizeof(T)).
        auto word_of = [&](std::int64_t j, std::size_t w) {
          std::uint64_t word = 0;
          const auto* bytes = reinterpret_cast<const unsigned char*>(first + j) + 8 * w;
          std::memcpy(&word, bytes, sizeof(T) - 8 * w < 8 ? sizeof(T) - 8 * w : 8);
          return word;
        };
        if (last_axis.width <= 1) {
          // Contiguous or cyclic: the global index grows by a constant along the row, so the
          // index's multiple in checksum_mix grows by a constant too (one multiply per word).
          const std::uint64_t step = last_axis.width == 0 ? 1 : static_cast<std::uint64_t>(last_axis.parts);
          const std::uint64_t first_index = base + static_cast<std::uint64_t>(last_axis.to_global(j_begin));
          std::uint64_t scaled = first_index * words * checksum_index_factor;
          const std::uint64_t scaled_step = step * words * checksum_index_factor;
          for (std::int64_t j = j_begin; j < j_end; ++j, scaled += scaled_step)
            for (std::size_t w = 0; w < words; ++w)
              part += checksum_finish(word_of(j, w) ^ (scaled + w * checksum_index_factor));
        } else {
          for (std::int64_t j = j_begin; j < j_end; ++j) {
            const std::uint64_t index = base + static_cast<std::uint64_t>(last_axis.to_global(j));
            for (std::size_t w = 0; w < words; ++w) part += checksum_mix(word_of(j, w), index * words + w);
          }
        }
      },
      sum);
  return sum;
}

/// The whole array's checksum (collective over `comm`).
inline std::uint64_t sum_checksum(std::uint64_t local, MPI_Comm comm) {
  std::uint64_t total = 0;
  HETERO_MPI_CHECK(MPI_Allreduce, &local, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  return total;
}

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_CHECKSUM_HPP

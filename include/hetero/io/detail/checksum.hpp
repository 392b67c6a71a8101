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

/// The mix of one element's 8-byte word `word` at global index `index` (one multiply-xorshift
/// round: cheap next to a file system's bandwidth, and a changed bit changes the sum).
KOKKOS_INLINE_FUNCTION std::uint64_t checksum_mix(std::uint64_t word, std::uint64_t index) {
  std::uint64_t x = word ^ (index * 0x9e3779b97f4a7c15ULL);
  x *= 0xbf58476d1ce4e5b9ULL;
  return x ^ (x >> 31);
}

/// This rank's part of the checksum: `storage` is its block with shadows on the host
/// (row-major), `lower` the shadow widths, `extents` the global shape.
template <class T, int Rank, class HostView>
std::uint64_t local_checksum(const HostView& storage, const std::array<std::int64_t, Rank>& lower,
                             const index_space<Rank>& space) {
  const auto local = space.local_extents();
  std::int64_t count = 1;
  for (auto e : local) count *= e;
  if (count == 0) return 0;
  const auto maps = space.maps();
  const auto global = space.extents();
  constexpr std::uint64_t words = (sizeof(T) + 7) / 8;
  std::uint64_t sum = 0;
  Kokkos::parallel_reduce(
      "hetero::io::checksum", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, count),
      [=](std::int64_t flat, std::uint64_t& part) {
        std::array<std::int64_t, Rank> l{};
        for (int d = Rank - 1; d >= 0; --d) {
          l[d] = flat % local[d];
          flat /= local[d];
        }
        std::uint64_t index = 0;
        for (int d = 0; d < Rank; ++d)
          index = index * static_cast<std::uint64_t>(global[d]) + maps[d].to_global(l[d]);
        const T* element = nullptr;
        if constexpr (Rank == 1) element = &storage(l[0] + lower[0]);
        if constexpr (Rank == 2) element = &storage(l[0] + lower[0], l[1] + lower[1]);
        if constexpr (Rank == 3) element = &storage(l[0] + lower[0], l[1] + lower[1], l[2] + lower[2]);
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, element, sizeof(T));
        for (std::size_t at = 0; at < sizeof(T); at += 8) {
          std::uint64_t word = 0;
          std::memcpy(&word, bytes + at, sizeof(T) - at < 8 ? sizeof(T) - at : 8);
          part += checksum_mix(word, index * words + at / 8);
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

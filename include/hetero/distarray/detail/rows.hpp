/// @file
/// The unit of every bulk transfer: rows of strided elements in an array's storage, gathered
/// into and scattered from one contiguous message buffer.
#ifndef HETERO_DISTARRAY_DETAIL_ROWS_HPP
#define HETERO_DISTARRAY_DETAIL_ROWS_HPP

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "hetero/distarray/concepts.hpp"

namespace hetero::detail {

/// `count` elements at storage offsets `storage_offset + i * stride`, which sit at
/// `buffer_offset + i` in a message buffer.
struct row {
  std::int64_t storage_offset = 0;
  std::int64_t stride = 1;
  std::int64_t count = 0;
  std::int64_t buffer_offset = 0;
};

/// A strided box of elements in an array's storage: element (i_0, ..., i_{R-1}) is at
/// `offset + sum_d i_d * stride[d]`. Its elements travel in row-major order.
template <int Rank>
struct strided_box {
  std::int64_t offset = 0;
  std::array<std::int64_t, Rank> count{};
  std::array<std::int64_t, Rank> stride{};

  [[nodiscard]] std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (auto c : count) n *= c;
    return n;
  }
  /// Whether the elements are consecutive in storage, in row-major order.
  [[nodiscard]] bool contiguous() const noexcept {
    std::int64_t expected = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      if (count[d] <= 1) continue;
      if (stride[d] != expected) return false;
      expected *= count[d];
    }
    return true;
  }
  friend bool operator==(const strided_box&, const strided_box&) = default;
};

/// Extends `last` by `next` when `next` continues it in storage (the buffer offsets of the two
/// are consecutive by construction); a one-element row takes the stride `next` implies.
inline bool extend(row& last, const row& next) {
  const std::int64_t stride = next.count > 1 ? next.stride : next.storage_offset - last.storage_offset;
  if (last.count == 1) {
    if (stride == 0 || last.storage_offset + stride != next.storage_offset) return false;
    last.stride = stride;
  } else if (last.storage_offset + last.count * last.stride != next.storage_offset ||
             (next.count > 1 && next.stride != last.stride)) {
    return false;
  }
  last.count += next.count;
  return true;
}

/// Appends the rows of `box` to `rows`, their buffer offsets continuing from `cursor`. A row
/// that continues the previous one (same stride, next storage element) is merged into it,
/// unless the previous row belongs to another message (index below `message_first_row`).
template <int Rank>
void append_rows(const strided_box<Rank>& box, std::vector<row>& rows, std::int64_t& cursor,
                 std::size_t message_first_row) {
  if (box.size() == 0) return;
  const std::int64_t inner = box.count[Rank - 1];
  const std::int64_t inner_stride = inner > 1 ? box.stride[Rank - 1] : 1;
  std::array<std::int64_t, Rank> at{};  // odometer over the outer axes
  while (true) {
    std::int64_t offset = box.offset;
    for (int d = 0; d < Rank - 1; ++d) offset += at[d] * box.stride[d];
    const row next{offset, inner_stride, inner, cursor};
    cursor += inner;
    if (rows.size() <= message_first_row || !extend(rows.back(), next)) rows.push_back(next);
    int d = Rank - 2;
    for (; d >= 0; --d) {
      if (++at[d] < box.count[d]) break;
      at[d] = 0;
    }
    if (d < 0) break;
  }
}

/// Splits rows longer than `longest` so that one long row still spreads over many threads.
inline std::vector<row> split_long_rows(const std::vector<row>& rows, std::int64_t longest) {
  std::vector<row> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    for (std::int64_t first = 0; first < r.count; first += longest) {
      const std::int64_t n = std::min(longest, r.count - first);
      out.push_back({r.storage_offset + first * r.stride, r.stride, n, r.buffer_offset + first});
    }
  }
  return out;
}

/// How rows are copied: `serial` on the calling host thread, `range` one row per thread,
/// `team` one row per team (device spaces); `automatic` picks serial for small host copies
/// and for one host thread, range for other host copies, team for device memory.
enum class row_kernel { automatic, serial, range, team };

/// Copies one element of row `r` between storage and the message buffer.
template <bool Gather, class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_element(const row& r, std::int64_t i, T* storage, T* buffer) {
  if constexpr (Gather) {
    buffer[r.buffer_offset + i] = storage[r.storage_offset + i * r.stride];
  } else {
    storage[r.storage_offset + i * r.stride] = buffer[r.buffer_offset + i];
  }
}

/// Copies row `r` between storage and the message buffer on the calling host thread.
template <bool Gather, class T>
void copy_host_row(const row& r, T* storage, T* buffer) {
  if (r.stride == 1) {
    if constexpr (Gather) {
      std::memcpy(buffer + r.buffer_offset, storage + r.storage_offset,
                  static_cast<std::size_t>(r.count) * sizeof(T));
    } else {
      std::memcpy(storage + r.storage_offset, buffer + r.buffer_offset,
                  static_cast<std::size_t>(r.count) * sizeof(T));
    }
    return;
  }
  for (std::int64_t i = 0; i < r.count; ++i) copy_element<Gather>(r, i, storage, buffer);
}

/// The kernel of a row copy: one row per index (range policy) or per team (team policy). A
/// functor, not a lambda: nvcc refuses device lambdas in private member functions.
template <bool Gather, class T, class Exec, class Rows>
struct row_copy {
  Rows rows;
  T* storage;
  T* buffer;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const row r = rows(k);
    for (std::int64_t i = 0; i < r.count; ++i) copy_element<Gather>(r, i, storage, buffer);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<Exec>::member_type& team) const {
    const row r = rows(team.league_rank());
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r.count),
                         [&](const std::int64_t i) { copy_element<Gather>(r, i, storage, buffer); });
  }
};

/// A list of rows, kept on the host and, for kernels, in `MemorySpace`.
template <class MemorySpace>
class row_list {
 public:
  row_list() = default;

  /// Takes the rows (long rows are split for parallel copies) and uploads them once.
  explicit row_list(const std::vector<row>& rows) : m_host(split_long_rows(rows, longest_row)) {
    for (const auto& r : m_host) m_elements += r.count;
    m_rows = Kokkos::View<row*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "hetero::distarray::rows"), m_host.size());
    Kokkos::deep_copy(m_rows, Kokkos::View<const row*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                  m_host.data(), m_host.size()));
  }

  [[nodiscard]] bool empty() const noexcept { return m_host.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return m_host.size(); }
  /// Elements over all rows.
  [[nodiscard]] std::int64_t elements() const noexcept { return m_elements; }
  [[nodiscard]] const std::vector<row>& host_rows() const noexcept { return m_host; }

  /// buffer[r.buffer_offset + i] = storage[r.storage_offset + i * r.stride] for every row.
  template <class T>
  void gather(const T* storage, T* buffer, row_kernel kernel = row_kernel::automatic) const {
    copy<true>(const_cast<T*>(storage), buffer, kernel);
  }
  /// storage[r.storage_offset + i * r.stride] = buffer[r.buffer_offset + i] for every row.
  template <class T>
  void scatter(T* storage, const T* buffer, row_kernel kernel = row_kernel::automatic) const {
    copy<false>(storage, const_cast<T*>(buffer), kernel);
  }

 private:
  static constexpr std::int64_t longest_row = 4096;
  static constexpr std::int64_t small_copy = 1 << 15;  // elements: below this a kernel launch costs more

  template <bool Gather, class T>
  void copy(T* storage, T* buffer, row_kernel kernel) const {
    if (m_host.empty()) return;
    using exec = typename MemorySpace::execution_space;
    if (kernel == row_kernel::automatic) {
      if constexpr (host_addressable<MemorySpace>) {
        kernel = m_elements < small_copy || exec().concurrency() == 1 ? row_kernel::serial : row_kernel::range;
      } else {
        kernel = row_kernel::team;
      }
    }
    if constexpr (host_addressable<MemorySpace>) {
      if (kernel == row_kernel::serial) {
        for (const auto& r : m_host) copy_host_row<Gather>(r, storage, buffer);
        return;
      }
    }
    const auto n = static_cast<std::int64_t>(m_host.size());
    const row_copy<Gather, T, exec, Kokkos::View<row*, MemorySpace>> body{m_rows, storage, buffer};
    const char* label = Gather ? "hetero::distarray::gather_rows" : "hetero::distarray::scatter_rows";
    if (kernel == row_kernel::team) {
      Kokkos::parallel_for(label, Kokkos::TeamPolicy<exec>(n, Kokkos::AUTO), body);
    } else {
      Kokkos::parallel_for(label, Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>(0, n), body);
    }
    exec().fence();
  }

  std::vector<row> m_host;
  Kokkos::View<row*, MemorySpace> m_rows;
  std::int64_t m_elements = 0;
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_ROWS_HPP

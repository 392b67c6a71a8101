/// @file
/// Scratch memory a communicator allocates once and keeps: growable host buffers (pinned
/// where a device backend offers it, so staging copies run asynchronously) and scratch in any
/// Kokkos memory space (for combining data where it lives).
#ifndef HETERO_COMM_DETAIL_SCRATCH_HPP
#define HETERO_COMM_DETAIL_SCRATCH_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "hetero/config.hpp"

#if HETERO_HAS_CUDA()
#include "hetero/comm/backend/cuda.hpp"
#endif

namespace hetero::detail {

/// Host memory aligned to 128 bytes; page-locked when CUDA is enabled (asynchronous copies).
inline std::byte* allocate_host(std::size_t bytes) {
#if HETERO_HAS_CUDA()
  return allocate_pinned(bytes);
#else
  return static_cast<std::byte*>(::operator new (bytes, std::align_val_t{128}));
#endif
}

inline void free_host(std::byte* p) noexcept {
  if (!p) return;
#if HETERO_HAS_CUDA()
  free_pinned(p);
#else
  ::operator delete (p, std::align_val_t{128});
#endif
}

/// A host buffer that grows to the largest size asked for and is then reused.
class host_scratch {
 public:
  host_scratch() = default;
  host_scratch(const host_scratch&) = delete;
  host_scratch& operator=(const host_scratch&) = delete;
  host_scratch(host_scratch&& other) noexcept
      : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}
  host_scratch& operator=(host_scratch&& other) noexcept {
    std::swap(m_data, other.m_data);
    std::swap(m_bytes, other.m_bytes);
    return *this;
  }
  ~host_scratch() { free_host(m_data); }

  /// At least `bytes` bytes; earlier contents are lost when it grows.
  std::byte* get(std::size_t bytes) {
    if (bytes > m_bytes) {
      // Grow by half again, so that slowly rising sizes do not reallocate every call.
      const std::size_t grown = std::max(bytes, m_bytes + m_bytes / 2);
      free_host(m_data);
      m_data = nullptr;
      m_bytes = 0;
      m_data = allocate_host(grown);
      m_bytes = grown;
    }
    return m_data;
  }

  /// At least `n` elements of `T`.
  template <class T>
  T* get(std::size_t n) {
    return reinterpret_cast<T*>(get(n * sizeof(T)));
  }

  [[nodiscard]] std::size_t bytes() const noexcept { return m_bytes; }

 private:
  std::byte* m_data = nullptr;
  std::size_t m_bytes = 0;
};

/// Scratch in Kokkos memory spaces, growable allocations per (space, slot), freed with the
/// communicator (while Kokkos still runs).
class space_scratch {
 public:
  space_scratch() = default;
  space_scratch(const space_scratch&) = delete;
  space_scratch& operator=(const space_scratch&) = delete;
  ~space_scratch() {
    // After Kokkos::finalize the allocations cannot be returned any more; the process ends.
    if (!Kokkos::is_initialized()) return;
    for (auto& e : m_entries)
      if (e.data) e.release(e.data);
  }

  /// At least `bytes` bytes in `MemorySpace`, scratch number `slot` of that space.
  template <class MemorySpace>
  std::byte* get(int slot, std::size_t bytes) {
    const std::string name = MemorySpace::name();
    for (auto& e : m_entries) {
      if (e.space != name || e.slot != slot) continue;
      if (e.bytes < bytes) {
        if (e.data) e.release(e.data);
        e.data = nullptr;
        e.bytes = 0;
        e.data = static_cast<std::byte*>(Kokkos::kokkos_malloc<MemorySpace>("hetero::comm scratch", bytes));
        e.bytes = bytes;
      }
      return e.data;
    }
    auto* data = static_cast<std::byte*>(Kokkos::kokkos_malloc<MemorySpace>("hetero::comm scratch", bytes));
    m_entries.push_back({name, slot, data, bytes, [](std::byte* p) { Kokkos::kokkos_free<MemorySpace>(p); }});
    return data;
  }

 private:
  struct entry {
    std::string space;
    int slot;
    std::byte* data;
    std::size_t bytes;
    void (*release)(std::byte*);
  };
  std::vector<entry> m_entries;
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_SCRATCH_HPP

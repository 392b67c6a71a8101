/// @file
/// Host memory for `write_async`'s copy of a block. A copy into fresh memory pays for every
/// page as it first touches it: the kernel faults the page in and zero-fills it, and with
/// 4 KiB pages that is most of the copy's time. So a large block is aligned to 2 MiB and asked
/// for transparent huge pages (Linux's `madvise(MADV_HUGEPAGE)`, which the common "madvise"
/// setting of /sys/kernel/mm/transparent_hugepage/enabled honours): the kernel then faults in
/// 2 MiB at a time (docs/results/io.md has the measurement). Where there are no huge pages, the block
/// is plain memory.
#ifndef HETERO_IO_DETAIL_COPY_MEMORY_HPP
#define HETERO_IO_DETAIL_COPY_MEMORY_HPP

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace hetero::detail {

/// Frees a copy_memory block.
struct copy_memory_free {
  void operator()(void* memory) const noexcept { std::free(memory); }
};

/// A block of `T` from `allocate_copy_memory`.
template <class T>
using copy_memory = std::unique_ptr<T[], copy_memory_free>;

/// The size of a transparent huge page on x86-64 and of the usual setting on AArch64.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Blocks of this many bytes and more are aligned for huge pages (a smaller one would round up
/// to a whole huge page, or be one page's worth of faults anyway).
inline constexpr std::size_t huge_block_bytes = 2 * huge_page_bytes;

/// For tests: set, the next allocate_copy_memory of this process fails as if there were no
/// memory (std::bad_alloc), and clears it.
inline std::atomic<bool>& refuse_next_copy_memory() noexcept {
  static std::atomic<bool> refuse{false};
  return refuse;
}

/// Uninitialised memory for `count` elements of `T` (arithmetic or std::complex: the elements
/// need no construction), aligned to 2 MiB and backed by huge pages where the kernel gives them
/// when it is huge_block_bytes or more. Throws std::bad_alloc when there is no memory.
template <class T>
[[nodiscard]] copy_memory<T> allocate_copy_memory(std::size_t count) {
  if (refuse_next_copy_memory().load(std::memory_order_relaxed) && refuse_next_copy_memory().exchange(false))
    throw std::bad_alloc();
  const std::size_t bytes = std::max<std::size_t>(count * sizeof(T), 1);
  void* memory = nullptr;
  if (bytes >= huge_block_bytes) {
    const std::size_t rounded = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    memory = std::aligned_alloc(huge_page_bytes, rounded);
#if defined(__linux__)
    if (memory != nullptr) (void)::madvise(memory, rounded, MADV_HUGEPAGE);  // a hint: refused, plain pages
#endif
  }
  if (memory == nullptr) memory = std::malloc(bytes);
  if (memory == nullptr) throw std::bad_alloc();
  return copy_memory<T>(static_cast<T*>(memory));
}

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_COPY_MEMORY_HPP

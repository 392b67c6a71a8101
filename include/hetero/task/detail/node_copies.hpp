/// @file
/// Host copies of tiles that ranks of one node share. A rank's copy of a tile owned by a rank
/// of its own node lives in a POSIX shared-memory slab that the reading rank creates; the
/// owner maps the slab by its name and copies each version in (streaming stores), then tells the
/// reader with a small message. MPI's own path between two ranks of a node (UCX with CMA, as
/// Debian builds MPICH) costs each side about as much as the copy again and runs only when both
/// enter MPI (docs/results/task.md). The owner finds the slab by its name, which the reader's
/// "ready" message gives (a random nonce of the reader's graph and the slab's number), and the
/// tile's place in it from the tile's id and size. A slab lives until the last copy in it is
/// dropped or the graph goes; a process that dies leaves its slabs in /dev/shm (/hetero-*).
/// Tiles whose owner's memory the reader maps already (`task_graph::tiles`' `peer_view_of`)
/// need no slab: the reader copies each version from the owner's memory itself
/// (`remote_channel::expect_tile_pull`, `data_registry::complete_pull`).
#ifndef HETERO_TASK_DETAIL_NODE_COPIES_HPP
#define HETERO_TASK_DETAIL_NODE_COPIES_HPP

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "hetero/core/error.hpp"

namespace hetero::detail {

/// Tiles per slab: copies of tiles with neighbouring ids sit side by side in one slab, so that a
/// task reading several (a row of tiles) gets them as the owner holds its own.
inline constexpr std::uint64_t slab_tiles = 8;

/// Where tile `id`'s copy of `tile_bytes` starts in its slab (of `slab_tiles` such copies).
inline constexpr std::size_t slab_offset(std::uint64_t id, std::size_t tile_bytes) noexcept {
  return static_cast<std::size_t>(id % slab_tiles) * tile_bytes;
}

/// The name of slab `number` of the slabs a graph's registry on one rank creates, all named
/// with that registry's random `nonce`.
inline std::string shared_slab_name(std::uint64_t nonce, std::uint64_t number) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string name = "/hetero-";
  for (int shift = 60; shift >= 0; shift -= 4) name += digits[(nonce >> static_cast<unsigned>(shift)) & 15U];
  return name + "-" + std::to_string(number);
}

/// A random nonce for a registry's slab names.
inline std::uint64_t new_slab_nonce() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32U) ^ static_cast<std::uint64_t>(device());
}

/// Copies `bytes` to `to` with streaming stores where the CPU has them: the lines go to memory
/// without being read first, where a plain copy would fetch each from the reading core's cache.
inline void stream_copy(std::byte* to, const std::byte* from, std::size_t bytes) noexcept {
#if defined(__SSE2__)
  if (reinterpret_cast<std::uintptr_t>(to) % 16 == 0) {
    std::size_t i = 0;
    for (; i + 16 <= bytes; i += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(to + i),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i)));
    _mm_sfence();
    std::memcpy(to + i, from + i, bytes - i);
    return;
  }
#endif
  std::memcpy(to, from, bytes);
}

/// Orders this process's accesses to a slab against the message that tells the other process
/// about them (after a copy in, before the message; after the message, before the copy is
/// read). A fence between processes: C++'s memory model does not reach across them, and GCC
/// refuses std::atomic_thread_fence under ThreadSanitizer (which sees no other process anyway),
/// so there a sequentially consistent read-modify-write stands in (a full barrier on x86).
inline void slab_fence() noexcept {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<int> anchor{0};
  anchor.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

/// One mapped slab: created (and unlinked when it goes) by the reading rank, or opened by the
/// owner that copies into it.
class shared_slab {
 public:
  shared_slab() = default;
  shared_slab(const shared_slab&) = delete;
  shared_slab& operator=(const shared_slab&) = delete;
  shared_slab(shared_slab&& other) noexcept
      : m_name(std::move(other.m_name)),
        m_base(std::exchange(other.m_base, nullptr)),
        m_bytes(std::exchange(other.m_bytes, 0)),
        m_created(other.m_created) {}
  shared_slab& operator=(shared_slab&& other) noexcept {
    if (this != &other) {
      release();
      m_name = std::move(other.m_name);
      m_base = std::exchange(other.m_base, nullptr);
      m_bytes = std::exchange(other.m_bytes, 0);
      m_created = other.m_created;
    }
    return *this;
  }
  ~shared_slab() { release(); }

  /// Creates slab `name` of `bytes` (a name that exists already is an error: never another's),
  /// sized but not yet backed by memory: each tile's part is reserved by `reserve` just before
  /// the tile's first copy into it, where the rank copying it polls for messages (a worker with
  /// nothing else to run), as MPI would fault in a private copy's pages; here, on the declaring
  /// thread, clearing the whole slab held back every task. Fails where /dev/shm has not the room
  /// now.
  static shared_slab create(const std::string& name, std::size_t bytes) {
    const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) fail("create", name, bytes);
    struct statvfs room {};
    if (::fstatvfs(fd, &room) != 0 || static_cast<unsigned long long>(room.f_bavail) * room.f_frsize < bytes) {
      ::close(fd);
      ::shm_unlink(name.c_str());
      errno = ENOSPC;
      fail("find room for", name, bytes);
    }
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      const int e = errno;
      ::close(fd);
      ::shm_unlink(name.c_str());
      errno = e;
      fail("size", name, bytes);
    }
    try {
      shared_slab s = map(fd, name, bytes);
      s.m_created = true;
      return s;
    } catch (...) {
      ::shm_unlink(name.c_str());
      throw;
    }
  }

  /// Backs the `bytes` of a tile at `tile` in this process's mapping of slab `name` (`offset`
  /// bytes into it) with memory, and maps them (once per tile and mapping, before the first copy
  /// into it): one call for all its pages, where a first touch would fault each in. A /dev/shm
  /// that filled up since the slab was made is then this error, where the first write into the
  /// tile would kill the process (SIGBUS).
  static void reserve(std::byte* tile, std::size_t bytes, const std::string& name, std::size_t offset) {
    if (bytes == 0) return;
    if (populate(tile, bytes) == 0) return;
    if (errno != EINVAL) fail("reserve", name, bytes);
    // A kernel without MADV_POPULATE_WRITE (before Linux 5.14): the same reservation through
    // the file, its pages then faulted in by their first touch.
    const int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) fail("open", name, bytes);
    const int e = ::posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes));
    ::close(fd);
    if (e != 0) {
      errno = e;
      fail("reserve", name, bytes);
    }
  }

  /// Maps the pages holding the `bytes` at `at` (in a slab mapping) writable in one call; 0,
  /// or -1 with errno (EINVAL: not supported here; EFAULT or ENOMEM: no memory behind them).
  static int populate(std::byte* at, std::size_t bytes) noexcept {
#if defined(MADV_POPULATE_WRITE)
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(at) / page * page;
    const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(at) + bytes + page - 1) / page * page;
    return ::madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE);
#else
    (void)at;
    (void)bytes;
    errno = EINVAL;
    return -1;
#endif
  }

  /// Maps slab `name` of `bytes`, created by another process of this node.
  static shared_slab open(const std::string& name, std::size_t bytes) {
    const int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) fail("open", name, bytes);
    return map(fd, name, bytes);
  }

  [[nodiscard]] std::byte* base() const noexcept { return m_base; }
  [[nodiscard]] std::size_t bytes() const noexcept { return m_bytes; }

 private:
  static shared_slab map(int fd, const std::string& name, std::size_t bytes) {
    // Not populated: that would back the parts not reserved yet (each page faults in at its
    // first touch instead, 16 at a time).
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int e = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
      errno = e;
      fail("map", name, bytes);
    }
    shared_slab s;
    s.m_name = name;
    s.m_base = static_cast<std::byte*>(p);
    s.m_bytes = bytes;
    return s;
  }

  [[noreturn]] static void fail(const char* what, const std::string& name, std::size_t bytes) {
    raise<runtime_error>(
        "cannot ", what, " the shared memory '", name, "' (", bytes,
        " bytes) that holds copies of tiles between ranks of one node: ", std::strerror(errno),
        "; allowed: a node whose /dev/shm has room for the tiles its ranks read from each other, or "
        "task_options::node_shared_copies = false (the tiles then move through MPI)");
  }

  void release() noexcept {
    if (!m_base) return;
    ::munmap(m_base, m_bytes);
    if (m_created) ::shm_unlink(m_name.c_str());
    m_base = nullptr;
  }

  std::string m_name;
  std::byte* m_base = nullptr;
  std::size_t m_bytes = 0;
  bool m_created = false;
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_NODE_COPIES_HPP

/// @file
/// Starting the disk early: once a write's data is in the file system's cache, the kernel is
/// asked to start writing that file's pages to disk (Linux's `sync_file_range` with
/// SYNC_FILE_RANGE_WRITE) while the rank goes on with the write's checksum, so that the flush
/// which makes the file durable waits only for what is left instead of for all of it after
/// the checksum. The call blocks until the pages are queued (most of the disk's time for a
/// large write), so it runs on a thread of its own. `h5file` waits for these threads before it
/// flushes (the flush then waits for the disk); a close without a flush lets them finish on
/// their own, so that closing costs what it did before (no wait for the disk).
#ifndef HETERO_IO_DETAIL_WRITEBACK_HPP
#define HETERO_IO_DETAIL_WRITEBACK_HPP

#if defined(__linux__)
#include <fcntl.h>  // sync_file_range (glibc: needs _GNU_SOURCE, which g++ and clang++ define)
#include <unistd.h>
#endif

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace hetero::detail {

/// Asks the kernel to write the cached, not yet written pages of the file at `path` to disk,
/// and returns once they are queued (pages already under way are not written twice). Where
/// there is no such call, or the file system refuses it, nothing happens: the flush then
/// writes everything, as it would anyway.
inline void write_back(const std::string& path) noexcept {
#if defined(__linux__)
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  (void)::close(fd);
#else
  (void)path;
#endif
}

/// The write-backs a file started and has not yet waited for.
class writebacks {
 public:
  writebacks() = default;
  writebacks(writebacks&&) noexcept = default;
  writebacks& operator=(writebacks&& other) noexcept {
    if (this != &other) {
      release();
      m_running = std::move(other.m_running);
    }
    return *this;
  }
  writebacks(const writebacks&) = delete;
  writebacks& operator=(const writebacks&) = delete;
  ~writebacks() { release(); }

  /// Starts writing `path`'s cached pages back on a thread of its own. Where no thread can be
  /// started, does nothing (the flush writes the pages).
  void start(const std::string& path) noexcept {
    forget_finished();
    try {
      auto done = std::make_shared<std::atomic<bool>>(false);
      std::jthread thread([path, done] {
        write_back(path);
        done->store(true, std::memory_order_release);
      });
      m_running.push_back({std::move(thread), std::move(done)});
    } catch (...) {
      // No thread (or no memory for one): skip the early start.
    }
  }

  /// Waits until every write-back started here has queued its pages.
  void wait() noexcept { m_running.clear(); }  // each jthread joins as it goes

  /// Lets the write-backs still running finish on their own (each holds only its own copy of
  /// the path), and forgets them.
  void release() noexcept {
    for (auto& r : m_running)
      if (r.thread.joinable()) r.thread.detach();
    m_running.clear();
  }

 private:
  struct running {
    std::jthread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  // Joins the threads that have finished (a file written many times between flushes keeps one
  // thread per write at most while the disk is behind, not one per write ever made).
  void forget_finished() noexcept {
    std::erase_if(m_running, [](const running& r) { return r.done->load(std::memory_order_acquire); });
  }

  std::vector<running> m_running;
};

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_WRITEBACK_HPP

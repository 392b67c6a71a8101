/// @file
/// Starting the disk early: while a write's data goes into the file system's cache, the kernel
/// is asked every millisecond to start writing the file's pages cached so far to disk (Linux's
/// `sync_file_range` with SYNC_FILE_RANGE_WRITE), and once more when the data is all in, while
/// the rank goes on with the write's checksum. The flush that makes the file durable then waits
/// only for what is left, not for the whole file after the data and the checksum. The call
/// blocks until the pages are queued, so it runs on a thread of its own. `h5file` waits for
/// these threads before it flushes (the flush then waits for the disk); a close without a flush
/// lets them finish on their own, so that closing costs what it did before (no wait for the
/// disk).
#ifndef HETERO_IO_DETAIL_WRITEBACK_HPP
#define HETERO_IO_DETAIL_WRITEBACK_HPP

#if defined(__linux__)
#include <fcntl.h>  // sync_file_range (glibc: needs _GNU_SOURCE, which g++ and clang++ define)
#include <unistd.h>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hetero::detail {

/// Where the kernel can be asked to write a file's cached pages back: Linux.
inline constexpr bool can_write_back =
#if defined(__linux__)
    true;
#else
    false;
#endif

/// Asks the kernel to write the cached, not yet written pages of the open file `fd` to disk,
/// and returns once they are queued (pages already under way are not written twice). Where
/// there is no such call, or the file system refuses it, nothing happens: the flush then
/// writes everything, as it would anyway.
inline void write_back(int fd) noexcept {
#if defined(__linux__)
  (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
#endif
}

/// The write-backs a file started and has not yet waited for.
class writebacks {
 public:
  /// How often a write-back queues the pages cached so far while the data is still coming (a
  /// few MiB of a memory copy): of 1, 4 and 16 ms the fastest on 1 and 2 ranks (docs/results/io.md).
  static constexpr std::chrono::microseconds interval{1000};

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

  /// Starts writing `path`'s cached pages back on a thread of its own, every `interval` while
  /// the data is being written, until `written()`; then once more, and the thread ends. Where
  /// the file cannot be opened or no thread can be started, does nothing (the flush writes the
  /// pages).
  void start(const std::string& path) noexcept {
    if constexpr (!can_write_back) return;
    forget_finished();
    try {
      auto state = std::make_shared<shared>();
      // Room first: a push_back that threw after the thread started would join a thread that
      // waits for a written() that never comes.
      m_running.reserve(m_running.size() + 1);
      std::jthread thread([path, state] { write_back_until_written(path, *state); });
      m_running.push_back({std::move(thread), std::move(state)});
    } catch (...) {
      // No thread (or no memory for one): skip the early start.
    }
  }

  /// The data of every write started here is in the cache: their threads queue the rest of
  /// the pages and end.
  void written() noexcept {
    for (auto& r : m_running) r.state->mark_written();
  }

  /// Waits until every write-back started here has queued its pages.
  void wait() noexcept {
    written();
    m_running.clear();  // each jthread joins as it goes
  }

  /// Lets the write-backs still running finish on their own (each holds only its own copy of
  /// the path and its state), and forgets them.
  void release() noexcept {
    written();
    for (auto& r : m_running)
      if (r.thread.joinable()) r.thread.detach();
    m_running.clear();
  }

 private:
  // What a write-back's thread and the file share.
  struct shared {
    std::mutex mutex;
    std::condition_variable changed;
    bool written = false;            // the data is all in the cache
    std::atomic<bool> done = false;  // the thread has queued the last pages

    void mark_written() noexcept {
      {
        const std::lock_guard lock(mutex);
        written = true;
      }
      changed.notify_all();
    }
  };

  static void write_back_until_written(const std::string& path, shared& state) noexcept {
#if defined(__linux__)
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      std::unique_lock lock(state.mutex);
      while (!state.changed.wait_for(lock, interval, [&] { return state.written; })) {
        lock.unlock();
        write_back(fd);
        lock.lock();
      }
      lock.unlock();
      write_back(fd);
      (void)::close(fd);
    }
#else
    (void)path;
#endif
    state.done.store(true, std::memory_order_release);
  }

  struct running {
    std::jthread thread;
    std::shared_ptr<shared> state;
  };
  // Joins the threads that have finished (a file written many times between flushes keeps one
  // thread per write at most while the disk is behind, not one per write ever made).
  void forget_finished() noexcept {
    std::erase_if(m_running, [](const running& r) { return r.state->done.load(std::memory_order_acquire); });
  }

  std::vector<running> m_running;
};

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_WRITEBACK_HPP

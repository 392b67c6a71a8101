/// @file
/// The io module's one I/O thread per process: asynchronous writes run on it in the order they
/// were started, which is the same on every rank. Every synchronous call into HDF5 first waits
/// until the thread has nothing left (h5_scope does), so a rank never holds HDF5 in one
/// collective while its I/O thread waits in another: the calls of a process stay in program
/// order, as collective calls must.
#ifndef HETERO_IO_DETAIL_IO_THREAD_HPP
#define HETERO_IO_DETAIL_IO_THREAD_HPP

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

namespace hetero::detail {

/// Whether the process's I/O thread was started (by a first asynchronous write).
inline std::atomic<bool>& io_thread_started() {
  static std::atomic<bool> started{false};
  return started;
}

class io_thread {
 public:
  /// The process's I/O thread, started on first use.
  static io_thread& instance() {
    static io_thread thread;
    io_thread_started().store(true, std::memory_order_release);
    return thread;
  }
  /// Whether the caller is the I/O thread.
  static bool on_io_thread() noexcept { return tls_is_io_thread(); }

  /// Queues `work`; the future is ready when it ran (and holds what it threw).
  std::shared_future<void> submit(std::function<void()> work) {
    std::packaged_task<void()> task(std::move(work));
    auto done = task.get_future().share();
    {
      const std::lock_guard hold(m_lock);
      m_queue.push_back(std::move(task));
    }
    m_wake.notify_all();
    return done;
  }

  /// Waits until every queued job ran.
  void drain() {
    std::unique_lock hold(m_lock);
    m_idle.wait(hold, [&] { return m_queue.empty() && !m_running; });
  }

  io_thread(const io_thread&) = delete;
  io_thread& operator=(const io_thread&) = delete;
  ~io_thread() {
    {
      const std::lock_guard hold(m_lock);
      m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
  }

 private:
  io_thread() : m_thread([this] { run(); }) {}

  static bool& tls_is_io_thread() noexcept {
    thread_local bool is_io = false;
    return is_io;
  }

  void run() {
    tls_is_io_thread() = true;
    std::unique_lock hold(m_lock);
    for (;;) {
      m_wake.wait(hold, [&] { return m_stop || !m_queue.empty(); });
      if (m_queue.empty()) return;  // stopping with nothing left
      auto task = std::move(m_queue.front());
      m_queue.pop_front();
      m_running = true;
      hold.unlock();
      task();  // a throwing job stores its exception in its future
      hold.lock();
      m_running = false;
      m_idle.notify_all();
    }
  }

  std::mutex m_lock;
  std::condition_variable m_wake, m_idle;
  std::deque<std::packaged_task<void()>> m_queue;
  bool m_running = false;
  bool m_stop = false;
  std::thread m_thread;
};

/// Waits for the I/O thread's queued jobs, unless it was never started or the caller is it.
inline void drain_io_thread() {
  if (io_thread_started().load(std::memory_order_acquire) && !io_thread::on_io_thread())
    io_thread::instance().drain();
}

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_IO_THREAD_HPP

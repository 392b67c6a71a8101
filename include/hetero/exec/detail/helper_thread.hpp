/// @file
/// The persistent helper thread that runs one side of a split loop while the calling thread
/// runs the other. Each `work_sharing` handle starts one, on its first split run; a hand-over
/// costs two atomic notifications, no thread creation and no allocation.
#ifndef HETERO_EXEC_DETAIL_HELPER_THREAD_HPP
#define HETERO_EXEC_DETAIL_HELPER_THREAD_HPP

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

namespace hetero::detail {

/// Serialises split runs of all threads and handles: Kokkos 3 has one instance of each
/// execution space, which two split runs at once would share.
inline std::mutex& split_run_mutex() noexcept {
  static std::mutex mutex;
  return mutex;
}

/// One job at a time: `post` hands it over, `wait` returns when it has finished (with the
/// exception it threw, if any). Callers hold `split_run_mutex()` from `post` to `wait`.
class helper_thread {
 public:
  using job_function = void (*)(void*);

  /// Starts the thread; the destructor joins it.
  helper_thread() : m_thread([this] { loop(); }) {}

  helper_thread(const helper_thread&) = delete;
  helper_thread& operator=(const helper_thread&) = delete;

  ~helper_thread() {
    m_stop.store(true, std::memory_order_relaxed);
    m_posted.fetch_add(1, std::memory_order_release);
    m_posted.notify_all();
    if (m_thread.joinable()) m_thread.join();
  }

  /// Runs `job(context)` on the helper thread; `context` must live until `wait` returns.
  void post(job_function job, void* context) noexcept {
    m_job = job;
    m_context = context;
    m_error = nullptr;
    m_posted.fetch_add(1, std::memory_order_release);  // publishes the job's fields
    m_posted.notify_all();
  }

  /// Waits until the posted job has finished; returns the exception it threw, if any.
  std::exception_ptr wait() noexcept {
    const std::uint32_t target = m_posted.load(std::memory_order_relaxed);
    for (std::uint32_t done = m_finished.load(std::memory_order_acquire); done != target;
         done = m_finished.load(std::memory_order_acquire))
      m_finished.wait(done, std::memory_order_acquire);
    return m_error;
  }

  /// True on the helper thread itself.
  [[nodiscard]] bool is_current_thread() const noexcept { return std::this_thread::get_id() == m_thread.get_id(); }

 private:
  void loop() {
    std::uint32_t seen = 0;
    for (;;) {
      std::uint32_t posted = m_posted.load(std::memory_order_acquire);
      while (posted == seen) {
        m_posted.wait(posted, std::memory_order_acquire);
        posted = m_posted.load(std::memory_order_acquire);
      }
      seen = posted;
      if (m_stop.load(std::memory_order_relaxed)) return;
      try {
        m_job(m_context);
      } catch (...) {
        m_error = std::current_exception();
      }
      m_finished.store(seen, std::memory_order_release);  // publishes m_error
      m_finished.notify_all();
    }
  }

  std::atomic<std::uint32_t> m_posted{0};
  std::atomic<std::uint32_t> m_finished{0};
  std::atomic<bool> m_stop{false};
  job_function m_job = nullptr;
  void* m_context = nullptr;
  std::exception_ptr m_error;
  std::thread m_thread;  // last: starts after every other member is ready
};

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_HELPER_THREAD_HPP

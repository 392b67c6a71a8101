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
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero::detail {

/// One job of the I/O thread and its outcome. The error travels as its kind and text, not as
/// an exception_ptr: the waiting thread throws its own copy, so no exception object is shared
/// between the threads (and freed by the one that did not catch it).
struct io_job {
  std::function<void()> work;
  std::mutex lock;
  std::condition_variable finished;
  bool done = false;
  enum class failure {
    none,
    io,
    invalid_argument,
    distribution,
    mpi,
    deadlock,
    backend,
    runtime,
    other
  } error = failure::none;
  std::string message, path;
  std::string call;              ///< mpi_error: the MPI function
  int code = 0;                  ///< mpi_error: its error code
  std::vector<int> missing;      ///< deadlock_error: the ranks not arrived
  double waited = 0;             ///< deadlock_error: seconds waited
  int comm_size = 0, rank = -1;  ///< deadlock_error: the communicator's size, this rank in it

  /// Waits for the job; throws what it threw (the same hetero error type, with its facts, or
  /// hetero::error for any other exception).
  void wait() {
    std::unique_lock hold(lock);
    finished.wait(hold, [&] { return done; });
    rethrow();
  }
  /// Whether the job ran; throws what it threw once it has.
  bool ready() {
    std::unique_lock hold(lock);
    if (!done) return false;
    rethrow();
    return true;
  }

 private:
  void rethrow() {
    switch (std::exchange(error, failure::none)) {
      case failure::none: return;
      case failure::io: throw hetero::io_error(message, path);
      case failure::invalid_argument: throw hetero::invalid_argument(message);
      case failure::distribution: throw hetero::distribution_error(message);
      case failure::mpi: throw hetero::mpi_error(call, code, message);
      case failure::deadlock: throw hetero::deadlock_error(message, missing, waited, comm_size, rank);
      case failure::backend: throw hetero::backend_error(message);
      case failure::runtime: throw hetero::runtime_error(message);
      case failure::other: throw hetero::error(message);
    }
  }

  friend class io_thread;
  void run() noexcept {
    failure kind = failure::none;
    std::string text, where;
    try {
      work();
    } catch (const io_error& e) {
      kind = failure::io, text = e.what(), where = e.path();
    } catch (const hetero::invalid_argument& e) {
      kind = failure::invalid_argument, text = e.what();
    } catch (const distribution_error& e) {
      kind = failure::distribution, text = e.what();
    } catch (const mpi_error& e) {
      kind = failure::mpi, text = e.what();
      call = e.call(), code = e.code();
    } catch (const deadlock_error& e) {
      kind = failure::deadlock, text = e.what();
      missing = e.missing_ranks(), waited = e.waited_seconds(), comm_size = e.comm_size(), rank = e.rank();
    } catch (const backend_error& e) {
      kind = failure::backend, text = e.what();
    } catch (const hetero::runtime_error& e) {
      kind = failure::runtime, text = e.what();
    } catch (const std::exception& e) {
      kind = failure::other, text = e.what();
    } catch (...) {
      kind = failure::other, text = "hetero::io: an asynchronous write failed with an unknown exception";
    }
    work = nullptr;  // its captures are freed here, before anyone learns the job is done
    const std::lock_guard hold(lock);
    error = kind;
    message = std::move(text);
    path = std::move(where);
    done = true;
    finished.notify_all();
  }
};

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

  /// Queues `work`; the job says when it ran and what it threw.
  std::shared_ptr<io_job> submit(std::function<void()> work) {
    auto job = std::make_shared<io_job>();
    job->work = std::move(work);
    {
      const std::lock_guard hold(m_lock);
      m_queue.push_back(job);
    }
    m_wake.notify_all();
    return job;
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
      auto job = std::move(m_queue.front());
      m_queue.pop_front();
      m_running = true;
      hold.unlock();
      job->run();  // a throwing job keeps its error for whoever waits
      job.reset();
      hold.lock();
      m_running = false;
      m_idle.notify_all();
    }
  }

  std::mutex m_lock;
  std::condition_variable m_wake, m_idle;
  std::deque<std::shared_ptr<io_job>> m_queue;
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

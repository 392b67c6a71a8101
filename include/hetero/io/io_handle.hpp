/// @file
/// `hetero::io_handle`: an asynchronous write of the io module in flight, which a task graph
/// can adopt like any completion source.
#ifndef HETERO_IO_IO_HANDLE_HPP
#define HETERO_IO_IO_HANDLE_HPP

#include <memory>
#include <utility>

#include "hetero/io/detail/io_thread.hpp"

namespace hetero {

/// An asynchronous write in flight (`h5file::write_async`): `wait()` returns when the data is
/// in the file and rethrows the write's error (the same `io_error` on every rank); `test()`
/// says so without blocking, so a `task_graph` can adopt the handle
/// (`graph.adopt(hetero::out(saved), file.write_async("u", u), "save u")`). A handle destroyed
/// without wait() waits in its destructor (and drops the error: call wait() to see it).
class io_handle {
 public:
  /// `test()` reads a flag the write's own thread sets: a task graph's workers may poll it
  /// whatever MPI's thread level (`hetero::completion_source_calls_mpi`).
  static constexpr bool calls_mpi = false;

  /// A handle of the write `job` (made by `h5file::write_async`).
  explicit io_handle(std::shared_ptr<detail::io_job> job) noexcept : m_job(std::move(job)) {}
  /// Takes over the other handle's write; the moved-from handle has none (it is done).
  io_handle(io_handle&&) noexcept = default;
  /// Waits for this handle's write (dropping its error), then takes over `other`'s.
  io_handle& operator=(io_handle&& other) noexcept {
    if (this != &other) {
      settle();
      m_job = std::move(other.m_job);
    }
    return *this;
  }
  io_handle(const io_handle&) = delete;
  io_handle& operator=(const io_handle&) = delete;
  ~io_handle() { settle(); }

  /// Whether the write finished; rethrows its error the first time it reports it finished.
  bool test() {
    if (!m_job) return true;
    auto job = m_job;
    bool ran = false;
    try {
      ran = job->ready();  // throws the write's error once it ran
    } catch (...) {
      m_job.reset();
      throw;
    }
    if (ran) m_job.reset();
    return ran;
  }
  /// Waits for the write; rethrows its error.
  void wait() {
    if (!m_job) return;
    auto job = std::move(m_job);
    job->wait();
  }
  /// Whether wait() or test() saw the write finish.
  [[nodiscard]] bool done() const noexcept { return !m_job; }

 private:
  void settle() noexcept {
    if (!m_job) return;
    try {
      wait();
    } catch (...) {  // a destructor must not throw; wait() is where the error is seen
    }
  }

  std::shared_ptr<detail::io_job> m_job;
};

}  // namespace hetero

#endif  // HETERO_IO_IO_HANDLE_HPP

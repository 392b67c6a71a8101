/// @file
/// `hetero::io_handle`: an asynchronous write of the io module in flight, which a task graph
/// can adopt like any completion source.
#ifndef HETERO_IO_IO_HANDLE_HPP
#define HETERO_IO_IO_HANDLE_HPP

#include <chrono>
#include <future>
#include <utility>

namespace hetero {

/// An asynchronous write in flight (`h5file::write_async`): `wait()` returns when the data is
/// in the file and rethrows the write's error (the same `io_error` on every rank); `test()`
/// says so without blocking, so a `task_graph` can adopt the handle
/// (`graph.adopt(hetero::out(saved), file.write_async("u", u), "save u")`). A handle destroyed
/// without wait() waits in its destructor (and drops the error: call wait() to see it).
class io_handle {
 public:
  explicit io_handle(std::shared_future<void> done) noexcept : m_done(std::move(done)) {}
  io_handle(io_handle&&) noexcept = default;
  io_handle& operator=(io_handle&& other) noexcept {
    if (this != &other) {
      settle();
      m_done = std::move(other.m_done);
    }
    return *this;
  }
  io_handle(const io_handle&) = delete;
  io_handle& operator=(const io_handle&) = delete;
  ~io_handle() { settle(); }

  /// Whether the write finished; rethrows its error the first time it reports it finished.
  bool test() {
    if (!m_done.valid()) return true;
    if (m_done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    finish();
    return true;
  }
  /// Waits for the write; rethrows its error.
  void wait() {
    if (m_done.valid()) finish();
  }
  /// Whether wait() or test() saw the write finish.
  [[nodiscard]] bool done() const noexcept { return !m_done.valid(); }

 private:
  void finish() {
    auto done = std::move(m_done);
    done.get();
  }
  void settle() noexcept {
    if (m_done.valid()) m_done.wait();
  }

  std::shared_future<void> m_done;
};

}  // namespace hetero

#endif  // HETERO_IO_IO_HANDLE_HPP

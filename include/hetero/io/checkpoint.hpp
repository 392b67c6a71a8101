/// @file
/// `hetero::checkpoint`: numbered HDF5 checkpoints of several arrays and named scalars, each
/// written to a new file and made current only when every rank's part is on disk, so that a
/// crash or a full disk in the middle of a write leaves the previous checkpoint whole.
#ifndef HETERO_IO_CHECKPOINT_HPP
#define HETERO_IO_CHECKPOINT_HPP

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/io/h5file.hpp"

namespace hetero {

namespace detail {

/// The files of checkpoint prefix `prefix` whose names end in `suffix` after a step number,
/// by step: ("run/jacobi", ".h5") finds run/jacobi.000100.h5, run/jacobi.000200.h5, ...
inline std::vector<std::pair<std::int64_t, std::string>> checkpoint_files(const std::string& prefix_text,
                                                                          const std::string& suffix) {
  std::vector<std::pair<std::int64_t, std::string>> found;
  const std::filesystem::path prefix(prefix_text);
  const auto folder = prefix.parent_path().empty() ? std::filesystem::path(".") : prefix.parent_path();
  const std::string stem = prefix.filename().string() + ".";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= stem.size() + suffix.size() || name.compare(0, stem.size(), stem) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = name.substr(stem.size(), name.size() - stem.size() - suffix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) continue;
    found.emplace_back(std::stoll(digits), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

/// Rank 0's `value` on every rank of `comm`, waited with the wait timeout: a rank that never
/// comes is a `deadlock_error` naming `what`, not a hang in `MPI_Bcast`.
inline std::int64_t broadcast_from_first(MPI_Comm comm, std::int64_t value, std::string_view what) {
  request_buffer<std::int64_t, 1> box;
  box[0] = value;
  MPI_Request request = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Ibcast, box.data(), 1, MPI_INT64_T, 0, comm, &request);
  box.wait(std::span<MPI_Request>(&request, 1), {}, make_wait_policy(comm), what);
  return box[0];
}

/// Rank 0's `values` on every rank of `comm` (waited as `broadcast_from_first`).
inline std::vector<std::int64_t> broadcast_list(MPI_Comm comm, std::vector<std::int64_t> values,
                                                std::string_view what) {
  const std::int64_t count = broadcast_from_first(comm, static_cast<std::int64_t>(values.size()), what);
  auto box = std::make_unique<std::vector<std::int64_t>>(std::move(values));
  box->resize(static_cast<std::size_t>(count));
  MPI_Request request = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Ibcast, box->data(), mpi_count(count, "checkpoint steps"), MPI_INT64_T, 0, comm, &request);
  try {
    wait_one(request, make_wait_policy(comm), what);
  } catch (const deadlock_error&) {
    keep_for_mpi(std::move(box));  // MPI may still write there
    throw;
  }
  return std::move(*box);
}

/// Every rank of `comm` got here, waited as `broadcast_from_first`.
inline void barrier_waited(MPI_Comm comm, std::string_view what) {
  MPI_Request request = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Ibarrier, comm, &request);
  wait_one(request, make_wait_policy(comm), what);
}

}  // namespace detail

/// How a `checkpoint` keeps its files.
struct checkpoint_options {
  int keep = 2;  ///< whole checkpoints kept on disk (older ones are removed after a commit); >= 1
};

/// One checkpoint being written: arrays and scalars go into a new file that is not a
/// checkpoint until `commit()` returns. Destroyed without a commit (an exception, an early
/// return), it leaves the previous checkpoints as they were and removes its file.
class checkpoint_writer {
 public:
  /// Takes over `other`'s checkpoint; `other` is left without a file (it neither closes nor removes it).
  checkpoint_writer(checkpoint_writer&& other) noexcept
      : m_comm(std::move(other.m_comm)),
        m_rank(other.m_rank),
        m_keep(other.m_keep),
        m_step(other.m_step),
        m_prefix(std::move(other.m_prefix)),
        m_partial(std::move(other.m_partial)),
        m_final(std::move(other.m_final)),
        m_file(std::move(other.m_file)),
        m_committed(other.m_committed) {
    other.m_file.reset();  // the moved-from writer neither closes nor removes the file
  }
  checkpoint_writer& operator=(checkpoint_writer&&) = delete;
  checkpoint_writer(const checkpoint_writer&) = delete;
  checkpoint_writer& operator=(const checkpoint_writer&) = delete;
  ~checkpoint_writer() {
    if (!m_file || m_committed) return;
    try {
      m_file->close();
    } catch (...) {  // a destructor must not throw: the error is why the commit never came
    }
    std::error_code ignored;
    if (m_rank == 0) std::filesystem::remove(m_partial, ignored);
  }

  /// The step this checkpoint is of.
  [[nodiscard]] std::int64_t step() const noexcept { return m_step; }
  /// Writes `array` as dataset `name` (collective; see `h5file::write`).
  template <class T, int Rank, class MemorySpace>
  void write(std::string_view name, const distributed_array<T, Rank, MemorySpace>& array) {
    file().write(name, array);
  }
  /// Stores the scalar `value` under `name` (collective, the same value on every rank).
  template <class T>
  void set(std::string_view name, const T& value) {
    file().set(name, value);
  }
  /// The file being written, for anything else.
  [[nodiscard]] h5file& file() {
    if (!m_file || m_committed)
      detail::raise<invalid_argument>("hetero::checkpoint: step ", m_step, " was already committed");
    return *m_file;
  }

  /// Makes this checkpoint current (collective): every rank's data is flushed to disk and the
  /// file closed; then one rank renames it to its final name (atomic), syncs the folder and
  /// removes the checkpoints older than the newest `keep`. Throws `io_error` on every rank
  /// when the flush, close or rename failed, or an asynchronous write to the file failed; the
  /// previous checkpoints then stay as they were. Where only the folder's sync failed, after
  /// the rename, this checkpoint is current and `io_error` says so; nothing older is removed.
  void commit() {
    const region running("io", "checkpoint commit");
    auto& out = file();
    out.set("hetero_checkpoint_step", m_step);
    out.flush();  // its asynchronous writes ended before
    out.close();
    if (!detail::all_ranks(m_comm.get(), !out.m_async_failed->load(), "hetero::checkpoint commit (its writes)"))
      detail::raise_io(m_final, "making checkpoint step ", m_step, " current: an asynchronous write to ",
                       m_partial,
                       " failed (its handle's wait() raises why); the previous checkpoints stay as they were");
    std::int64_t outcome = 0;  // rank 0's publish(): 0, or the step that failed and its errno
    if (m_rank == 0) outcome = publish();
    outcome =
        detail::broadcast_from_first(m_comm.get(), outcome, "hetero::checkpoint commit (the rename's outcome)");
    const int failure = static_cast<int>(outcome % publish_stage);
    if (outcome != 0 && outcome < publish_stage)
      detail::raise_io(m_final, "making checkpoint step ", m_step, " current (renaming ", m_partial, " to ",
                       m_final, "): ", std::strerror(failure), "; the previous checkpoints stay as they were");
    m_committed = true;
    if (outcome != 0)  // renamed, but the rename may not survive a crash: nothing older is removed
      detail::raise_io(m_final, "checkpoint step ", m_step, " is current (", m_final,
                       "), but syncing its folder failed: ", std::strerror(failure),
                       "; a crash now may bring the previous one back, so the older checkpoints were kept");
    if (m_rank == 0) {
      const auto whole = detail::checkpoint_files(m_prefix, ".h5");
      std::error_code ignored;
      for (std::size_t i = 0; i + static_cast<std::size_t>(m_keep) < whole.size(); ++i)
        std::filesystem::remove(whole[i].second, ignored);
    }
    detail::barrier_waited(m_comm.get(), "hetero::checkpoint commit (old checkpoints removed)");
  }

 private:
  friend class checkpoint;
  checkpoint_writer(const detail::owned_comm& comm, const std::string& prefix, int keep, std::string final_name,
                    std::int64_t step)
      : m_comm(comm),
        m_rank(comm.rank()),
        m_keep(keep),
        m_step(step),
        m_prefix(prefix),
        m_partial(final_name + ".partial"),
        m_final(std::move(final_name)) {
    m_file.emplace(m_partial, file_mode::create, m_comm.get());
  }

  // Rank 0: rename, then fsync the folder so that the rename itself survives a crash. 0, the
  // rename's errno, or publish_stage + the folder sync's errno (the file was renamed then).
  static constexpr std::int64_t publish_stage = 1 << 20;
  std::int64_t publish() const {
    if (std::rename(m_partial.c_str(), m_final.c_str()) != 0) return errno;
    const auto folder = std::filesystem::path(m_final).parent_path();
    const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return publish_stage + errno;
    const int synced = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    return synced == 0 ? 0 : publish_stage + synced;
  }

  detail::owned_comm m_comm;
  int m_rank = 0;
  int m_keep = 1;
  std::int64_t m_step = 0;
  std::string m_prefix, m_partial, m_final;
  std::optional<h5file> m_file;
  bool m_committed = false;
};

/// A whole checkpoint opened for reading (`checkpoint::restore`): an `h5file`, and the step it
/// was written at.
class restored_checkpoint : public h5file {
 public:
  /// Opens the checkpoint file `path` for reading on the ranks of `comm` (collective); `step` is the step it
  /// was written at.
  restored_checkpoint(std::string path, MPI_Comm comm, std::int64_t step)
      : h5file(std::move(path), file_mode::read, comm), m_step(step) {}
  /// The step given to `checkpoint::begin` when it was written: by the convention of the
  /// examples, the number of steps done, so a restart goes on with step `step()`.
  [[nodiscard]] std::int64_t step() const noexcept { return m_step; }

 private:
  std::int64_t m_step = 0;
};

/// Numbered checkpoints `<prefix>.<step>.h5` of a run on the ranks of a communicator. A
/// checkpoint is written to `<prefix>.<step>.h5.partial` and renamed when whole, so the files
/// without `.partial` are always whole; `restore()` opens the newest. Every call is collective.
/// A checkpoint's step is the number of steps done when it was written; a restart reads the
/// newest and goes on from its step (0 without one), in one line:
/// <!-- snippet: fragment
/// hetero::process_grid<2> grid;
/// hetero::distributed_array<double, 2> u(hetero::index_space<2>({64, 64}, grid));
/// std::int64_t steps = 1000;
/// auto sweep = [](auto&) {};
/// -->
/// @code
/// hetero::checkpoint saved("run/jacobi", grid.comm());
/// std::int64_t done = saved.restore([&](hetero::h5file& last) { last.read("u", u); });  // 0: none yet
/// while (done < steps) {
///   sweep(u);
///   if (++done % 100 == 0) {
///     auto next = saved.begin(done);
///     next.write("u", u);
///     next.commit();                    // now, and only now, the newest checkpoint
///   }
/// }
/// @endcode
class checkpoint {
 public:
  /// Checkpoints named `<prefix>.<step>.h5` (the folder must exist) on the ranks of `comm`.
  explicit checkpoint(std::string prefix, MPI_Comm comm = MPI_COMM_WORLD, checkpoint_options options = {})
      : m_prefix(std::move(prefix)), m_options(options), m_comm(detail::owned_comm::duplicate(comm)) {
    HETERO_EXPECTS(m_options.keep >= 1, "checkpoint_options::keep is ", m_options.keep, "; allowed: 1 or more");
    HETERO_EXPECTS(!m_prefix.empty() && m_prefix.back() != '/', "checkpoint prefix '", m_prefix,
                   "' names no file; give a folder and a name, e.g. \"run/jacobi\"");
  }
  /// Checkpoints on the ranks of `comm`.
  checkpoint(std::string prefix, const communicator& comm, checkpoint_options options = {})
      : checkpoint(std::move(prefix), comm.mpi_comm(), options) {}

  /// The file name of step `step`.
  [[nodiscard]] std::string file_of(std::int64_t step) const {
    char number[24];
    std::snprintf(number, sizeof(number), "%06lld", static_cast<long long>(step));
    return m_prefix + "." + number + ".h5";
  }

  /// Starts checkpoint `step` (>= 0; collective): a new file, not yet a checkpoint. Leftovers of
  /// writes that never committed (a crashed run) are removed first. A step before the newest
  /// whole checkpoint on disk is refused on every rank (`invalid_argument`): `restore()` would
  /// still open that one, and the commit would remove the new one first where `keep` is small.
  [[nodiscard]] checkpoint_writer begin(std::int64_t step) {
    HETERO_EXPECTS(step >= 0, "checkpoint step is ", step, "; allowed: 0 or more");
    std::int64_t newest = -1;
    if (m_comm.rank() == 0) {
      std::error_code ignored;  // one that cannot be removed is overwritten or left; no rank-0-only throw
      for (const auto& leftover : detail::checkpoint_files(m_prefix, ".h5.partial"))
        std::filesystem::remove(leftover.second, ignored);
      const auto whole = detail::checkpoint_files(m_prefix, ".h5");
      if (!whole.empty()) newest = whole.back().first;
    }
    newest = detail::broadcast_from_first(m_comm.get(), newest, "hetero::checkpoint::begin (leftovers removed)");
    HETERO_EXPECTS(step >= newest, "checkpoint step ", step, " comes before the newest checkpoint on disk, ",
                   file_of(newest), ", which restore() would still open; allowed: step ", newest,
                   " or later (or remove the older run's files first)");
    return checkpoint_writer(m_comm, m_prefix, m_options.keep, file_of(step), step);
  }

  /// The steps of the whole checkpoints on disk, oldest first (collective).
  [[nodiscard]] std::vector<std::int64_t> steps() const {
    std::vector<std::int64_t> found;
    if (m_comm.rank() == 0)
      for (const auto& entry : detail::checkpoint_files(m_prefix, ".h5")) found.push_back(entry.first);
    return detail::broadcast_list(m_comm.get(), std::move(found), "hetero::checkpoint::steps");
  }

  /// The newest whole checkpoint opened for reading, with its step, or none when there is none
  /// (collective). Throws `io_error` when that file cannot be read (it was damaged after it
  /// was written).
  [[nodiscard]] std::optional<restored_checkpoint> restore() const {
    const auto whole = steps();
    if (whole.empty()) return std::nullopt;
    return std::optional<restored_checkpoint>(std::in_place, file_of(whole.back()), m_comm.get(), whole.back());
  }

  /// A restart in one call (collective): calls `read(file)` with the newest whole checkpoint and
  /// returns its step, or returns 0 without calling `read` when there is none.
  template <std::invocable<restored_checkpoint&> Read>
  [[nodiscard]] std::int64_t restore(Read&& read) const {
    auto last = restore();
    if (!last) return 0;
    std::forward<Read>(read)(*last);
    return last->step();
  }

 private:
  std::string m_prefix;
  checkpoint_options m_options;
  detail::owned_comm m_comm;
};

}  // namespace hetero

#endif  // HETERO_IO_CHECKPOINT_HPP

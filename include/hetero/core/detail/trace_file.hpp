/// @file
/// The runtime's trace: a `tracer` on every rank from the runtime's start, and one Chrome trace
/// file at its end, every rank's events merged by rank 0. The file is opened (and so checked) at
/// the start, so a path that cannot be written is a named error then, not a trace lost at the end.
#ifndef HETERO_CORE_DETAIL_TRACE_FILE_HPP
#define HETERO_CORE_DETAIL_TRACE_FILE_HPP

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/core/trace.hpp"

namespace hetero::detail {

/// The environment variable that names the trace file when `runtime_options::trace_file` does not.
inline constexpr std::string_view trace_variable = "HETERO_TRACE";

/// One run's trace: opened collectively on `MPI_COMM_WORLD` by the runtime, written by `finish`.
class trace_session {
 public:
  /// Checks and opens `path` on rank 0 (every rank raises `invalid_argument` if it cannot be
  /// written), then starts every rank's tracer after a barrier. `source` says where the path came
  /// from, for the error.
  trace_session(std::string path, std::string_view source) : m_path(std::move(path)) {
    HETERO_MPI_CHECK(MPI_Comm_dup, MPI_COMM_WORLD, &m_comm);
    MPI_Comm_rank(m_comm, &m_rank);
    MPI_Comm_size(m_comm, &m_size);
    int failure = 0;
    if (m_path.empty()) {
      failure = ENOENT;
    } else if (m_rank == 0) {
      m_file = std::fopen(m_path.c_str(), "w");
      if (!m_file) failure = errno != 0 ? errno : EIO;
    }
    MPI_Bcast(&failure, 1, MPI_INT, 0, m_comm);
    if (failure != 0) {
      MPI_Comm_free(&m_comm);
      if (m_path.empty())
        raise<invalid_argument>("the trace file (", source,
                                "): the path is empty; allowed: a path, on rank 0's file ",
                                "system, to a new or writable file in an existing directory");
      raise_io_error(
          m_path, "the trace file '", m_path, "' (", source, ") cannot be written: ", std::strerror(failure),
          "; allowed: a path, on rank 0's file system, to a new or writable file in an existing directory");
    }
    m_tracer = std::make_shared<tracer>();
    MPI_Barrier(m_comm);
    m_tracer->restart_clock();
    add_observer(m_tracer);
  }

  trace_session(const trace_session&) = delete;
  trace_session& operator=(const trace_session&) = delete;
  ~trace_session() { finish(); }

  /// The file the merged trace goes to.
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

  /// Stops recording and writes the trace: collectively into the file opened at the start, or,
  /// where this rank cannot meet the others (MPI finalised already, or an exception is
  /// unwinding), this rank's part alone into `<path>.rank<R>` (tools/trace/merge.sh merges them).
  void finish() noexcept {
    if (!m_tracer) return;
    remove_observer(*m_tracer);
    try {
      const std::string mine = m_tracer->json_events(m_rank);
      if (mpi_finalized() || std::uncaught_exceptions() > 0) {
        write_alone(mine);
      } else {
        merge(mine);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hetero: rank %d could not write its trace to %s: %s\n", m_rank, m_path.c_str(),
                   e.what());
    }
    if (m_file) std::fclose(m_file);
    m_file = nullptr;
    if (m_comm != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&m_comm);
    m_comm = MPI_COMM_NULL;
    m_tracer.reset();
  }

 private:
  static constexpr std::string_view head = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  static constexpr std::string_view tail = "\n]}\n";
  static constexpr int tag = 7;
  static constexpr long long piece = 1LL << 28;  // bytes per message

  // Rank 0 writes its events, then each other rank's in rank order as they arrive.
  void merge(const std::string& mine) {
    if (m_rank != 0) {
      const long long bytes = static_cast<long long>(mine.size());
      HETERO_MPI_CHECK(MPI_Send, &bytes, 1, MPI_LONG_LONG, 0, tag, m_comm);
      for (long long at = 0; at < bytes; at += piece)
        HETERO_MPI_CHECK(MPI_Send, mine.data() + at, static_cast<int>(std::min(piece, bytes - at)), MPI_CHAR, 0,
                         tag, m_comm);
      return;
    }
    write(head);
    write(mine);
    std::string theirs;
    for (int r = 1; r < m_size; ++r) {
      long long bytes = 0;
      HETERO_MPI_CHECK(MPI_Recv, &bytes, 1, MPI_LONG_LONG, r, tag, m_comm, MPI_STATUS_IGNORE);
      theirs.resize(static_cast<std::size_t>(bytes));
      for (long long at = 0; at < bytes; at += piece)
        HETERO_MPI_CHECK(MPI_Recv, theirs.data() + at, static_cast<int>(std::min(piece, bytes - at)), MPI_CHAR, r,
                         tag, m_comm, MPI_STATUS_IGNORE);
      if (!theirs.empty()) write(",\n");
      write(theirs);
    }
    write(tail);
    if (std::fflush(m_file) != 0)
      raise<runtime_error>("writing the trace file '", m_path, "' failed: ", std::strerror(errno));
  }

  void write_alone(const std::string& mine) {
    const std::string alone = m_path + ".rank" + std::to_string(m_rank);
    std::FILE* f = std::fopen(alone.c_str(), "w");
    if (!f) raise<runtime_error>("cannot open '", alone, "': ", std::strerror(errno));
    const bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size() &&
                    std::fwrite(mine.data(), 1, mine.size(), f) == mine.size() &&
                    std::fwrite(tail.data(), 1, tail.size(), f) == tail.size();
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) raise<runtime_error>("writing '", alone, "' failed");
    std::fprintf(stderr, "hetero: rank %d wrote its trace alone to %s (the run ended %s)\n", m_rank, alone.c_str(),
                 mpi_finalized() ? "after MPI_Finalize" : "by an exception");
  }

  void write(std::string_view text) {
    if (std::fwrite(text.data(), 1, text.size(), m_file) != text.size())
      raise<runtime_error>("writing the trace file '", m_path, "' failed: ", std::strerror(errno));
  }

  std::string m_path;
  MPI_Comm m_comm = MPI_COMM_NULL;
  int m_rank = 0, m_size = 1;
  std::FILE* m_file = nullptr;  // rank 0's
  std::shared_ptr<tracer> m_tracer;
};

}  // namespace hetero::detail

#endif  // HETERO_CORE_DETAIL_TRACE_FILE_HPP

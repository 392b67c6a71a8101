/// @file
/// Saving tuned CPU weights to a file and loading them again, so a second run of a program
/// starts balanced instead of tuning again: one process's weights, or every rank's in one file
/// (the collective forms), so that ranks on uneven nodes each keep their own.
#ifndef HETERO_EXEC_WEIGHTS_FILE_HPP
#define HETERO_EXEC_WEIGHTS_FILE_HPP

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/comm_ref.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/exec/work_sharing.hpp"

namespace hetero {

namespace detail {
inline constexpr std::string_view weights_header = "# hetero cpu weights v1: <weight> <label>";
inline constexpr std::string_view rank_weights_header = "# hetero cpu weights v2: <rank> <weight> <label>";

/// The first label of `sharing` that a weights file cannot hold (empty, or with a line break:
/// each line is "<weight> <label>"), or null.
inline const std::string* unsavable_label(const std::vector<std::string>& labels) {
  for (const auto& label : labels)
    if (label.empty() || label.find('\n') != std::string::npos) return &label;
  return nullptr;
}

[[noreturn]] inline void raise_unsavable(const std::string& label, std::string_view where) {
  raise<invalid_argument>("label '", label, "'", where,
                          " cannot be saved in a weights file (each line is '<weight> <label>'); allowed: a "
                          "label of one or more characters without line breaks; nothing was written");
}
}  // namespace detail

/// Writes the CPU weight of every label to `path`, one "<weight> <label>" line each (labels may
/// contain spaces, not line breaks). Throws `hetero::io_error` when the file cannot be written.
/// Every form takes an optional `work_sharing` handle first (the labels of that handle; without
/// it, `default_work_sharing()`'s).
/// <!-- snippet: fragment
/// hetero::work_sharing solver;
/// -->
/// @code
/// hetero::save_weights("weights.txt");   // at the end of a run
/// hetero::load_weights("weights.txt");   // at the start of the next
/// hetero::save_weights(solver, "solver_weights.txt");   // a work_sharing handle's own labels
/// @endcode
inline void save_weights(const work_sharing& sharing, const std::string& path) {
  const auto labels = sharing.labels();
  if (const std::string* bad = detail::unsavable_label(labels)) detail::raise_unsavable(*bad, "");
  std::ofstream file(path, std::ios::trunc);
  if (!file)
    detail::raise_io_error(path, "cannot open weights file '", path, "' for writing: ", std::strerror(errno));
  file << detail::weights_header << '\n' << std::setprecision(17);
  for (const auto& label : labels) file << sharing.cpu_weight(label) << ' ' << label << '\n';
  file.flush();
  if (!file) detail::raise_io_error(path, "writing weights file '", path, "' failed");
}

/// Reads a file written by `save_weights` and sets each label's weight (`reset_weight`).
/// Throws `hetero::io_error` when the file cannot be read, and naming the line for a malformed
/// line or a weight outside [0, 1]; nothing is set then.
inline void load_weights(const work_sharing& sharing, const std::string& path) {
  std::ifstream file(path);
  if (!file)
    detail::raise_io_error(path, "cannot open weights file '", path, "' for reading: ", std::strerror(errno));
  std::vector<std::pair<double, std::string>> weights;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (number == 1 && line == detail::rank_weights_header)
      detail::raise_io_error(path, "weights file '", path,
                             "' holds every rank's weights (the collective save_weights(path, comm)); load it "
                             "on every rank with load_weights(path, comm)");
    if (line.empty() || line.front() == '#') continue;
    const auto space = line.find(' ');
    double w = -1;
    const auto [end, error] = std::from_chars(line.data(), line.data() + std::min(space, line.size()), w);
    const bool parsed = error == std::errc() && end == line.data() + space && space + 1 < line.size();
    if (!parsed)
      detail::raise_io_error(path, "weights file '", path, "' line ", number, " is '", line,
                             "'; expected '<weight> <label>'");
    if (!(w >= 0 && w <= 1))
      detail::raise_io_error(path, "weights file '", path, "' line ", number, " gives weight ", w, " to '",
                             line.substr(space + 1), "'; allowed: [0, 1]");
    weights.emplace_back(w, line.substr(space + 1));
  }
  for (const auto& [w, label] : weights) sharing.reset_weight(label, w);
}

/// `save_weights` of `default_work_sharing()`'s labels.
inline void save_weights(const std::string& path) { save_weights(default_work_sharing(), path); }
/// `load_weights` into `default_work_sharing()`'s labels.
inline void load_weights(const std::string& path) { load_weights(default_work_sharing(), path); }

namespace detail {
/// This rank's weights as "<rank> <weight> <label>" lines (its labels checked before).
inline std::string rank_weight_lines(const work_sharing& sharing, const std::vector<std::string>& labels,
                                     int rank) {
  std::ostringstream text;
  text << std::setprecision(17);
  for (const auto& label : labels) text << rank << ' ' << sharing.cpu_weight(label) << ' ' << label << '\n';
  return text.str();
}
}  // namespace detail

namespace detail {
/// What the ranks of `save_weights` exchange. MPI may still write into it after a wait gave
/// up (a late rank arrives after the `deadlock_error`), so it is left allocated then.
struct weights_exchange {
  std::string mine;
  int length = 0;
  std::vector<int> lengths, offsets;
  std::string all;
  int first_bad = -1;  // the first rank with a label no file can hold (rank 0 tells all), or -1
  int written = 1;
};
}  // namespace detail

/// Collective over `comm` (a hetero handle such as `hetero::communicator`, or an `MPI_Comm`):
/// writes every rank's CPU weights to one file (rank 0 writes it), one
/// "<rank> <weight> <label>" line each, so that ranks on uneven nodes keep their own balance.
/// Throws `hetero::io_error` on every rank when the file cannot be written, and
/// `hetero::deadlock_error` when a rank does not arrive within the wait timeout (the handle's,
/// or `hetero::wait_timeout()`).
/// <!-- snippet: fragment -->
/// @code
/// const hetero::communicator world;
/// hetero::save_weights("weights.txt", world);   // at the end of a run, every rank
/// hetero::load_weights("weights.txt", world);   // at the start of the next
/// @endcode
inline void save_weights(const work_sharing& sharing, const std::string& path, comm_ref comm) {
  int rank = 0, size = 1;
  HETERO_MPI_CHECK(MPI_Comm_rank, comm.get(), &rank);
  HETERO_MPI_CHECK(MPI_Comm_size, comm.get(), &size);
  const detail::wait_policy policy = detail::wait_policy_of(comm);
  const detail::wait_call call{"hetero::", "save_weights", 0, -1};
  const detail::wait_call_scope naming(call);
  auto x = std::make_unique<detail::weights_exchange>();
  // Non-blocking collectives waited through core's helper: a rank that never arrives gives a
  // deadlock_error after the timeout instead of a hang inside MPI_Gather.
  const auto wait = [&](MPI_Request& request, std::string_view what) {
    try {
      detail::wait_one(request, policy, what);
    } catch (const deadlock_error&) {
      detail::keep_for_mpi(std::move(x));  // MPI may still write there
      throw;
    }
  };
  // A rank with a label no file can hold sends -1 for its length: rank 0 names the first such
  // rank to all, and every rank raises before anything is written.
  const auto labels = sharing.labels();
  const std::string* bad = detail::unsavable_label(labels);
  if (!bad) x->mine = detail::rank_weight_lines(sharing, labels, rank);
  x->length = bad ? -1 : detail::mpi_count(x->mine.size(), "weights text");
  x->lengths.resize(static_cast<std::size_t>(size));
  x->offsets.resize(static_cast<std::size_t>(size));
  MPI_Request request = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Igather, &x->length, 1, MPI_INT, x->lengths.data(), 1, MPI_INT, 0, comm.get(), &request);
  wait(request, "gather of text lengths");
  if (rank == 0)
    for (int r = size - 1; r >= 0; --r)
      if (x->lengths[static_cast<std::size_t>(r)] < 0) x->first_bad = r;
  HETERO_MPI_CHECK(MPI_Ibcast, &x->first_bad, 1, MPI_INT, 0, comm.get(), &request);
  wait(request, "broadcast of the labels' check");
  if (bad) detail::raise_unsavable(*bad, " (on this rank)");
  if (x->first_bad >= 0)
    detail::raise<invalid_argument>(
        "save_weights: rank ", x->first_bad,
        " has a label that cannot be saved in a weights file (its error names it); nothing "
        "was written");
  if (rank == 0) {
    std::size_t total = 0;
    for (int r = 0; r < size; ++r) {
      x->offsets[static_cast<std::size_t>(r)] = detail::mpi_count(total, "weights file size");
      total += static_cast<std::size_t>(x->lengths[static_cast<std::size_t>(r)]);
    }
    x->all.resize(total);
  }
  HETERO_MPI_CHECK(MPI_Igatherv, x->mine.data(), x->length, MPI_CHAR, x->all.data(), x->lengths.data(),
                   x->offsets.data(), MPI_CHAR, 0, comm.get(), &request);
  wait(request, "gather of weights");
  if (rank == 0) {
    std::ofstream file(path, std::ios::trunc);
    file << detail::rank_weights_header << '\n' << x->all;
    file.flush();
    x->written = file ? 1 : 0;
  }
  HETERO_MPI_CHECK(MPI_Ibcast, &x->written, 1, MPI_INT, 0, comm.get(), &request);
  wait(request, "broadcast of the outcome");
  if (!x->written) detail::raise_io_error(path, "cannot write weights file '", path, "' (rank 0 writes it)");
}

/// On every rank of `comm` (a hetero handle or an `MPI_Comm`): reads a file written by
/// `save_weights(path, comm)` and sets, on each rank, the weights saved for that rank (a file
/// written by `save_weights(path)`, without ranks, applies to every rank). Every rank reads the
/// whole file on its own (no rank waits for another), so a malformed line or a weight outside
/// [0, 1] throws `hetero::io_error` on every rank and sets nothing; a file with no line
/// for a rank sets nothing there.
inline void load_weights(const work_sharing& sharing, const std::string& path, comm_ref comm) {
  int rank = 0;
  HETERO_MPI_CHECK(MPI_Comm_rank, comm.get(), &rank);
  std::ifstream file(path);
  if (!file)
    detail::raise_io_error(path, "cannot open weights file '", path, "' for reading: ", std::strerror(errno));
  std::string line;
  std::getline(file, line);
  if (line != detail::rank_weights_header) {
    file.close();
    load_weights(sharing, path);
    return;
  }
  std::vector<std::pair<double, std::string>> weights;
  for (int number = 2; std::getline(file, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    const auto first = line.find(' ');
    int owner = -1;
    const auto [end, error] = std::from_chars(line.data(), line.data() + std::min(first, line.size()), owner);
    const auto second = first == std::string::npos ? first : line.find(' ', first + 1);
    double w = -1;
    const bool parsed =
        error == std::errc() && end == line.data() + first && second != std::string::npos &&
        second + 1 < line.size() &&
        std::from_chars(line.data() + first + 1, line.data() + second, w).ptr == line.data() + second;
    if (!parsed)
      detail::raise_io_error(path, "weights file '", path, "' line ", number, " is '", line,
                             "'; expected '<rank> <weight> <label>'");
    if (!(w >= 0 && w <= 1))
      detail::raise_io_error(path, "weights file '", path, "' line ", number, " gives weight ", w, " to '",
                             line.substr(second + 1), "'; allowed: [0, 1]");
    if (owner == rank) weights.emplace_back(w, line.substr(second + 1));
  }
  for (const auto& [w, label] : weights) sharing.reset_weight(label, w);
}

/// The collective `save_weights` of `default_work_sharing()`'s labels.
inline void save_weights(const std::string& path, comm_ref comm) {
  save_weights(default_work_sharing(), path, comm);
}
/// The collective `load_weights` into `default_work_sharing()`'s labels.
inline void load_weights(const std::string& path, comm_ref comm) {
  load_weights(default_work_sharing(), path, comm);
}

}  // namespace hetero

#endif  // HETERO_EXEC_WEIGHTS_FILE_HPP

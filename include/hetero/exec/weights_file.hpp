/// @file
/// Saving tuned CPU weights to a file and loading them again, so a second run of a program
/// starts balanced instead of tuning again.
#ifndef HETERO_EXEC_WEIGHTS_FILE_HPP
#define HETERO_EXEC_WEIGHTS_FILE_HPP

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/exec/split_stats.hpp"

namespace hetero {

namespace detail {
inline constexpr std::string_view weights_header = "# hetero cpu weights v1: <weight> <label>";
}  // namespace detail

/// Writes the CPU weight of every label to `path`, one "<weight> <label>" line each (labels may
/// contain spaces, not line breaks). Throws `hetero::runtime_error` when the file cannot be written.
/// @code
/// hetero::save_weights("weights.txt");   // at the end of a run
/// hetero::load_weights("weights.txt");   // at the start of the next
/// @endcode
inline void save_weights(const std::string& path) {
  std::ofstream file(path, std::ios::trunc);
  if (!file)
    detail::raise<runtime_error>("cannot open weights file '", path, "' for writing: ", std::strerror(errno));
  file << detail::weights_header << '\n' << std::setprecision(17);
  for (const auto& label : split_labels()) {
    HETERO_EXPECTS(label.find('\n') == std::string::npos, "label '", label,
                   "' contains a line break and cannot be saved in a weights file");
    file << cpu_weight(label) << ' ' << label << '\n';
  }
  file.flush();
  if (!file) detail::raise<runtime_error>("writing weights file '", path, "' failed");
}

/// Reads a file written by `save_weights` and sets each label's weight (`reset_weight`).
/// Throws `hetero::runtime_error` when the file cannot be read and `hetero::invalid_argument`
/// naming the line for a malformed line or a weight outside [0, 1]; nothing is set then.
inline void load_weights(const std::string& path) {
  std::ifstream file(path);
  if (!file)
    detail::raise<runtime_error>("cannot open weights file '", path, "' for reading: ", std::strerror(errno));
  std::vector<std::pair<double, std::string>> weights;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    const auto space = line.find(' ');
    double w = -1;
    const auto [end, error] = std::from_chars(line.data(), line.data() + std::min(space, line.size()), w);
    const bool parsed = error == std::errc() && end == line.data() + space && space + 1 < line.size();
    HETERO_EXPECTS(parsed, "weights file '", path, "' line ", number, " is '", line,
                   "'; expected '<weight> <label>'");
    HETERO_EXPECTS(w >= 0 && w <= 1, "weights file '", path, "' line ", number, " gives weight ", w, " to '",
                   line.substr(space + 1), "'; allowed: [0, 1]");
    weights.emplace_back(w, line.substr(space + 1));
  }
  for (const auto& [w, label] : weights) reset_weight(label, w);
}

}  // namespace hetero

#endif  // HETERO_EXEC_WEIGHTS_FILE_HPP

/// @file
/// A Matrix Market reader: coordinate format, real or integer values, general or symmetric
/// storage, from a stream or a file (gzip-compressed files too, when hetero is configured with zlib:
/// `HETERO_HAS_ZLIB()`). Errors name the source and line.
/// <!-- snippet: fragment -->
/// @code
/// hetero::csr_matrix<double> a = hetero::read_matrix_market_file("bcsstk14.mtx.gz", {.require_spd = true});
/// @endcode
#ifndef HETERO_LINALG_MATRIX_MARKET_HPP
#define HETERO_LINALG_MATRIX_MARKET_HPP

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/linalg/csr_matrix.hpp"

#include "hetero/config.hpp"

#if HETERO_HAS_ZLIB()
#include <zlib.h>
#endif

namespace hetero {

/// What `read_matrix_market` checks beyond the format.
struct matrix_market_options {
  /// Refuse what cannot be symmetric positive definite: a matrix that is not square, a general
  /// one that is not symmetric, a diagonal entry that is missing or not positive.
  bool require_spd = false;
};

namespace detail {

// One entry and the line it came from (for messages about it later).
struct located_entry {
  std::int64_t row, col;
  double value;
  std::int64_t line;
};

// Refuses a general matrix that is not symmetric and a diagonal that is not positive.
inline void check_spd_structure(std::vector<located_entry>& entries, std::int64_t rows, bool symmetric,
                                std::string_view source) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  std::vector<bool> has_diagonal(static_cast<std::size_t>(rows), false);
  for (const auto& e : entries) {
    if (e.row != e.col) continue;
    if (!(e.value > 0))
      raise_io_error(std::string(source), source, ":", e.line, ": diagonal entry A(", e.row + 1, ", ", e.col + 1,
                     ") = ", e.value, " is not positive: the matrix is not positive definite");
    has_diagonal[static_cast<std::size_t>(e.row)] = true;
  }
  for (std::int64_t r = 0; r < rows; ++r)
    if (!has_diagonal[static_cast<std::size_t>(r)])
      raise_io_error(std::string(source), source, ": no entry for A(", r + 1, ", ", r + 1,
                     "): a zero diagonal entry, so the matrix is not positive definite");
  if (symmetric) return;
  for (const auto& e : entries) {
    if (e.row == e.col) continue;
    const auto mirror = std::lower_bound(entries.begin(), entries.end(), e, [](const auto& a, const auto& b) {
      return a.row != b.col ? a.row < b.col : a.col < b.row;
    });
    const bool found = mirror != entries.end() && mirror->row == e.col && mirror->col == e.row;
    const double other = found ? mirror->value : 0.0;
    if (std::abs(other - e.value) > 1e-12 * std::max(std::abs(other), std::abs(e.value)))
      raise_io_error(std::string(source), source, ":", e.line, ": A(", e.row + 1, ", ", e.col + 1, ") = ", e.value,
                     " but A(", e.col + 1, ", ", e.row + 1, ") = ", other,
                     found ? message(" (line ", mirror->line, ")") : std::string(" (no entry)"),
                     ": the matrix is not symmetric");
  }
}

template <class NextLine>
csr_matrix<double> parse_matrix_market(NextLine&& next_line, std::string_view source,
                                       const matrix_market_options& options) {
  std::string line;
  std::int64_t number = 0;
  const auto fail = [&](const auto&... what) {
    raise_io_error(std::string(source), source, ":", number, ": ", what...);
  };
  const auto words_of = [](std::string_view text) {
    std::vector<std::string_view> words;
    std::size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
      const std::size_t start = i;
      while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') ++i;
      if (i > start) words.push_back(text.substr(start, i - start));
    }
    return words;
  };
  const auto lower = [](std::string_view w) {
    std::string s(w);
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  const auto integer = [&](std::string_view w, const char* what) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc{} || end != w.data() + w.size()) fail("'", w, "' is not an integer (", what, ")");
    return v;
  };
  const auto real = [&](std::string_view w) {
    double v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc{} || end != w.data() + w.size()) fail("'", w, "' is not a number (the entry's value)");
    return v;
  };

  // Header: %%MatrixMarket matrix coordinate real|integer general|symmetric
  ++number;
  if (!next_line(line)) fail("the file is empty; expected a '%%MatrixMarket matrix coordinate ...' header");
  const auto header = words_of(line);
  if (header.size() != 5 || lower(header[0]) != "%%matrixmarket" || lower(header[1]) != "matrix")
    fail("expected the header '%%MatrixMarket matrix coordinate <real|integer> <general|symmetric>', got '", line,
         "'");
  if (lower(header[2]) != "coordinate")
    fail("format '", header[2], "' is not supported (only 'coordinate'; 'array' is dense)");
  const std::string field = lower(header[3]), symmetry = lower(header[4]);
  if (field != "real" && field != "integer" && field != "double")
    fail("field '", header[3], "' is not supported (real or integer)");
  if (symmetry != "general" && symmetry != "symmetric")
    fail("symmetry '", header[4], "' is not supported (general or symmetric)");
  const bool symmetric = symmetry == "symmetric";

  // Comments, then the size line: rows cols entries.
  std::vector<std::string_view> words;
  for (;;) {
    ++number;
    if (!next_line(line)) fail("the file ends before its size line '<rows> <columns> <entries>'");
    if (line.empty() || line[0] == '%') continue;
    words = words_of(line);
    if (!words.empty()) break;
  }
  if (words.size() != 3) fail("expected the size line '<rows> <columns> <entries>', got '", line, "'");
  const std::int64_t rows = integer(words[0], "rows"), cols = integer(words[1], "columns"),
                     declared = integer(words[2], "entries");
  if (rows < 0 || cols < 0 || declared < 0) fail("the size line holds a negative number: '", line, "'");
  if (symmetric && rows != cols) fail("a symmetric matrix must be square; the size line says ", rows, " x ", cols);
  if (options.require_spd && rows != cols)
    fail("a symmetric positive definite matrix must be square; the size line says ", rows, " x ", cols);

  std::vector<located_entry> entries;
  entries.reserve(static_cast<std::size_t>(std::min<std::int64_t>(declared, 1 << 24)));
  while (static_cast<std::int64_t>(entries.size()) < declared) {
    ++number;
    if (!next_line(line))
      fail("the file ends after ", entries.size(), " of the ", declared, " entries its size line declares");
    if (line.empty() || line[0] == '%') continue;
    words = words_of(line);
    if (words.empty()) continue;
    if (words.size() != 3) fail("expected an entry '<row> <column> <value>', got '", line, "'");
    const std::int64_t i = integer(words[0], "row"), j = integer(words[1], "column");
    if (i < 1 || i > rows || j < 1 || j > cols)
      fail("entry (", i, ", ", j, ") lies outside the ", rows, " x ", cols, " matrix (indices start at 1)");
    if (symmetric && j > i)
      fail("entry (", i, ", ", j, ") lies above the diagonal; a symmetric file stores the lower triangle only");
    entries.push_back({i - 1, j - 1, real(words[2]), number});
  }
  while (next_line(line)) {
    ++number;
    if (!words_of(line).empty() && line[0] != '%')
      fail("more entries than the ", declared, " the size line declares: '", line, "'");
  }

  if (options.require_spd) check_spd_structure(entries, rows, symmetric, source);
  std::vector<matrix_entry<double>> all;
  all.reserve(entries.size() * (symmetric ? 2 : 1));
  for (const auto& e : entries) {
    all.push_back({e.row, e.col, e.value});
    if (symmetric && e.row != e.col) all.push_back({e.col, e.row, e.value});
  }
  return csr_matrix<double>(rows, cols, 0, rows, std::move(all));
}

}  // namespace detail

/// Reads a Matrix Market matrix from `in`; `source` names it in error messages.
inline csr_matrix<double> read_matrix_market(std::istream& in, std::string_view source = "matrix market input",
                                             const matrix_market_options& options = {}) {
  return detail::parse_matrix_market([&](std::string& line) { return static_cast<bool>(std::getline(in, line)); },
                                     source, options);
}

/// Reads a Matrix Market file; ".gz" files are decompressed on the fly where zlib is available.
inline csr_matrix<double> read_matrix_market_file(const std::string& path,
                                                  const matrix_market_options& options = {}) {
#if HETERO_HAS_ZLIB()
  gzFile file = gzopen(path.c_str(), "rb");  // reads uncompressed files as they are
  if (!file) detail::raise_io_error(path, "cannot open the matrix file '", path, "'");
  struct closer {
    gzFile f;
    ~closer() { gzclose(f); }
  } close{file};
  std::vector<char> chunk(1 << 16);
  // A gzip stream is checked (CRC-32 and length) only at its end, and damaged deflate data may
  // inflate to plausible text first: inflate the whole file once, discarding it, and parse only
  // a stream that ended whole (plain files are read once).
  if (const int first = gzread(file, chunk.data(), 1); first < 0 || gzdirect(file) == 0) {
    if (first >= 0)
      while (gzread(file, chunk.data(), static_cast<unsigned>(chunk.size())) > 0) {
      }
    int code = Z_OK;
    const char* why = gzerror(file, &code);
    if (code != Z_OK && code != Z_STREAM_END)
      detail::raise_io_error(path, path, ": the compressed data is damaged (zlib: ", why,
                             "); nothing of it was read as entries");
  }
  gzrewind(file);
  const auto next_line = [&](std::string& line) {
    line.clear();
    while (gzgets(file, chunk.data(), static_cast<int>(chunk.size()))) {
      line += chunk.data();
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        return true;
      }
    }
    int code = Z_OK;
    const char* why = gzerror(file, &code);
    if (code != Z_OK && code != Z_STREAM_END)
      detail::raise_io_error(path, path, ": the compressed data is damaged (zlib: ", why, ")");
    return !line.empty();
  };
  return detail::parse_matrix_market(next_line, path, options);
#else
  if (path.size() > 3 && path.ends_with(".gz"))
    detail::raise<backend_error>(
        "'", path,
        "' is gzip-compressed and hetero was configured without zlib (HETERO_ENABLE_ZLIB=OFF); gunzip it first");
  std::ifstream in(path);
  if (!in) detail::raise_io_error(path, "cannot open the matrix file '", path, "'");
  return read_matrix_market(in, path, options);
#endif
}

}  // namespace hetero

#endif  // HETERO_LINALG_MATRIX_MARKET_HPP

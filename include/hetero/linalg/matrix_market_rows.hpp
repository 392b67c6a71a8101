/// @file
/// A Matrix Market file read by one rank and handed out by rows: `matrix_market_rows` is a
/// `row_source` whose ranks each hold only the block of rows `distributed_csr` gives them.
/// Rank 0 reads and parses the file (`read_matrix_market_file`, every check included) and
/// sends each rank its rows with three scatters; no other rank opens the file, so memory and
/// file-system traffic grow with the matrix, not with the rank count. A file rank 0 cannot read
/// raises on every rank with rank 0's message.
#ifndef HETERO_LINALG_MATRIX_MARKET_ROWS_HPP
#define HETERO_LINALG_MATRIX_MARKET_ROWS_HPP

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "hetero/comm.hpp"
#include "hetero/core/error.hpp"
#include "hetero/linalg/csr_matrix.hpp"
#include "hetero/linalg/matrix_market.hpp"
#include "hetero/linalg/row_block.hpp"

namespace hetero {

/// This rank's balanced block of the rows of a Matrix Market file that rank 0 of `comm` read
/// (collective). Pass it to `distributed_csr` on the same communicator:
/// <!-- snippet: fragment
/// hetero::communicator comm;
/// -->
/// @code
/// hetero::distributed_csr<> a(hetero::matrix_market_rows("bcsstk14.mtx.gz", comm, {.require_spd = true}), comm);
/// @endcode
/// The result is identical, element by element, to every rank reading the whole file.
class matrix_market_rows {
 public:
  /// Rank 0 of `comm` reads `path`; each rank keeps its block (collective). A file that cannot be
  /// read, or is not a matrix as `options` require, raises `hetero::io_error` on every rank.
  matrix_market_rows(const std::string& path, const communicator& comm,
                     const matrix_market_options& options = {}) {
    const int p = comm.size();
    const bool reader = comm.rank() == 0;
    csr_matrix<double> whole;
    std::string failure;
    std::int64_t kind = 0;  // of rank 0's error: 1 io_error, 2 backend_error, 3 another
    std::exception_ptr own_error;
    if (reader) {
      try {
        whole = read_matrix_market_file(path, options);
      } catch (const io_error& e) {
        failure = e.what();
        kind = 1;
        own_error = std::current_exception();
      } catch (const backend_error& e) {
        failure = e.what();
        kind = 2;
        own_error = std::current_exception();
      } catch (const std::exception& e) {
        failure = e.what();
        kind = 3;
        own_error = std::current_exception();
      }
    }
    // Shape, or rank 0's error: every rank learns it before any data moves, and raises its type.
    std::int64_t head[4] = {whole.global_rows(), whole.cols(), static_cast<std::int64_t>(failure.size()), kind};
    comm.broadcast(send_recv_buf(head), root(0));
    if (head[3] != 0) {
      std::vector<char> text(failure.begin(), failure.end());
      text.resize(static_cast<std::size_t>(head[2]));
      comm.broadcast(send_recv_buf(text), root(0));
      if (own_error) std::rethrow_exception(own_error);
      const std::string said(text.begin(), text.end());
      if (head[3] == 2)
        detail::raise<backend_error>("matrix_market_rows: rank 0 could not read '", path, "': ", said);
      if (head[3] == 1)
        detail::raise_io_error(path, "matrix_market_rows: rank 0 could not read '", path, "': ", said);
      detail::raise<error>("matrix_market_rows: rank 0 could not read '", path, "': ", said);
    }
    m_global_rows = head[0];
    const row_block mine = block_rows(m_global_rows, p, comm.rank());
    // Each rank's entry count, then its row lengths, columns and values.
    std::vector<int> row_counts(static_cast<std::size_t>(p)), entry_counts(static_cast<std::size_t>(p));
    std::vector<std::int64_t> entries_of(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      const row_block b = block_rows(m_global_rows, p, r);
      row_counts[static_cast<std::size_t>(r)] = detail::mpi_count(b.size(), "matrix_market_rows: rows of a rank");
      if (reader) {
        const auto ptr = whole.row_ptr();
        entries_of[static_cast<std::size_t>(r)] =
            ptr[static_cast<std::size_t>(b.end)] - ptr[static_cast<std::size_t>(b.begin)];
        entry_counts[static_cast<std::size_t>(r)] =
            detail::mpi_count(entries_of[static_cast<std::size_t>(r)], "matrix_market_rows: entries of a rank");
      }
    }
    std::int64_t my_entries = 0;
    comm.scatter(send_buf(entries_of), recv_buf(my_entries), root(0));
    std::vector<std::int64_t> lengths;  // row lengths at the reader, in row order
    if (reader) {
      const auto ptr = whole.row_ptr();
      lengths.resize(static_cast<std::size_t>(m_global_rows));
      for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = ptr[i + 1] - ptr[i];
    }
    std::vector<std::int64_t> my_lengths(static_cast<std::size_t>(mine.size()));
    std::vector<std::int64_t> cols(static_cast<std::size_t>(my_entries));
    std::vector<double> values(static_cast<std::size_t>(my_entries));
    const auto all_cols = whole.col_idx();
    const auto all_values = whole.values();
    comm.scatterv(send_buf(lengths), send_counts(row_counts), recv_buf(my_lengths), root(0));
    comm.scatterv(send_buf(std::span(all_cols)), send_counts(entry_counts), recv_buf(cols), root(0));
    comm.scatterv(send_buf(std::span(all_values)), send_counts(entry_counts), recv_buf(values), root(0));
    whole = {};  // the reader keeps only its own rows from here on
    std::vector<std::int64_t> row_ptr(my_lengths.size() + 1, 0);
    for (std::size_t i = 0; i < my_lengths.size(); ++i) row_ptr[i + 1] = row_ptr[i] + my_lengths[i];
    m_mine = csr_matrix<double>(m_global_rows, head[1], mine.begin, std::move(row_ptr), std::move(cols),
                                std::move(values));
  }

  /// The communicator first, as in 0.1.
  [[deprecated(
      "hetero: the communicator comes after what the object is made of: matrix_market_rows(path, comm, "
      "options); docs/conventions.md")]] matrix_market_rows(const communicator& comm, const std::string& path,
                                                            const matrix_market_options& options = {})
      : matrix_market_rows(path, comm, options) {}

  /// Rows of the whole matrix.
  [[nodiscard]] std::int64_t global_rows() const noexcept { return m_global_rows; }
  /// Rows [begin, end) of this rank's block (the block `distributed_csr` asks for).
  [[nodiscard]] csr_matrix<double> rows(std::int64_t begin, std::int64_t end) const {
    return m_mine.rows(begin, end);
  }
  /// This rank's rows, as read.
  [[nodiscard]] const csr_matrix<double>& local() const noexcept { return m_mine; }

 private:
  std::int64_t m_global_rows = 0;
  csr_matrix<double> m_mine;
};

}  // namespace hetero

#endif  // HETERO_LINALG_MATRIX_MARKET_ROWS_HPP

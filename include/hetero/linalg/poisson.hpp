/// @file
/// Symmetric positive definite test matrices: the 2-D five-point and 3-D seven-point Laplacian
/// on a grid with Dirichlet boundaries (diagonal 4 or 6, -1 for each neighbour). Any block of
/// rows is generated on its own, so a large matrix never exists on one rank.
#ifndef HETERO_LINALG_POISSON_HPP
#define HETERO_LINALG_POISSON_HPP

#include <cstdint>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/linalg/csr_matrix.hpp"

namespace hetero {

/// The 3-D Poisson matrix of an nx x ny x nz grid (nz = 1: the 2-D five-point matrix), row
/// index x + nx (y + ny z).
class poisson_matrix {
 public:
  /// An nx x ny x nz grid; every extent at least 1.
  poisson_matrix(std::int64_t nx, std::int64_t ny, std::int64_t nz = 1) : m_nx(nx), m_ny(ny), m_nz(nz) {
    HETERO_EXPECTS(nx >= 1 && ny >= 1 && nz >= 1, "poisson_matrix: grid ", nx, " x ", ny, " x ", nz,
                   "; every extent must be at least 1");
  }

  /// Rows (and columns): nx * ny * nz.
  [[nodiscard]] std::int64_t global_rows() const noexcept { return m_nx * m_ny * m_nz; }
  /// Whether the grid is 3-D (nz > 1: the seven-point matrix; otherwise the five-point one).
  [[nodiscard]] bool three_d() const noexcept { return m_nz > 1; }

  /// Rows [begin, end) with their global column indices.
  [[nodiscard]] csr_matrix<double> rows(std::int64_t begin, std::int64_t end) const {
    HETERO_EXPECTS(begin >= 0 && begin <= end && end <= global_rows(), "poisson_matrix::rows: [", begin, ", ", end,
                   ") is not within the ", global_rows(), " rows");
    std::vector<matrix_entry<double>> entries;
    entries.reserve(static_cast<std::size_t>(end - begin) * (three_d() ? 7 : 5));
    const double diagonal = three_d() ? 6.0 : 4.0;
    for (std::int64_t row = begin; row < end; ++row) {
      const std::int64_t x = row % m_nx, y = (row / m_nx) % m_ny, z = row / (m_nx * m_ny);
      const auto add = [&](std::int64_t col, double v) { entries.push_back({row, col, v}); };
      if (z > 0) add(row - m_nx * m_ny, -1);
      if (y > 0) add(row - m_nx, -1);
      if (x > 0) add(row - 1, -1);
      add(row, diagonal);
      if (x + 1 < m_nx) add(row + 1, -1);
      if (y + 1 < m_ny) add(row + m_nx, -1);
      if (z + 1 < m_nz) add(row + m_nx * m_ny, -1);
    }
    return csr_matrix<double>(global_rows(), global_rows(), begin, end - begin, std::move(entries));
  }

 private:
  std::int64_t m_nx, m_ny, m_nz;
};

/// The 2-D five-point Laplacian of an n x n grid.
inline poisson_matrix poisson_2d(std::int64_t n) { return {n, n, 1}; }
/// The 3-D seven-point Laplacian of an n x n x n grid.
inline poisson_matrix poisson_3d(std::int64_t n) { return {n, n, n}; }

}  // namespace hetero

#endif  // HETERO_LINALG_POISSON_HPP

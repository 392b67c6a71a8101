// A symmetric test matrix whose rows come in coupled pairs: `diagonal` on the diagonal and
// `coupling` between rows 2i and 2i + 1. Not positive definite when |coupling| > diagonal.
#ifndef HETERO_TESTS_LINALG_PAIRED_MATRIX_HPP
#define HETERO_TESTS_LINALG_PAIRED_MATRIX_HPP

#include <hetero/linalg.hpp>

#include <cstdint>
#include <utility>
#include <vector>

inline hetero::csr_matrix<double> paired_matrix(std::int64_t n, double diagonal, double coupling) {
  std::vector<hetero::matrix_entry<double>> entries;
  for (std::int64_t i = 0; i < n; ++i) entries.push_back({i, i, diagonal});
  for (std::int64_t i = 0; i + 1 < n; i += 2) {
    entries.push_back({i, i + 1, coupling});
    entries.push_back({i + 1, i, coupling});
  }
  return {n, n, 0, n, std::move(entries)};
}

#endif  // HETERO_TESTS_LINALG_PAIRED_MATRIX_HPP

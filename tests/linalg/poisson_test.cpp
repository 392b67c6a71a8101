// Row blocks, host CSR matrices and the Poisson generators.
#include <hetero/linalg/csr_matrix.hpp>
#include <hetero/linalg/poisson.hpp>
#include <hetero/linalg/row_block.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <vector>

using Catch::Matchers::ContainsSubstring;

TEST_CASE("row blocks are balanced and owner_of_row finds them", "[linalg][row_block]") {
  for (std::int64_t rows : {0, 1, 7, 100, 101}) {
    for (int ranks : {1, 2, 3, 7}) {
      std::int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const auto b = hetero::block_rows(rows, ranks, r);
        CHECK(b.begin == next);
        CHECK(b.size() >= rows / ranks);
        CHECK(b.size() <= rows / ranks + 1);
        for (std::int64_t i = b.begin; i < b.end; ++i) CHECK(hetero::owner_of_row(i, rows, ranks) == r);
        next = b.end;
      }
      CHECK(next == rows);
    }
  }
  CHECK_THROWS_WITH(hetero::block_rows(10, 2, 2), ContainsSubstring("rank 2 of 2 ranks"));
}

TEST_CASE("CSR matrices add duplicates and hand out row blocks", "[linalg][csr]") {
  const hetero::csr_matrix<double> a(3, 3, 0, 3, {{2, 2, 1}, {0, 1, 2}, {0, 0, 1}, {0, 1, 3}, {1, 0, 4}});
  CHECK(a.nonzeros() == 4);
  std::vector<double> y(3);
  a.multiply(std::vector<double>{1, 1, 1}, y);
  CHECK(y == std::vector<double>{6, 4, 1});
  const auto rows = a.rows(1, 3);
  CHECK(rows.first_row() == 1);
  CHECK(rows.local_rows() == 2);
  std::vector<double> z(2);
  rows.multiply(std::vector<double>{1, 1, 1}, z);
  CHECK(z == std::vector<double>{4, 1});
  CHECK_THROWS_WITH(hetero::csr_matrix<double>(2, 2, 0, 2, {{0, 5, 1}}),
                    ContainsSubstring("entry (0, 5) lies outside"));
  CHECK_THROWS_WITH(a.rows(2, 4), ContainsSubstring("[2, 4) is not within the rows held [0, 3)"));
}

TEST_CASE("CSR arrays are taken as they are and refused where they are not CSR rows", "[linalg][csr]") {
  using csr = hetero::csr_matrix<double>;
  using v64 = std::vector<std::int64_t>;
  using vd = std::vector<double>;
  // Rows 1 and 2 of a 4 x 5 matrix, the second row empty: taken as given.
  const csr a(4, 5, 1, v64{0, 2, 2}, v64{0, 4}, vd{1, 2});
  CHECK(a.local_rows() == 2);
  std::vector<double> y(2);
  a.multiply(vd{1, 1, 1, 1, 10}, y);
  CHECK(y == vd{21, 0});
  const csr none(3, 3, 3, v64{0}, v64{}, vd{});
  CHECK(none.local_rows() == 0);

  CHECK_THROWS_WITH(csr(4, 5, 1, v64{0, 2, 3}, v64{0, 4}, vd{1, 2}), ContainsSubstring("are not rows [1, 3)"));
  CHECK_THROWS_WITH(csr(4, 5, 3, v64{0, 1, 2}, v64{0, 4}, vd{1, 2}), ContainsSubstring("of a 4-row matrix"));
  // An offset past the end before a decreasing one is refused before any column is read.
  CHECK_THROWS_WITH(csr(4, 5, 0, v64{0, 9, 1, 2}, v64{0, 4}, vd{1, 2}),
                    ContainsSubstring("row 1 has offsets 9 .. 1; allowed: offsets that do not decrease"));
  CHECK_THROWS_WITH(csr(4, 5, 0, v64{0, 2}, v64{0, 5}, vd{1, 2}),
                    ContainsSubstring("row 0 has column 5; allowed: columns in [0, 5)"));
  CHECK_THROWS_WITH(csr(4, 5, 0, v64{0, 2}, v64{-1, 3}, vd{1, 2}), ContainsSubstring("row 0 has column -1;"));
  CHECK_THROWS_WITH(csr(4, 5, 2, v64{0, 1, 3}, v64{1, 3, 2}, vd{1, 2, 3}),
                    ContainsSubstring("row 3 has column 2 after column 3; allowed: columns in [0, 5), sorted"));
  CHECK_THROWS_WITH(csr(4, 5, 2, v64{0, 2}, v64{4, 4}, vd{1, 2}),
                    ContainsSubstring("row 2 has column 4 after column 4"));
}

TEST_CASE("Poisson matrices are the 5- and 7-point Laplacians, any block on its own", "[linalg][poisson]") {
  for (const auto& g : {hetero::poisson_2d(5), hetero::poisson_3d(4), hetero::poisson_matrix(3, 4, 5)}) {
    const auto whole = g.rows(0, g.global_rows());
    std::vector<double> ones(static_cast<std::size_t>(g.global_rows()), 1.0), y(ones.size());
    whole.multiply(ones, y);
    // Row sums: diagonal minus the neighbours inside the grid; interior rows sum to 0.
    double total = 0;
    for (double v : y) {
      CHECK(v >= 0);
      total += v;
    }
    CHECK(total > 0);
    const auto block = g.rows(7, 19);
    const auto slice = whole.rows(7, 19);
    CHECK(std::vector<std::int64_t>(block.col_idx().begin(), block.col_idx().end()) ==
          std::vector<std::int64_t>(slice.col_idx().begin(), slice.col_idx().end()));
    CHECK(std::vector<double>(block.values().begin(), block.values().end()) ==
          std::vector<double>(slice.values().begin(), slice.values().end()));
  }
  CHECK(hetero::poisson_3d(4).rows(0, 64).nonzeros() == 64 * 7 - 6 * 16);
  CHECK_THROWS_WITH(hetero::poisson_matrix(0, 3), ContainsSubstring("grid 0 x 3 x 1"));
}

// Distributed sparse products (halo exchange and gathered vector) against a serial product of
// the whole matrix, on 1, 2 and 3 ranks.
#include <hetero/comm.hpp>
#include <hetero/linalg.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// A random sparse symmetric matrix with a heavy diagonal (every rank draws the same).
hetero::csr_matrix<double> random_matrix(std::int64_t n) {
  auto gen = hetero::testing::rng(91);
  std::vector<hetero::matrix_entry<double>> entries;
  for (std::int64_t i = 0; i < n; ++i) {
    entries.push_back({i, i, 10.0});
    for (int k = 0; k < 3; ++k) {
      const auto j = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(n));
      const double v = static_cast<double>(gen() % 100) / 50.0 - 1.0;
      entries.push_back({i, j, v});
      entries.push_back({j, i, v});
    }
  }
  return {n, n, 0, n, std::move(entries)};
}

// `source`'s distributed products against a serial product of `reference` (the whole matrix;
// by default `source` itself, when it can hand out every row).
template <class Space, class Source, class Reference = Source>
void check_products(const Source& source, const Reference& reference) {
  using matrix = hetero::distributed_csr<Space>;
  hetero::communicator comm;
  const matrix a(source, comm);
  const auto whole = reference.rows(0, reference.global_rows());
  const auto n = static_cast<std::size_t>(source.global_rows());
  std::vector<double> x(n), expected(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 1.0 + static_cast<double>(i % 17) / 8.0;
  whole.multiply(x, expected);

  auto x_halo = a.make_halo_vector();
  auto x_global = typename matrix::vector_type("x", n);
  auto y = a.make_vector(), z = a.make_vector();
  auto hx = Kokkos::create_mirror_view(x_halo);
  auto hg = Kokkos::create_mirror_view(x_global);
  for (std::size_t i = 0; i < a.local_rows(); ++i) hx(i) = x[static_cast<std::size_t>(a.rows().begin) + i];
  for (std::size_t i = 0; i < n; ++i) hg(i) = x[i];
  Kokkos::deep_copy(x_halo, hx);
  Kokkos::deep_copy(x_global, hg);
  a.multiply_halo(x_halo, y);
  a.multiply_global(x_global, z);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, z);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < a.local_rows(); ++i) {
    const double e = expected[static_cast<std::size_t>(a.rows().begin) + i];
    wrong += hy(i) != e || hz(i) != e;  // the same sums in the same order: equal to the last bit
  }
  CHECK(wrong == 0);
  long rows = static_cast<long>(a.local_rows());
  rows = comm.allreduce(hetero::send_buf(rows), hetero::op(hetero::ops::sum{}));
  CHECK(rows == source.global_rows());
}

template <class Space, class Source>
void check_products(const Source& source) {
  check_products<Space>(source, source);
}

}  // namespace

using execution_spaces = std::tuple<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;

TEMPLATE_LIST_TEST_CASE("distributed products equal the serial product", "[linalg][distributed_csr]",
                        execution_spaces) {
  check_products<TestType>(hetero::poisson_2d(13));
  check_products<TestType>(hetero::poisson_3d(7));
  check_products<TestType>(random_matrix(301));
  check_products<TestType>(hetero::read_matrix_market_file(std::string(HETERO_MATRIX_DIR) + "/bcsstk06.mtx.gz"));
}

TEST_CASE("the halo holds only the entries the rows read", "[linalg][distributed_csr]") {
  hetero::communicator comm;
  const auto source = hetero::poisson_3d(12);  // 1728 rows, each reading +-1, +-12 and +-144
  const hetero::distributed_csr<> a(source, comm);
  // Serial reference: the columns outside this rank's rows that its rows read, and the ranks
  // whose rows they are (a rank both receives from and sends to each: the pattern is symmetric).
  // With 12 ranks or fewer a block holds a whole z-plane (144 rows) and reads from the blocks
  // beside it only; with more, from up to two on each side.
  std::vector<std::int64_t> ends;  // each rank's end row
  for (const auto count : a.row_counts()) ends.push_back((ends.empty() ? 0 : ends.back()) + count);
  const auto begin = a.rows().begin, end = a.rows().end;
  std::set<std::int64_t> halo;
  std::set<std::int64_t> owners;
  const auto mine = source.rows(begin, end);
  for (const auto c : mine.col_idx()) {
    if (c >= begin && c < end) continue;
    halo.insert(c);
    owners.insert(std::upper_bound(ends.begin(), ends.end(), c) - ends.begin());
  }
  CHECK(a.halo_size() == halo.size());
  CHECK(a.neighbors() == 2 * owners.size());
  if (comm.size() > 1 && comm.size() <= 12)
    CHECK(owners.size() == static_cast<std::size_t>((comm.rank() > 0) + (comm.rank() + 1 < comm.size())));
  // One entry short of rows and halo (on one rank the halo is empty).
  const hetero::distributed_csr<>::vector_type small("small", a.local_rows() + a.halo_size() - 1);
  CHECK_THROWS_WITH(a.multiply_halo(small, small), ContainsSubstring("needed: rows and halo"));
  CHECK_THROWS_WITH(hetero::distributed_csr<>(hetero::csr_matrix<double>(3, 4, 0, 3, {}), comm),
                    ContainsSubstring("it must be square"));
}

// One rank reads, every rank gets its rows: identical, element by element, to every rank
// reading the whole file and keeping its block; and distributed products on it are right.
TEST_CASE("matrix_market_rows hands each rank the rows it would have read", "[linalg][distributed_csr]") {
  hetero::communicator comm;
  const std::string dir = HETERO_MATRIX_DIR;
  for (const char* name : {"bcsstk01", "bcsstk06", "494_bus", "gr_30_30"}) {
    INFO(name);
    const std::string path = dir + "/" + name + ".mtx.gz";
    const hetero::matrix_market_rows read(path, comm, {.require_spd = true});
    const auto whole = hetero::read_matrix_market_file(path, {.require_spd = true});
    const auto block = hetero::block_rows(whole.global_rows(), comm.size(), comm.rank());
    const auto expected = whole.rows(block.begin, block.end);
    const auto& got = read.local();
    CHECK(read.global_rows() == whole.global_rows());
    CHECK(got.cols() == whole.cols());
    CHECK(got.first_row() == block.begin);
    CHECK(std::ranges::equal(got.row_ptr(), expected.row_ptr()));
    CHECK(std::ranges::equal(got.col_idx(), expected.col_idx()));
    CHECK(std::ranges::equal(got.values(), expected.values()));  // the same bits: no arithmetic
  }
  check_products<Kokkos::DefaultHostExecutionSpace>(hetero::matrix_market_rows(dir + "/bcsstk06.mtx.gz", comm),
                                                    hetero::read_matrix_market_file(dir + "/bcsstk06.mtx.gz"));
}

TEST_CASE("a file rank 0 cannot read raises on every rank with its message", "[linalg][distributed_csr][errors]") {
  hetero::communicator comm;
  const std::string missing = "/nonexistent/hetero-missing.mtx";
  if (comm.rank() == 0)
    CHECK_THROWS_WITH(hetero::matrix_market_rows(missing, comm),
                      ContainsSubstring("cannot open the matrix file '" + missing + "'"));
  else
    CHECK_THROWS_WITH(hetero::matrix_market_rows(missing, comm),
                      ContainsSubstring("matrix_market_rows: rank 0 could not read '" + missing +
                                        "': cannot open the matrix file"));
  // The same type on every rank, and the same as for an unreadable HDF5 file: io_error, with the path.
  try {
    const hetero::matrix_market_rows rows(missing, comm);
    FAIL("no error for a missing file");
  } catch (const hetero::io_error& e) {
    CHECK(e.path() == missing);
  }
  CHECK(comm.allreduce(hetero::send_buf(1), hetero::op(hetero::ops::sum{})) == comm.size());  // in step
}

TEST_CASE("the diagonal block holds this rank's rows' entries in its own columns", "[linalg][distributed_csr]") {
  hetero::communicator comm;
  const hetero::csr_matrix<double> global = random_matrix(203);
  const hetero::distributed_csr<> a(global, comm);
  const hetero::csr_matrix<double> block = a.diagonal_block();
  const hetero::row_block rows = a.rows();
  REQUIRE(block.local_rows() == rows.size());
  REQUIRE(block.cols() == rows.size());
  for (std::int64_t i = 0; i < rows.size(); ++i) {
    // The serial reference: row rows.begin + i of the global matrix, its columns inside the block.
    std::vector<std::pair<std::int64_t, double>> expected, got;
    const auto g = static_cast<std::size_t>(rows.begin + i);
    for (auto k = global.row_ptr()[g]; k < global.row_ptr()[g + 1]; ++k) {
      const std::int64_t c = global.col_idx()[static_cast<std::size_t>(k)];
      if (rows.contains(c)) expected.emplace_back(c - rows.begin, global.values()[static_cast<std::size_t>(k)]);
    }
    for (auto k = block.row_ptr()[static_cast<std::size_t>(i)];
         k < block.row_ptr()[static_cast<std::size_t>(i) + 1]; ++k)
      got.emplace_back(block.col_idx()[static_cast<std::size_t>(k)], block.values()[static_cast<std::size_t>(k)]);
    CHECK(got == expected);  // columns ascending, every value
  }
}

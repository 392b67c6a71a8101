// The Matrix Market reader: every SuiteSparse test matrix, and every kind of malformed or
// non-SPD input, with the line number in the message.
#include <hetero/linalg/matrix_market.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <zlib.h>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::csr_matrix;
using hetero::read_matrix_market;

namespace {

csr_matrix<double> parse(const std::string& text, bool spd = false) {
  std::istringstream in(text);
  return read_matrix_market(in, "m.mtx", {.require_spd = spd});
}

// A(i, j) of a whole matrix (0 when not stored).
double entry(const csr_matrix<double>& a, std::int64_t i, std::int64_t j) {
  for (auto k = a.row_ptr()[static_cast<std::size_t>(i)]; k < a.row_ptr()[static_cast<std::size_t>(i) + 1]; ++k)
    if (a.col_idx()[static_cast<std::size_t>(k)] == j) return a.values()[static_cast<std::size_t>(k)];
  return 0;
}

}  // namespace

TEST_CASE("every test matrix reads as a symmetric matrix with a positive diagonal", "[linalg][matrix_market]") {
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(HETERO_MATRIX_DIR)) {
    if (f.path().string().find(".mtx") == std::string::npos) continue;
    ++files;
    INFO(f.path());
    const auto a = hetero::read_matrix_market_file(f.path().string(), {.require_spd = true});
    CHECK(a.global_rows() == a.cols());
    CHECK(a.local_rows() == a.global_rows());
    CHECK(a.nonzeros() > 0);
    // Symmetric storage was expanded: A(i, j) == A(j, i) for every stored entry.
    std::size_t asymmetric = 0;
    for (std::int64_t i = 0; i < a.local_rows(); ++i)
      for (auto k = a.row_ptr()[static_cast<std::size_t>(i)]; k < a.row_ptr()[static_cast<std::size_t>(i) + 1];
           ++k) {
        const auto j = a.col_idx()[static_cast<std::size_t>(k)];
        asymmetric += entry(a, j, i) != a.values()[static_cast<std::size_t>(k)];
      }
    CHECK(asymmetric == 0);
  }
  CHECK(files == 20);
  // bcsstk01: 48 x 48, 224 stored entries of the lower triangle (48 diagonal): 400 in all.
  const auto b = hetero::read_matrix_market_file(std::string(HETERO_MATRIX_DIR) + "/bcsstk01.mtx.gz");
  CHECK(b.global_rows() == 48);
  CHECK(b.nonzeros() == 400);
}

TEST_CASE("the reader takes comments, blank lines, integer values, general storage and duplicates",
          "[linalg][matrix_market]") {
  const auto a = parse(
      "%%MatrixMarket matrix coordinate integer general\n% a comment\n\n3 3 5\n1 1 4\n2 2 5\n3 3 6\n1 3 1\n"
      "% between entries\n1 3 2\n");
  CHECK(a.global_rows() == 3);
  CHECK(a.nonzeros() == 4);  // the duplicate (1, 3) adds up
  CHECK(entry(a, 0, 2) == 3);
  CHECK(entry(a, 2, 0) == 0);  // general: not mirrored
  const auto s = parse("%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 2.5\n2 1 -1e0\n2 2 2.5\n");
  CHECK(entry(s, 0, 1) == -1);
  CHECK(entry(s, 1, 0) == -1);
  std::vector<double> y(2);
  const std::vector<double> x{1, 1};
  s.multiply(x, y);
  CHECK(y == std::vector<double>{1.5, 1.5});
}

TEST_CASE("malformed Matrix Market input is refused with its line", "[linalg][matrix_market][errors]") {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  CHECK_THROWS_WITH(parse(""), ContainsSubstring("m.mtx:1: the file is empty"));
  CHECK_THROWS_WITH(parse("3 3 1\n"), ContainsSubstring("m.mtx:1: expected the header"));
  CHECK_THROWS_WITH(parse("%%MatrixMarket matrix array real general\n"),
                    ContainsSubstring("m.mtx:1: format 'array' is not supported"));
  CHECK_THROWS_WITH(parse("%%MatrixMarket matrix coordinate pattern general\n"),
                    ContainsSubstring("m.mtx:1: field 'pattern' is not supported"));
  CHECK_THROWS_WITH(parse("%%MatrixMarket matrix coordinate real skew-symmetric\n"),
                    ContainsSubstring("m.mtx:1: symmetry 'skew-symmetric' is not supported"));
  CHECK_THROWS_WITH(parse(head + "% only a comment\n"),
                    ContainsSubstring("m.mtx:3: the file ends before its size line"));
  CHECK_THROWS_WITH(parse(head + "3 3\n"), ContainsSubstring("m.mtx:2: expected the size line"));
  CHECK_THROWS_WITH(parse(head + "3 x 1\n"), ContainsSubstring("m.mtx:2: 'x' is not an integer (columns)"));
  CHECK_THROWS_WITH(parse(head + "2 2 2\n1 1 1\n"),
                    ContainsSubstring("m.mtx:4: the file ends after 1 of the 2 entries its size line declares"));
  CHECK_THROWS_WITH(parse(head + "2 2 1\n1 1 1\n2 2 1\n"),
                    ContainsSubstring("m.mtx:4: more entries than the 1 the size line declares"));
  CHECK_THROWS_WITH(parse(head + "2 2 1\n3 1 1\n"),
                    ContainsSubstring("m.mtx:3: entry (3, 1) lies outside the 2 x 2 matrix"));
  CHECK_THROWS_WITH(parse(head + "2 2 1\n0 1 1\n"), ContainsSubstring("m.mtx:3: entry (0, 1) lies outside"));
  CHECK_THROWS_WITH(parse(head + "2 2 1\n1 1 one\n"), ContainsSubstring("m.mtx:3: 'one' is not a number"));
  CHECK_THROWS_WITH(parse(head + "2 2 1\n1 1\n"), ContainsSubstring("m.mtx:3: expected an entry"));
  CHECK_THROWS_WITH(parse("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n"),
                    ContainsSubstring("m.mtx:3: entry (1, 2) lies above the diagonal"));
  CHECK_THROWS_WITH(parse("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n"),
                    ContainsSubstring("m.mtx:2: a symmetric matrix must be square"));
  CHECK_THROWS_WITH(hetero::read_matrix_market_file("/nonexistent/a.mtx"),
                    ContainsSubstring("cannot open the matrix file '/nonexistent/a.mtx'"));
}

TEST_CASE("a matrix that cannot be SPD is refused when SPD is required", "[linalg][matrix_market][errors]") {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  CHECK_THROWS_WITH(parse(head + "2 3 0\n", true),
                    ContainsSubstring("m.mtx:2: a symmetric positive definite matrix "
                                      "must be square"));
  CHECK_THROWS_WITH(
      parse(head + "2 2 4\n1 1 2\n2 2 2\n1 2 1\n2 1 3\n", true),
      ContainsSubstring("m.mtx:5: A(1, 2) = 1 but A(2, 1) = 3 (line 6): the matrix is not symmetric"));
  CHECK_THROWS_WITH(parse(head + "2 2 3\n1 1 2\n2 2 2\n2 1 3\n", true),
                    ContainsSubstring("m.mtx:5: A(2, 1) = 3 but A(1, 2) = 0 (no entry)"));
  CHECK_THROWS_WITH(parse(head + "2 2 2\n1 1 2\n2 2 -1\n", true),
                    ContainsSubstring("m.mtx:4: diagonal entry A(2, 2) = -1 is not positive"));
  CHECK_THROWS_WITH(parse(head + "2 2 1\n1 1 2\n", true),
                    ContainsSubstring("m.mtx: no entry for A(2, 2): a zero diagonal entry"));
  CHECK_NOTHROW(parse(head + "2 2 4\n1 1 2\n2 2 2\n1 2 1\n2 1 1\n", true));
}

TEST_CASE("plain and damaged files", "[linalg][matrix_market][errors]") {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string plain = (dir / ("hetero-mm-" + std::to_string(::getpid()) + ".mtx")).string();
  {
    std::ofstream out(plain);
    out << "%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 3\n";
  }
  const auto a = hetero::read_matrix_market_file(plain, {.require_spd = true});
  CHECK(a.nonzeros() == 1);
  const std::string damaged = plain + ".gz";
  {
    std::ofstream out(damaged, std::ios::binary);
    const unsigned char gzip_start[] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 3, 0x12, 0x34, 0x56};
    out.write(reinterpret_cast<const char*>(gzip_start), sizeof gzip_start);
  }
  CHECK_THROWS_AS(hetero::read_matrix_market_file(damaged), hetero::io_error);
  std::filesystem::remove(plain);
  std::filesystem::remove(damaged);
}

// Damage that inflates to plausible text first: a gzip file of stored (level 0) blocks, whose
// text is the bytes themselves, with one value turned into a word halfway through. Its CRC-32
// fails only at the end; before, the parser met "x.5" first and called it a bad number, after
// reading every entry above it as data.
TEST_CASE("a damaged gzip file is called damaged before any of it is parsed", "[linalg][matrix_market][errors]") {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string path = (dir / ("hetero-mm-damaged-" + std::to_string(::getpid()) + ".mtx.gz")).string();
  auto gen = hetero::testing::rng(91);
  const int n = 20000 + static_cast<int>(gen() % 20000);  // far more than zlib inflates at once
  std::ostringstream text;
  text << "%%MatrixMarket matrix coordinate real symmetric\n" << n << " " << n << " " << n << "\n";
  for (int i = 1; i <= n; ++i) text << i << " " << i << " 2.5\n";
  gzFile out = gzopen(path.c_str(), "wb0");
  REQUIRE(out != nullptr);
  const std::string body = text.str();
  REQUIRE(gzwrite(out, body.data(), static_cast<unsigned>(body.size())) == static_cast<int>(body.size()));
  gzclose(out);
  CHECK(hetero::read_matrix_market_file(path, {.require_spd = true}).nonzeros() == n);  // whole: read
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const int row = n / 2;
  const std::string line = "\n" + std::to_string(row) + " " + std::to_string(row) + " 2.5\n";
  const auto at = bytes.find(line);
  REQUIRE(at != std::string::npos);
  bytes[at + line.size() - 4] = 'x';  // "2.5" -> "x.5": plausible text, the wrong checksum
  {
    std::ofstream damaged(path, std::ios::binary | std::ios::trunc);
    damaged.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  CHECK_THROWS_WITH(hetero::read_matrix_market_file(path),
                    ContainsSubstring("the compressed data is damaged") &&
                        ContainsSubstring("nothing of it was read as entries"));
  std::filesystem::remove(path);
}

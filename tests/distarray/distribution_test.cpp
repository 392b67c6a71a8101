// Distributions of one axis: every kind against a serial reference, with owner and local
// maps checked (and round-tripped) for every index; the errors with their messages.
#include <hetero/distarray/distribution.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <numeric>
#include <vector>

#include "distarray_support.hpp"

using Catch::Matchers::ContainsSubstring;
using hetero::axis_distribution;
using hetero::distribution;

namespace {

// The serial reference: the owner and local index of every global index, by brute force.
struct reference {
  std::vector<int> owner;
  std::vector<std::int64_t> local;
  std::vector<std::int64_t> sizes;
};

reference make_reference(std::int64_t n, int parts, const distribution& d) {
  reference r{std::vector<int>(static_cast<std::size_t>(n)),
              std::vector<std::int64_t>(static_cast<std::size_t>(n)),
              std::vector<std::int64_t>(static_cast<std::size_t>(parts), 0)};
  std::vector<std::int64_t> block_sizes(static_cast<std::size_t>(parts));
  if (d.kind() == hetero::distribution_kind::block) {
    for (int p = 0; p < parts; ++p) block_sizes[static_cast<std::size_t>(p)] = n / parts + (p < n % parts ? 1 : 0);
  } else if (d.kind() == hetero::distribution_kind::gen_block) {
    block_sizes = d.sizes();
  }
  int part = 0;
  std::int64_t used = 0;
  for (std::int64_t g = 0; g < n; ++g) {
    int p = 0;
    if (d.kind() == hetero::distribution_kind::block || d.kind() == hetero::distribution_kind::gen_block) {
      while (used == block_sizes[static_cast<std::size_t>(part)]) {
        ++part;
        used = 0;
      }
      p = part;
      ++used;
    } else {
      p = static_cast<int>((g / d.width()) % parts);
    }
    r.owner[static_cast<std::size_t>(g)] = p;
    r.local[static_cast<std::size_t>(g)] = r.sizes[static_cast<std::size_t>(p)]++;
  }
  return r;
}

void check_against_reference(std::int64_t n, int parts, const distribution& d) {
  INFO("n = " << n << ", parts = " << parts << ", kind = " << hetero::to_string(d.kind()) << ", width "
              << d.width());
  const axis_distribution axis(n, parts, d);
  const auto ref = make_reference(n, parts, d);
  std::int64_t total = 0;
  for (int p = 0; p < parts; ++p) {
    REQUIRE(axis.local_size(p) == ref.sizes[static_cast<std::size_t>(p)]);
    total += axis.local_size(p);
    const auto map = axis.map(p);
    for (std::int64_t l = 0; l < axis.local_size(p); ++l) {
      const auto g = axis.to_global(p, l);
      REQUIRE(map.to_global(l) == g);
      REQUIRE(axis.owner_of(g) == p);
      REQUIRE(axis.to_local(g) == l);
      REQUIRE(map.to_local(g) == l);
    }
  }
  REQUIRE(total == n);
  for (std::int64_t g = 0; g < n; ++g) {
    REQUIRE(axis.owner_of(g) == ref.owner[static_cast<std::size_t>(g)]);
    REQUIRE(axis.to_local(g) == ref.local[static_cast<std::size_t>(g)]);
  }
  // local_range: the owned indices of any interval are one run of local indices.
  auto rng = hetero::testing::rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::int64_t b = dist_test::uniform(rng, 0, n), e = dist_test::uniform(rng, 0, n);
    if (b > e) std::swap(b, e);
    for (int p = 0; p < parts; ++p) {
      const auto [first, last] = axis.local_range(p, b, e);
      std::int64_t expected = 0;
      for (std::int64_t g = b; g < e; ++g) expected += ref.owner[static_cast<std::size_t>(g)] == p ? 1 : 0;
      REQUIRE(last - first == expected);
      for (std::int64_t l = first; l < last; ++l) {
        const auto g = axis.to_global(p, l);
        REQUIRE((g >= b && g < e));
      }
    }
  }
}

}  // namespace

TEST_CASE("every distribution kind matches a serial reference for every index", "[dist][distribution]") {
  auto rng = hetero::testing::rng(1);
  for (int trial = 0; trial < 60; ++trial) {
    const int parts = static_cast<int>(dist_test::uniform(rng, 1, 7));
    const std::int64_t n = dist_test::uniform(rng, 0, 90);
    check_against_reference(n, parts, distribution::block());
    check_against_reference(n, parts, distribution::cyclic());
    check_against_reference(n, parts, distribution::block_cyclic(dist_test::uniform(rng, 1, 9)));
    check_against_reference(n, parts, dist_test::random_distribution(rng, n, parts, true));
    check_against_reference(n, parts, dist_test::random_distribution(rng, n, parts, false));
  }
}

TEST_CASE("block sizes differ by at most one and leave no rank empty when N >= P", "[dist][distribution]") {
  for (int parts = 1; parts <= 9; ++parts) {
    for (std::int64_t n = 0; n <= 40; ++n) {
      const axis_distribution axis(n, parts, distribution::block());
      std::int64_t smallest = n, largest = 0;
      for (int p = 0; p < parts; ++p) {
        smallest = std::min(smallest, axis.local_size(p));
        largest = std::max(largest, axis.local_size(p));
        if (p > 0) REQUIRE(axis.local_size(p) <= axis.local_size(p - 1));
      }
      REQUIRE(largest - smallest <= 1);
      if (n >= parts) REQUIRE(smallest >= 1);
    }
  }
  // XcalableMP's ceil(N/P) would give 4, 4, 4, 0 here.
  const axis_distribution axis(12, 4, distribution::block());
  CHECK(axis.local_size(3) == 3);
  CHECK(axis.block_range(1) == std::pair<std::int64_t, std::int64_t>{3, 6});
}

TEST_CASE("contiguous axes give block ranges, cyclic ones refuse", "[dist][distribution]") {
  const axis_distribution gen(10, 3, distribution::gen_block({2, 0, 8}));
  CHECK(gen.block_range(0) == std::pair<std::int64_t, std::int64_t>{0, 2});
  CHECK(gen.block_range(1) == std::pair<std::int64_t, std::int64_t>{2, 2});
  CHECK(gen.block_range(2) == std::pair<std::int64_t, std::int64_t>{2, 10});
  CHECK(gen.is_contiguous());
  const axis_distribution cyc(10, 3, distribution::cyclic());
  CHECK_FALSE(cyc.is_contiguous());
  CHECK_THROWS_AS(cyc.block_range(0), hetero::distribution_error);
  CHECK_THROWS_WITH(cyc.block_range(0), ContainsSubstring("cyclic axis gives each part no single interval"));
}

TEST_CASE("bad distributions are refused with the values in the message", "[dist][distribution]") {
  CHECK_THROWS_AS(axis_distribution(10, 3, distribution::gen_block({2, 3, 4})), hetero::distribution_error);
  CHECK_THROWS_WITH(axis_distribution(10, 3, distribution::gen_block({2, 3, 4})),
                    ContainsSubstring("gen_block sizes sum to 9 but the axis has 10 indices"));
  CHECK_THROWS_WITH(axis_distribution(10, 2, distribution::gen_block({5, 3, 2})),
                    ContainsSubstring("gen_block has 3 sizes but the axis is distributed over 2 parts"));
  CHECK_THROWS_AS(distribution::gen_block({4, -1}), hetero::invalid_argument);
  CHECK_THROWS_WITH(distribution::gen_block({4, -1}), ContainsSubstring("gen_block size of part 1 is -1"));
  CHECK_THROWS_WITH(distribution::block_cyclic(0), ContainsSubstring("block_cyclic width is 0"));
  CHECK_THROWS_WITH(axis_distribution(-4, 2, distribution::block()), ContainsSubstring("axis extent is -4"));
  CHECK_THROWS_WITH(axis_distribution(4, 0, distribution::block()), ContainsSubstring("number of parts is 0"));
  const axis_distribution axis(10, 3, distribution::cyclic());
  CHECK_THROWS_AS(axis.owner_of(10), hetero::invalid_argument);
  CHECK_THROWS_WITH(axis.owner_of(10), ContainsSubstring("global index 10 is outside the axis [0, 10)"));
  CHECK_THROWS_WITH(axis.owner_of(-1), ContainsSubstring("global index -1"));
  CHECK_THROWS_WITH(axis.local_size(3), ContainsSubstring("part 3 is outside [0, 3)"));
  CHECK_THROWS_WITH(axis.to_global(2, 3),
                    ContainsSubstring("local index 3 is outside part 2's block of 3 indices"));
  CHECK(std::string(hetero::to_string(hetero::distribution_kind::block_cyclic)) == "block_cyclic");
}

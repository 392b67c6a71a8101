// hetero::rank_set and hetero::owners: the ranks of `on` and `out(...).to(...)` clauses.
#include <hetero/task/rank_set.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <vector>

using Catch::Matchers::ContainsSubstring;

namespace {

std::vector<int> members(const hetero::rank_set& s, int world) {
  std::vector<int> out;
  s.for_each(world, [&](int r) { out.push_back(r); });
  return out;
}

// A distribution-like object: what the dist module's distributions offer.
struct block_of_two {
  int owner_of(std::int64_t i) const { return static_cast<int>(i / 2); }
};

}  // namespace

TEST_CASE("rank sets hold sorted unique ranks, or every rank", "[task]") {
  const hetero::rank_set list{3, 1, 3, 0};
  CHECK(members(list, 8) == std::vector<int>{0, 1, 3});
  CHECK(list.contains(1));
  CHECK_FALSE(list.contains(2));
  CHECK(list.size(8) == 3);
  CHECK(list.to_string() == "{0, 1, 3}");
  CHECK(members(list.without(1, 8), 8) == std::vector<int>{0, 3});

  const auto all = hetero::rank_set::all();
  CHECK(all.is_all());
  CHECK(all.contains(1000));
  CHECK(all.size(5) == 5);
  CHECK(members(all, 3) == std::vector<int>{0, 1, 2});
  CHECK(members(all.without(1, 3), 3) == std::vector<int>{0, 2});
  CHECK(all.to_string() == "all ranks");

  CHECK(hetero::rank_set{}.empty());
  CHECK(hetero::rank_set(4).listed() == std::vector<int>{4});
  CHECK(members(hetero::rank_set::range(2, 5), 9) == std::vector<int>{2, 3, 4});
  CHECK(hetero::rank_set::range(5, 2).empty());
  CHECK(hetero::rank_set(std::vector<long>{2, 2, 1}).listed() == std::vector<int>{1, 2});
}

TEST_CASE("owners gives the ranks holding a range of a distributed index space (the seed's T(k+1:))", "[task]") {
  const int p = 3;
  const auto cyclic = [p](std::int64_t i) { return static_cast<int>(i % p); };
  CHECK(members(hetero::owners(cyclic, 4, 6), p) == std::vector<int>{1, 2});
  CHECK(members(hetero::owners(cyclic, 4, 32), p) == std::vector<int>{0, 1, 2});
  CHECK(hetero::owners(cyclic, 7, 7).empty());
  CHECK(members(hetero::owners(block_of_two{}, 1, 4), 4) == std::vector<int>{0, 1});
}

TEST_CASE("rank sets naming ranks outside the communicator are refused", "[task]") {
  CHECK_NOTHROW(hetero::rank_set{0, 2}.check(3, "on(...)"));
  CHECK_NOTHROW(hetero::rank_set::all().check(1, "on(...)"));
  CHECK_THROWS_WITH(hetero::rank_set({0, 3}).check(3, "on(...)"),
                    ContainsSubstring("on(...) names rank 3 but the task graph's communicator has 3 rank(s); "
                                      "allowed: 0 to 2"));
  CHECK_THROWS_AS(hetero::rank_set({-1}).check(3, "to"), hetero::invalid_argument);
}

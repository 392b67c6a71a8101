#include <hetero/core/error.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using Catch::Matchers::ContainsSubstring;

namespace {
void take_weight(double w) { HETERO_EXPECTS(w >= 0.0 && w <= 1.0, "cpu weight ", w, " is outside [0, 1]"); }
}  // namespace

TEST_CASE("HETERO_EXPECTS throws invalid_argument with the message parts", "[core][error]") {
  CHECK_NOTHROW(take_weight(0.0));
  CHECK_NOTHROW(take_weight(1.0));
  CHECK_THROWS_AS(take_weight(1.5), hetero::invalid_argument);
  CHECK_THROWS_WITH(take_weight(-0.25), "cpu weight -0.25 is outside [0, 1]");
}

TEST_CASE("every hetero exception is a hetero::error and a std::runtime_error", "[core][error]") {
  auto is_hetero_error = [](auto&& thrower) {
    try {
      thrower();
    } catch (const hetero::error& e) {
      return std::string(e.what()) == "boom";
    }
    return false;
  };
  CHECK(is_hetero_error([] { throw hetero::invalid_argument("boom"); }));
  CHECK(is_hetero_error([] { throw hetero::distribution_error("boom"); }));
  CHECK(is_hetero_error([] { throw hetero::backend_error("boom"); }));
  CHECK(is_hetero_error([] { throw hetero::deadlock_error("boom"); }));
  CHECK(is_hetero_error([] { throw hetero::runtime_error("boom"); }));
  CHECK(is_hetero_error([] { throw hetero::mpi_error("MPI_Send", 3, "boom"); }));
  CHECK_THROWS_AS(hetero::detail::raise<hetero::deadlock_error>("x"), std::runtime_error);
}

TEST_CASE("detail::message concatenates any streamable parts", "[core][error]") {
  CHECK(hetero::detail::message("n = ", 42, ", w = ", 0.5, ", ", 'c') == "n = 42, w = 0.5, c");
  CHECK_THAT(hetero::detail::message("sizes sum to ", 9L, " but N is ", 10U), ContainsSubstring("9 but N is 10"));
}

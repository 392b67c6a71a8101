// The manual tuner and the seed paper's fixed-step rule, on an injected cost model (no clock).
#include <hetero/exec/tuner.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>

using Catch::Matchers::ContainsSubstring;

namespace {

// A run of n items with weight w on a device 4x faster than the host, no fixed costs.
hetero::split_sample run(std::int64_t n, double w) {
  const auto host = static_cast<std::int64_t>(std::llround(w * static_cast<double>(n)));
  return {n - host, host, 1e-9 * static_cast<double>(n - host), 4e-9 * static_cast<double>(host), w};
}

}  // namespace

TEST_CASE("the manual tuner keeps the weight it was given", "[exec][tuner]") {
  hetero::manual_tuner manual;
  CHECK(manual.next_weight(run(1000, 0.37)) == 0.37);
  CHECK(manual.next_weight(run(1000, 0.0)) == 0.0);
  CHECK(std::string(manual.name()) == "manual");
}

TEST_CASE("the fixed-step rule moves the weight 0.01 per run toward equal times", "[exec][tuner]") {
  hetero::fixed_step_tuner paper;
  CHECK(std::string(paper.name()) == "fixed_step");
  // Host slower at w = 0.5 (4x per item): down by one step.
  CHECK(paper.next_weight(run(1000, 0.5)) == Catch::Approx(0.49));
  // Host faster at w = 0.1: up by one step.
  CHECK(paper.next_weight(run(1000, 0.1)) == Catch::Approx(0.11));
  // From the paper's start (0.2) the balance 1/5 is reached and then the weight oscillates
  // around it one step wide.
  double w = 0.4;
  int steps = 0;
  while (w > 0.2 + 1e-9 && steps < 100) {
    w = paper.next_weight(run(100000, w));
    ++steps;
  }
  CHECK(steps == 20);  // |0.4 - 0.2| / 0.01
  for (int k = 0; k < 10; ++k) {
    w = paper.next_weight(run(100000, w));
    CHECK(std::abs(w - 0.2) <= 0.01 + 1e-9);
  }
  CHECK(paper.next_weight(run(100, 0.0)) == Catch::Approx(0.01));  // never below 0
  CHECK(hetero::fixed_step_tuner(0.05).next_weight(run(1000, 0.5)) == Catch::Approx(0.45));
  CHECK_THROWS_WITH(hetero::fixed_step_tuner(0.0), ContainsSubstring("step is 0"));
}

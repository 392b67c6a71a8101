#include <hetero/power/phase_detection.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "random.hpp"

using hetero::power::detect_phase_length;
using hetero::power::phase_detection_options;

namespace {

// Active fraction of each frame for a loop of `period` frames that computes for `duty` of each
// period and waits for the rest, starting at `offset` frames, plus Gaussian noise. Each frame
// integrates the square wave over 64 sub-steps.
std::vector<double> square_wave(std::size_t frames, double period, double duty, double offset, double noise,
                                std::mt19937_64& rng) {
  std::normal_distribution<double> gauss(0.0, noise);
  std::vector<double> series(frames);
  for (std::size_t t = 0; t < frames; ++t) {
    double active = 0;
    for (int s = 0; s < 64; ++s) {
      const double x = (static_cast<double>(t) + (s + 0.5) / 64 + offset) / period;
      active += (x - std::floor(x)) < duty ? 1.0 / 64 : 0.0;
    }
    series[t] = active + (noise > 0 ? gauss(rng) : 0.0);
  }
  return series;
}

}  // namespace

TEST_CASE("a planted period is recovered within one frame from noisy series", "[power][phase]") {
  auto rng = hetero::testing::rng(11);
  std::uniform_real_distribution<double> period_of(5.0, 60.0), duty_of(0.3, 0.8), offset_of(0.0, 60.0);
  phase_detection_options options;
  options.min_frames = 1;
  for (int round = 0; round < 60; ++round) {
    const double period = period_of(rng);
    const auto series = square_wave(512, period, duty_of(rng), offset_of(rng), 0.15, rng);
    const auto estimate = detect_phase_length(series, options);
    INFO("planted period " << period << " frames, round " << round);
    REQUIRE(estimate.found);
    CHECK(std::abs(estimate.period_frames - period) <= 1.0);
    CHECK(estimate.correlation > 0.5);
  }
}

TEST_CASE("the seed's case: a 12-frame period yields a 24-frame phase at min_frames 24", "[power][phase]") {
  auto rng = hetero::testing::rng(12);
  const auto series = square_wave(256, 12.0, 0.6, 3.0, 0.1, rng);
  phase_detection_options options;
  options.min_frames = 24;
  const auto estimate = detect_phase_length(series, options);
  REQUIRE(estimate.found);
  CHECK(estimate.period_frames == Catch::Approx(12.0).margin(0.5));
  CHECK(estimate.frames == 24);
  options.min_frames = 30;  // smallest multiple of 12 that is >= 30
  CHECK(detect_phase_length(series, options).frames == 36);
  options.min_frames = 5;  // the period itself when it is long enough
  CHECK(detect_phase_length(series, options).frames == 12);
}

TEST_CASE("the phase is the smallest multiple of the period of at least min_frames, up to 2^32 frames",
          "[power][phase]") {
  auto rng = hetero::testing::rng(16);
  std::uniform_real_distribution<double> period_of(5.0, 40.0);
  std::uniform_int_distribution<std::size_t> least_of(1, 5000);
  for (int round = 0; round < 20; ++round) {
    const auto series = square_wave(256, period_of(rng), 0.5, 0.0, 0.02, rng);
    auto estimate = detect_phase_length(series, {.min_frames = 1});
    REQUIRE(estimate.found);
    const double period = estimate.period_frames;
    for (const std::size_t least : {least_of(rng), least_of(rng) * 1000}) {
      std::size_t expected = 0;  // the multiples one by one
      for (double k = 1; expected < least; ++k) expected = static_cast<std::size_t>(std::llround(k * period));
      INFO("period " << period << ", min_frames " << least);
      CHECK(detect_phase_length(series, {.min_frames = least}).frames == expected);
    }
    // The longest allowed: a rounded multiple of the period, and the one before it is too short.
    const std::size_t most = hetero::power::most_phase_frames;
    const std::size_t frames = detect_phase_length(series, {.min_frames = most}).frames;
    const double k = std::round(static_cast<double>(frames) / period);
    INFO("period " << period << ", min_frames 2^32: " << frames);
    CHECK(frames >= most);
    CHECK(frames == static_cast<std::size_t>(std::llround(k * period)));
    CHECK(static_cast<std::size_t>(std::llround((k - 1) * period)) < most);
  }
}

TEST_CASE("series without a period are reported as such", "[power][phase]") {
  const std::vector<double> constant(200, 0.004);
  CHECK_FALSE(detect_phase_length(constant).found);
  auto rng = hetero::testing::rng(13);
  std::normal_distribution<double> gauss(0.5, 0.2);
  std::vector<double> noise(1024);
  for (auto& x : noise) x = gauss(rng);
  phase_detection_options options;
  options.max_lag = 256;
  CHECK_FALSE(detect_phase_length(noise, options).found);
}

TEST_CASE("detection options it cannot use are refused, not searched for ever", "[power][phase][errors]") {
  using Catch::Matchers::ContainsSubstring;
  // min_correlation 0 took a series without any peak as periodic, and peak_tolerance above 1
  // looked for a peak higher than the highest: both searched past the function's end.
  auto rng = hetero::testing::rng(15);
  const auto periodic = square_wave(200, 10.0, 0.5, 0.0, 0.05, rng);
  const std::vector<double> constant(32, 1.0);
  CHECK_THROWS_WITH(detect_phase_length(constant, {.min_correlation = 0.0}),
                    ContainsSubstring("min_correlation is 0; allowed: (0, 1]"));
  CHECK_THROWS_WITH(detect_phase_length(periodic, {.peak_tolerance = 1.5}),
                    ContainsSubstring("peak_tolerance is 1.5; allowed: (0, 1]"));
  CHECK_THROWS_WITH(detect_phase_length(periodic, {.peak_tolerance = std::nan("")}),
                    ContainsSubstring("peak_tolerance is nan"));
  CHECK_THROWS_WITH(hetero::power::phase_detector(64, {.min_frames = 0}), ContainsSubstring("min_frames is 0"));
  // A huge min_frames stepped through the multiples of the period one at a time (for ever near
  // 2^64, where k + 1 == k in a double).
  CHECK_THROWS_WITH(detect_phase_length(periodic, {.min_frames = std::numeric_limits<std::size_t>::max()}),
                    ContainsSubstring("min_frames is 18446744073709551615; allowed: 1 to 4294967296"));
  CHECK(detect_phase_length(periodic, {.peak_tolerance = 1.0}).found);  // the highest peak itself
}

TEST_CASE("the online detector keeps a sliding window", "[power][phase]") {
  auto rng = hetero::testing::rng(14);
  hetero::power::phase_detector detector(128);
  const auto first = square_wave(200, 10.0, 0.5, 0.0, 0.05, rng);
  for (std::size_t i = 0; i < 100; ++i) detector.add(first[i]);
  CHECK_FALSE(detector.ready());
  for (std::size_t i = 100; i < 200; ++i) detector.add(first[i]);
  CHECK(detector.ready());
  CHECK(detector.size() == 128);
  CHECK(detector.estimate().period_frames == Catch::Approx(10.0).margin(1.0));
  // The loop changes its period: after a full window only the new period is seen.
  const auto second = square_wave(128, 17.0, 0.5, 0.0, 0.05, rng);
  for (double x : second) detector.add(x);
  CHECK(detector.estimate().period_frames == Catch::Approx(17.0).margin(1.0));
  CHECK(detector.correlation().size() == 65);
}

TEST_CASE("phase detection refuses bad input", "[power][phase]") {
  using Catch::Matchers::ContainsSubstring;
  const std::vector<double> tiny(4, 1.0);
  CHECK_THROWS_WITH(detect_phase_length(tiny), ContainsSubstring("at least 8 frames; got 4"));
  CHECK_THROWS_AS(hetero::power::phase_detector(3), hetero::invalid_argument);
  const std::vector<double> series(16, 1.0);
  CHECK_THROWS_WITH(hetero::power::autocorrelation(series, 16), ContainsSubstring("lag must be below"));
  phase_detection_options zero;
  zero.min_frames = 0;
  CHECK_THROWS_WITH(detect_phase_length(series, zero), ContainsSubstring("min_frames is 0"));
}

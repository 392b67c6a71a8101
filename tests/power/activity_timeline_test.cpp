#include <hetero/power/activity_timeline.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <random>
#include <vector>

#include "random.hpp"

using Catch::Approx;
using hetero::power::activity_timeline;

TEST_CASE("frames split active time at their boundaries", "[power][timeline]") {
  activity_timeline t(0.004, 16, 2.0);
  t.begin_wait(0, 0.001);   // active [0, 1) ms
  t.end_wait(0, 0.006);     // waiting [1, 6) ms
  t.begin_wait(0, 0.0105);  // active [6, 10.5) ms
  t.end_wait(0, 0.011);
  t.advance(0.012);
  REQUIRE(t.finished_frames() == 3);
  CHECK(t.frame_at(0).active_seconds == Approx(0.001));
  CHECK(t.frame_at(1).active_seconds == Approx(0.002));   // [6, 8)
  CHECK(t.frame_at(2).active_seconds == Approx(0.0035));  // [8, 10.5) and [11, 12)
  CHECK(t.frame_at(2).work_ghz_seconds == Approx(0.007));
  CHECK(t.active_seconds() == Approx(0.0065));
  CHECK(t.work_ghz_seconds() == Approx(0.013));
  CHECK(t.active());
}

TEST_CASE("the rank waits only while every tracked thread waits", "[power][timeline]") {
  activity_timeline t(1.0, 8, 1.0);
  t.attach(0, 0.0);
  t.attach(1, 0.0);
  t.begin_wait(0, 1.0);  // thread 1 still active
  CHECK(t.active());
  t.begin_wait(1, 2.0);  // both wait from 2 to 3
  CHECK_FALSE(t.active());
  t.end_wait(0, 3.0);
  t.end_wait(1, 4.0);
  t.begin_wait(1, 5.0);
  t.detach(0, 6.0);  // thread 0 leaves: thread 1 waits alone from 6 to 7
  t.end_wait(1, 7.0);
  t.advance(8.0);
  CHECK(t.active_seconds() == Approx(6.0));
  for (std::int64_t f = 0; f < 8; ++f) CHECK(t.frame_at(f).active_seconds == Approx(f == 2 || f == 6 ? 0.0 : 1.0));
  // Nested or repeated transitions of one thread change nothing; unknown ends are ignored.
  t.end_wait(3, 8.5);
  t.begin_wait(1, 9.0);
  t.begin_wait(1, 9.5);
  t.advance(10.0);
  CHECK(t.active_seconds() == Approx(7.0));
}

TEST_CASE("no tracked thread means active; frequency changes weigh the work", "[power][timeline]") {
  activity_timeline t(0.5, 4, 1.0);
  t.advance(1.0);
  t.set_frequency(1.0, 2.0);
  t.advance(2.0);
  CHECK(t.active_seconds() == Approx(2.0));
  CHECK(t.work_ghz_seconds() == Approx(3.0));
  CHECK(t.frame_at(3).work_ghz_seconds == Approx(1.0));
}

TEST_CASE("phase marks carry cumulative activity; an origin aligns frames", "[power][timeline]") {
  activity_timeline t(0.1, 4, 1.5);
  t.begin_wait(0, 0.05);
  t.mark_phase(0.08);
  t.end_wait(0, 0.1);
  t.set_origin(0.25);
  t.mark_phase(0.3);
  t.advance(0.46);
  REQUIRE(t.mark_count() == 2);
  CHECK(t.marks()[0].active_seconds == Approx(0.05));
  CHECK(t.marks()[1].work_ghz_seconds == Approx(1.5 * 0.25));
  CHECK(t.marks()[1].seconds == Approx(0.3));
  REQUIRE(t.finished_frames() == 2);  // [0.25, 0.35), [0.35, 0.45)
  CHECK(t.frame_at(0).active_seconds == Approx(0.1));
  CHECK(t.frame_at(0).id == 0);
  // The ring keeps the last 4 frames; a long quiet stretch is skipped in bulk.
  t.advance(1000.0);
  CHECK(t.finished_frames() == 9997);
  CHECK(t.first_kept_frame() == 9993);
  CHECK(t.frame_at(9996).active_seconds == Approx(0.1));
  CHECK(t.active_seconds() == Approx(1000.0 - 0.05));
  CHECK_THROWS_WITH(t.frame_at(5), Catch::Matchers::ContainsSubstring("frame 5 is not kept"));
}

TEST_CASE("random transitions: frames add up to the totals, and to a direct sum", "[power][timeline]") {
  auto rng = hetero::testing::rng(21);
  std::uniform_real_distribution<double> gap(0.0, 0.01);
  std::uniform_int_distribution<int> coin(0, 1);
  activity_timeline t(0.004, 100000, 1.0);
  double now = 0, active = 0;
  bool waiting = false;
  for (int i = 0; i < 5000; ++i) {
    const double next = now + gap(rng);
    if (!waiting) active += next - now;
    now = next;
    if (coin(rng)) {
      t.begin_wait(0, now);
      waiting = true;
    } else {
      t.end_wait(0, now);
      waiting = false;
    }
  }
  const double end = 0.004 * std::floor(now / 0.004 + 1);
  if (!waiting) active += end - now;
  t.advance(end);
  double sum = 0;
  for (std::int64_t f = 0; f < t.finished_frames(); ++f) {
    CHECK(t.frame_at(f).active_seconds <= 0.004 + 1e-12);
    sum += t.frame_at(f).active_seconds;
  }
  CHECK(sum == Approx(active).epsilon(1e-9));
  CHECK(t.active_seconds() == Approx(active).epsilon(1e-9));
}

TEST_CASE("a zero or negative frame length is refused", "[power][timeline]") {
  using Catch::Matchers::ContainsSubstring;
  CHECK_THROWS_WITH(activity_timeline(0.0, 4, 1.0), ContainsSubstring("frame length is 0 s; it must be positive"));
  CHECK_THROWS_AS(activity_timeline(-1.0, 4, 1.0), hetero::invalid_argument);
  CHECK_THROWS_AS(activity_timeline(0.004, 0, 1.0), hetero::invalid_argument);
}

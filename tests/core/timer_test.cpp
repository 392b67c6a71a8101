#include <hetero/core/timer.hpp>

#include <catch2/catch_test_macros.hpp>

#include <thread>

TEST_CASE("the stopwatch measures at least the time slept and restarts", "[core][timer]") {
  hetero::stopwatch watch;
  const double before = hetero::wall_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(hetero::wall_seconds() - before >= 0.019);
  CHECK(watch.seconds() >= 0.019);
  const double first = watch.restart();
  CHECK(first >= 0.019);
  CHECK(watch.seconds() < first);
  CHECK(watch.seconds() >= 0.0);
}

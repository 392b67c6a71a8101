// Where a task with a host and a device body goes (task/detail/placement.hpp), decision by
// decision, from body times given to the model: calibration (a host far slower than the device
// measured after one run, a device always after three, a side whose first run is out gets no
// second one, the host no second one before the device's first is back, at most three tries,
// then the runs so far; a try whose task never ran given back), the model's choice, and the
// re-checks of the slower side (per data size, the rarer the slower it is, and only where it
// could finish first at a quarter of its time, or where a single decisive run made it slower). No task runs: the
// times are set, so nothing depends on the machine's speed.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>

#include <array>
#include <cstddef>

namespace placement_test {

using hetero::detail::label_record;
using hetero::detail::task_side;

constexpr std::size_t bytes = 4096;
constexpr std::array<double, 2> nothing{0.0, 0.0};  // no queued work, no move

// One decision for data of `size` with `busy` queued work: the side.
task_side decide(label_record& r, const std::array<double, 2>& busy = nothing, std::size_t size = bytes) {
  return hetero::detail::choose_side(r, size, busy, nothing).side;
}

// `n` decisions; how many went to the device.
int device_choices(label_record& r, int n, const std::array<double, 2>& busy = nothing, std::size_t size = bytes) {
  int device = 0;
  for (int i = 0; i < n; ++i) device += decide(r, busy, size) == task_side::device ? 1 : 0;
  return device;
}

TEST_CASE("a host far slower than the device is measured after one run", "[task][placement]") {
  label_record r("gemm");
  const auto first = hetero::detail::choose_side(r, bytes, nothing, nothing);
  CHECK(first.side == task_side::device);  // a tie: the device first
  CHECK(first.trying);
  CHECK(decide(r) == task_side::host);  // then the other side
  // Neither first run has come back: a burst goes to the device, not a second try on the host.
  CHECK(device_choices(r, 10) == 10);
  r.record(task_side::device, bytes, 1e-3);
  r.record(task_side::host, bytes, 10e-3);  // 10x the device: one run says enough
  CHECK(r.peek(bytes).seconds[0] == 10e-3);
  CHECK(r.peek(bytes).seconds[1] < 0);  // the device still calibrates (three runs)
  CHECK(device_choices(r, 5) == 5);
  r.record(task_side::device, bytes, 1.2e-3);
  r.record(task_side::device, bytes, 0.9e-3);
  CHECK(r.peek(bytes).seconds[1] == 1e-3);  // the median of three
  CHECK(device_choices(r, 200) == 200);     // its one run's re-check is not due before decision 640
}

TEST_CASE("the host gets no second try before the device's first run is back", "[task][placement]") {
  label_record r("gemm");
  CHECK(decide(r) == task_side::device);
  CHECK(decide(r) == task_side::host);
  r.record(task_side::host, bytes, 10e-3);  // the host's run comes back first
  CHECK(device_choices(r, 5) == 5);         // not the host again: its one run may be enough
  r.record(task_side::device, bytes, 1e-3);
  CHECK(r.peek(bytes).seconds[0] == 10e-3);  // and it is
}

TEST_CASE("a host not far slower, and a device whose first run is slow, take three runs", "[task][placement]") {
  SECTION("the host at 3x the device") {
    label_record r("trsm");
    CHECK(decide(r) == task_side::device);
    CHECK(decide(r) == task_side::host);
    r.record(task_side::device, bytes, 1e-3);
    r.record(task_side::host, bytes, 3e-3);
    CHECK(r.peek(bytes).seconds[0] < 0);
    // Each side has one run back and one try used: two more tries each, the device first.
    CHECK(decide(r) == task_side::device);
    CHECK(decide(r) == task_side::host);
    CHECK(decide(r) == task_side::device);
    CHECK(decide(r) == task_side::host);
    // Tries out, none back: the runs so far decide as the model would.
    CHECK(decide(r) == task_side::device);             // 1 ms against 3 ms
    CHECK(decide(r, {0.0, 3e-3}) == task_side::host);  // 4 ms against 3 ms
    CHECK(hetero::detail::choose_side(r, bytes, nothing, nothing).trying == false);
  }
  SECTION("the device's first run 100x the host's (a start paid)") {
    label_record r("potrf");
    r.record(task_side::host, bytes, 1e-3);
    r.record(task_side::device, bytes, 100e-3);
    CHECK(r.peek(bytes).seconds[1] < 0);
    CHECK(r.peek(bytes).seconds[0] < 0);
    r.record(task_side::device, bytes, 0.1e-3);
    r.record(task_side::device, bytes, 0.1e-3);
    r.record(task_side::host, bytes, 1e-3);
    r.record(task_side::host, bytes, 1e-3);
    CHECK(r.peek(bytes).seconds[1] == 0.1e-3);  // the slow start is not the estimate
    CHECK(decide(r) == task_side::device);
  }
}

TEST_CASE("a calibration try whose task never ran is given back", "[task][placement]") {
  label_record r("potrf");
  CHECK(decide(r) == task_side::device);
  CHECK(decide(r) == task_side::host);
  CHECK(decide(r) == task_side::device);  // both first tries out: the device meanwhile
  r.abandon_try(task_side::host, bytes);  // the host's task was skipped (an error elsewhere)
  CHECK(decide(r) == task_side::host);    // so the host is tried again
}

TEST_CASE("the slower side is re-checked rarely, and only where it could finish first", "[task][placement]") {
  label_record r("syrk");
  for (int i = 0; i < 3; ++i) {
    r.record(task_side::device, bytes, 1e-3);
    r.record(task_side::host, bytes, 10e-3);
  }
  // The host 10x slower: a re-check every 640 decisions (64 times 10), where it could win.
  const int every = 10 * static_cast<int>(label_record::recheck_every);
  // Idle: the host at a quarter of its time (2.5 ms) is still later than the device (1 ms).
  CHECK(device_choices(r, 2 * every) == 2 * every);
  // 5 ms queued on the device: the device still finishes first (6 against 10 ms), but the host at
  // 2.5 ms would not; it is tried once per 640 decisions.
  const std::array<double, 2> queued{0.0, 5e-3};
  CHECK(device_choices(r, 2 * every, queued) == 2 * every - 2);
  // 20 ms queued on the device: the host finishes first.
  CHECK(decide(r, {0.0, 20e-3}) == task_side::host);
}

TEST_CASE("a host whose one decisive run was slowed is re-checked, and shares the label again",
          "[task][placement]") {
  label_record r("gemm");
  for (int i = 0; i < 3; ++i) r.record(task_side::device, bytes, 1e-3);
  r.record(task_side::host, bytes, 10e-3);  // as fast as the device, but this run lost its core
  REQUIRE(r.peek(bytes).seconds[0] == 10e-3);
  // Idle, the host at a quarter of that (2.5 ms) cannot win; its one run is re-checked all the
  // same, once per 640 decisions (64 times 10).
  const int every = 10 * static_cast<int>(label_record::recheck_every);
  CHECK(device_choices(r, every - 1) == every - 1);
  CHECK(decide(r) == task_side::host);
  r.record(task_side::host, bytes, 1e-3);  // its usual time
  // Two runs, neither decisive: a third (calibration), then the model on equal medians.
  CHECK(hetero::detail::choose_side(r, bytes, nothing, nothing).trying);
  r.record(task_side::host, bytes, 1e-3);
  CHECK(r.peek(bytes).seconds[0] == 1e-3);
  CHECK(decide(r, {0.0, 1e-3}) == task_side::host);
  CHECK(decide(r, {1e-3, 0.0}) == task_side::device);
}

TEST_CASE("a host confirmed far slower by a second run is not re-checked where it cannot win",
          "[task][placement]") {
  label_record r("gemm");
  for (int i = 0; i < 3; ++i) r.record(task_side::device, bytes, 1e-3);
  r.record(task_side::host, bytes, 10e-3);
  const int every = 10 * static_cast<int>(label_record::recheck_every);
  CHECK(device_choices(r, every) == every - 1);  // the one re-check of its single run
  r.record(task_side::host, bytes, 10e-3);       // confirmed
  CHECK(device_choices(r, 3 * every) == 3 * every);
}

TEST_CASE("sizes are calibrated and re-checked apart", "[task][placement]") {
  label_record r("tile");
  constexpr std::size_t small = 1024, large = std::size_t{1} << 20;
  CHECK(label_record::size_class(small) != label_record::size_class(large));
  for (int i = 0; i < 3; ++i) {
    r.record(task_side::device, small, 1e-3);
    r.record(task_side::host, small, 1.5e-3);  // 1.5x: re-checked every 96 decisions
    r.record(task_side::device, large, 1e-3);
    r.record(task_side::host, large, 10e-3);  // 10x: every 640
  }
  CHECK(r.peek(small).seconds[0] == 1.5e-3);
  CHECK(r.peek(large).seconds[0] == 10e-3);
  // Decisions on both sizes, each where its host could win a re-check (the large one with 5 ms
  // queued on the device): the small size's frequent re-checks do not hold back the large one's.
  int small_host = 0, large_host = 0;
  for (int i = 0; i < 1280; ++i) {
    small_host += decide(r, nothing, small) == task_side::host ? 1 : 0;
    large_host += decide(r, {0.0, 5e-3}, large) == task_side::host ? 1 : 0;
  }
  CHECK(small_host == 1280 / 96);
  CHECK(large_host == 2);
}

}  // namespace placement_test

// Where a task with a host and a device body goes (task/detail/placement.hpp), decision by
// decision, from body times given to the model: calibration (a host far slower than the device
// measured after one run, a device always after three, a side whose first run is out gets no
// second one, at most three tries, then the runs so far), the model's choice, and the re-checks
// of the slower side (the rarer the slower it is, and only where it could finish first at a
// quarter of its time). No task runs:
// the times are set, so nothing depends on the machine's speed.
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>

#include <array>
#include <cstddef>

namespace placement_test {

using hetero::detail::choose_side;
using hetero::detail::label_record;
using hetero::detail::task_side;

constexpr std::size_t bytes = 4096;
constexpr std::array<double, 2> nothing{0.0, 0.0};  // no queued work, no move

// `n` decisions for an idle graph; how many went to the device.
int device_choices(label_record& r, int n, const std::array<double, 2>& busy = nothing) {
  int device = 0;
  for (int i = 0; i < n; ++i) device += choose_side(r, bytes, busy, nothing) == task_side::device ? 1 : 0;
  return device;
}

TEST_CASE("a host far slower than the device is measured after one run", "[task][placement]") {
  label_record r("gemm");
  CHECK(choose_side(r, bytes, nothing, nothing) == task_side::device);  // a tie: the device first
  CHECK(choose_side(r, bytes, nothing, nothing) == task_side::host);    // then the other side
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
  CHECK(device_choices(r, 200) == 200);     // no re-check: the host cannot win at 2.5 ms
}

TEST_CASE("a host not far slower, and a device whose first run is slow, take three runs", "[task][placement]") {
  SECTION("the host at 3x the device") {
    label_record r("trsm");
    r.record(task_side::device, bytes, 1e-3);
    r.record(task_side::device, bytes, 1e-3);
    r.record(task_side::host, bytes, 3e-3);
    CHECK(r.peek(bytes).seconds[0] < 0);
    CHECK(choose_side(r, bytes, nothing, nothing) == task_side::host);  // 1 run against the device's 2
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
    CHECK(choose_side(r, bytes, nothing, nothing) == task_side::device);
  }
}

TEST_CASE("a side not measured yet takes three tries at most, then its runs so far count", "[task][placement]") {
  label_record r("axpy");
  r.record(task_side::device, bytes, 1e-3);
  r.record(task_side::host, bytes, 1.5e-3);  // not decisive: both calibrate
  int device = 0;
  for (int i = 0; i < 4; ++i) device += choose_side(r, bytes, nothing, nothing) == task_side::device ? 1 : 0;
  CHECK(device == 2);  // two more tries each (one run each came back)
  // A burst before the tries come back: the finish times from the runs so far.
  CHECK(choose_side(r, bytes, nothing, nothing) == task_side::device);    // 1 against 1.5 ms
  CHECK(choose_side(r, bytes, {0.0, 1e-3}, nothing) == task_side::host);  // 2 against 1.5 ms
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
  CHECK(choose_side(r, bytes, {0.0, 20e-3}, nothing) == task_side::host);
}

TEST_CASE("sizes are calibrated apart", "[task][placement]") {
  label_record r("tile");
  r.record(task_side::device, 1024, 1e-3);
  r.record(task_side::host, 1024, 10e-3);
  CHECK(r.peek(1024).seconds[0] == 10e-3);
  CHECK(r.peek(1 << 20).seconds[0] < 0);
  CHECK(label_record::size_class(1024) != label_record::size_class(1 << 20));
}

}  // namespace placement_test

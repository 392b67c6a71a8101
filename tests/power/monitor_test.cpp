#include <hetero/core/timer.hpp>
#include <hetero/power/monitor.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "busy.hpp"

using hetero::power::monitor;
using hetero::power::monitor_options;
using hetero::testing::busy_for;

namespace {

// The time a wait scope took, as seen from inside it (`inner`) and from around it (`outer`).
// What the monitor counts as waiting lies between the two, up to the clock reads: a preemption
// between the scope's own clock reads and the test's stopwatch falls in `outer` only (under a
// loaded machine it can take a scheduler slice, 5 ms, far more than the clocks' skew).
struct waited {
  double inner = 0;
  double outer = 0;
  waited operator+(const waited& other) const { return {inner + other.inner, outer + other.outer}; }
  waited& operator+=(const waited& other) {
    inner += other.inner;
    outer += other.outer;
    return *this;
  }
};

// A wait of `seconds` inside a user wait scope.
waited wait_for(double seconds) {
  hetero::stopwatch around;
  double inside = 0;
  {
    hetero::wait_scope waiting(hetero::wait_kind::user, "test wait");
    hetero::stopwatch watch;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    inside = watch.seconds();
  }
  return {inside, around.seconds()};
}

// Everything recorded so far, merged.
void flush(monitor& m) { m.update_until(m.seconds()); }

// Tolerance for comparing the monitor's clock with the test's own (both steady clocks read
// microseconds apart; a preemption between them is the rare exception this margin covers).
constexpr double slack = 0.003;

// Matches a waiting time the monitor counted for the waits `w`: within [inner, outer], give or
// take `slack`.
class counts_as : public Catch::Matchers::MatcherBase<double> {
 public:
  explicit counts_as(waited w) : m_w(w) {}
  bool match(const double& counted) const override {
    return counted >= m_w.inner - slack && counted <= m_w.outer + slack;
  }
  std::string describe() const override {
    std::ostringstream text;
    text << "lies within the waits' [" << m_w.inner << ", " << m_w.outer << "] s, give or take " << slack << " s";
    return text.str();
  }

 private:
  waited m_w;
};

}  // namespace

TEST_CASE("monitors install beside each other and beside other observers", "[power][monitor]") {
  monitor outer, inner;
  REQUIRE(hetero::current_observer() == nullptr);
  outer.install();
  inner.install();
  inner.install();  // twice: registered once
  CHECK(outer.installed());
  CHECK(inner.installed());
  CHECK(hetero::current_observer() == nullptr);  // the single-observer slot stays free
  inner.uninstall();
  CHECK_FALSE(inner.installed());
  CHECK(outer.installed());
  outer.uninstall();
  CHECK_FALSE(outer.installed());
}

TEST_CASE("a monitor and a tracer both see the same waits", "[power][monitor]") {
  struct tracer : hetero::observer {
    std::atomic<int> begins{0}, ends{0};
    void wait_begin(hetero::wait_kind, std::string_view) noexcept override { begins.fetch_add(1); }
    void wait_end(hetero::wait_kind, std::string_view) noexcept override { ends.fetch_add(1); }
  } traced;
  monitor m;
  m.install();
  hetero::scoped_observer listening(traced);
  busy_for(0.005);
  const waited w = wait_for(0.01) + wait_for(0.01);
  m.uninstall();
  flush(m);
  CHECK_THAT(m.accounted_seconds() - m.active_seconds(), counts_as(w));
  CHECK(traced.begins.load() == 2);
  CHECK(traced.ends.load() == 2);
}

TEST_CASE("monitors installed at once all see the same waits and marks", "[power][monitor]") {
  // A thread was bound to one monitor at a time: each report moved it to the other, so the first
  // saw no wait, slots ran out, and marks were lost.
  monitor_options options;
  options.max_threads = 1;                   // one reporting thread: one slot in each monitor suffices
  for (int round = 0; round < 2; ++round) {  // the second round reuses the first one's entries
    monitor first(options), second(options), third(options), fourth(options), fifth(options);
    std::array<monitor*, 5> all = {&first, &second, &third, &fourth, &fifth};
    for (monitor* m : all) m->install();
    busy_for(0.005);
    const waited w = wait_for(0.01) + wait_for(0.01);
    hetero::mark_phase();
    for (monitor* m : all) m->uninstall();
    for (monitor* m : {&first, &second, &third, &fourth}) {
      flush(*m);
      CHECK_THAT(m->accounted_seconds() - m->active_seconds(), counts_as(w));
      CHECK(m->marks_since(0).size() == 1);
      CHECK(m->untracked_threads() == 0);
    }
    flush(fifth);  // one monitor too many for the thread: each of its 5 reports counted, nothing seen
    CHECK(fifth.untracked_threads() == 5);
    CHECK(fifth.marks_since(0).empty());
  }
}

TEST_CASE("wait scopes count as waiting, everything else as active", "[power][monitor]") {
  monitor m;
  m.install();
  busy_for(0.01);
  waited w = wait_for(0.02);
  {
    hetero::wait_scope outer(hetero::wait_kind::collective, "outer");
    hetero::wait_scope nested(hetero::wait_kind::point_to_point, "nested");  // counts once
    w += wait_for(0.01);
  }
  hetero::mark_phase();
  hetero::stopwatch between;
  busy_for(0.01);
  const double phase = between.seconds();
  hetero::mark_phase();
  m.uninstall();
  flush(m);
  const double elapsed = m.accounted_seconds();
  CHECK_THAT(elapsed - m.active_seconds(), counts_as(w));
  CHECK(m.work_ghz_seconds() == Catch::Approx(m.active_seconds()));  // 1 GHz by default
  const auto marks = m.marks_since(0);
  REQUIRE(marks.size() == 2);
  CHECK(marks[1].active_seconds - marks[0].active_seconds == Catch::Approx(phase).margin(slack));
  CHECK(m.lost_events() == 0);
}

TEST_CASE("frames hold the activity; frequency changes weigh the work", "[power][monitor]") {
  monitor_options options;
  options.frame_seconds = 0.002;
  monitor m(options);
  m.install();
  m.set_frequency(2.0);
  m.align_frames(hetero::wall_seconds());
  hetero::stopwatch span;
  busy_for(0.004);
  const waited w = wait_for(0.006);
  busy_for(0.004);
  const double until_idle = span.seconds();
  (void)wait_for(0.005);  // the last, unfinished frame holds no activity
  m.uninstall();
  m.update();  // up to one frame ago
  CHECK(m.accounted_seconds() <= m.seconds() - 0.002);
  flush(m);
  const auto frames = m.frames_since(0);
  REQUIRE(frames.size() >= 6);
  double active = 0, work = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    CHECK(frames[i].id == static_cast<std::int64_t>(i));
    CHECK(frames[i].active_seconds <= 0.002 + 1e-9);
    active += frames[i].active_seconds;
    work += frames[i].work_ghz_seconds;
  }
  CHECK(work == Catch::Approx(2.0 * active));
  CHECK(active >= 0.008);  // both busy stretches lie within the frames
  CHECK(active <= until_idle - w.inner + slack);
  CHECK(m.finished_frames() == static_cast<std::int64_t>(frames.size()));
  CHECK_THROWS_AS(m.set_frequency(0.0), hetero::invalid_argument);
}

TEST_CASE("the rank waits only while every reporting thread waits", "[power][monitor]") {
  monitor m;
  m.install();
  const waited first = wait_for(0.001);  // the main thread reports: it is tracked
  std::atomic<int> stage{0};
  waited overlap;
  std::thread helper([&] {
    hetero::wait_scope waiting(hetero::wait_kind::task, "helper");
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  busy_for(0.01);            // helper waits, main computes: active
  overlap = wait_for(0.02);  // both wait
  stage = 2;
  helper.join();
  busy_for(0.005);
  m.uninstall();
  flush(m);
  CHECK_THAT(m.accounted_seconds() - m.active_seconds(), counts_as(overlap + first));
}

TEST_CASE("waits from many threads are recorded without loss; slots are reused", "[power][monitor]") {
  monitor_options options;
  options.max_threads = 4;
  monitor m(options);
  m.install();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 2000; ++i) {
        hetero::wait_scope w(hetero::wait_kind::collective, "many");
      }
    });
  for (auto& t : threads) t.join();
  flush(m);
  CHECK(m.lost_events() == 0);
  CHECK(m.untracked_threads() == 0);
  // One thread after another: each gives its slot back when it exits.
  for (int t = 0; t < 10; ++t) {
    std::thread([] { hetero::wait_scope w(hetero::wait_kind::halo, "one"); }).join();
    flush(m);
  }
  CHECK(m.untracked_threads() == 0);
  // Five threads alive at once with four slots: one is not tracked, and says so.
  std::atomic<int> inside{0};
  std::atomic<bool> leave{false};
  threads.clear();
  for (int t = 0; t < 5; ++t)
    threads.emplace_back([&] {
      { hetero::wait_scope w(hetero::wait_kind::task, "crowd"); }
      ++inside;
      while (!leave.load()) std::this_thread::yield();
    });
  while (inside.load() != 5) std::this_thread::yield();
  leave = true;
  for (auto& t : threads) t.join();
  m.uninstall();
  CHECK(m.untracked_threads() == 1);
}

TEST_CASE("only the first thread, and ignored threads, as asked", "[power][monitor]") {
  monitor_options options;
  options.threads = hetero::power::tracked_threads::first;
  monitor m(options);
  m.install();
  busy_for(0.002);
  const waited tracked = wait_for(0.001);            // the first thread to report
  std::thread([] { (void)wait_for(0.02); }).join();  // not tracked: the rank stays active
  std::thread([] {
    monitor::ignore_calling_thread();
    (void)wait_for(0.001);
  }).join();
  m.uninstall();
  flush(m);
  CHECK_THAT(m.accounted_seconds() - m.active_seconds(), counts_as(tracked));
  CHECK(m.untracked_threads() == 0);
}

TEST_CASE("a monitor with a zero frame length is refused", "[power][monitor]") {
  monitor_options options;
  options.frame_seconds = 0;
  CHECK_THROWS_WITH(monitor(options), Catch::Matchers::ContainsSubstring("frame length is 0 s"));
  options.frame_seconds = 0.004;
  options.max_threads = 0;
  CHECK_THROWS_AS(monitor(options), hetero::invalid_argument);
}

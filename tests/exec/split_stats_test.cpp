// Per-label state: reset_weight/cpu_weight, the last device and host times (gpu_seconds,
// cpu_seconds), running statistics, tuner choice, and errors for unknown labels.
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_stats.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

using Catch::Matchers::ContainsSubstring;

TEST_CASE("reset_weight sets the next run's weight; unknown labels are named in the error", "[exec][stats]") {
  hetero::forget_split_labels();
  CHECK(hetero::cpu_weight("nobody") == hetero::work_sharing_config().initial_weight);
  CHECK_THROWS_WITH(hetero::gpu_seconds("nobody"), ContainsSubstring("no split loop labelled 'nobody'"));
  CHECK_THROWS_AS(hetero::gpu_seconds("nobody"), hetero::invalid_argument);
  CHECK_THROWS_AS(hetero::cpu_seconds("nobody"), hetero::invalid_argument);
  CHECK_THROWS_AS(hetero::split_statistics("nobody"), hetero::invalid_argument);
  hetero::reset_weight("loop a", 0.3);
  CHECK(hetero::cpu_weight("loop a") == 0.3);
  CHECK(hetero::split_labels() == std::vector<std::string>{"loop a"});
  CHECK(hetero::split_statistics("loop a").tuner == "model");
  hetero::set_tuner("loop a", hetero::tuner_kind::fixed_step);
  CHECK(hetero::split_statistics("loop a").tuner == "fixed_step");
  CHECK_THROWS_WITH(hetero::set_tuner("loop a", std::unique_ptr<hetero::tuner>()),
                    ContainsSubstring("null tuner"));
  hetero::forget_split_labels();
  CHECK(hetero::split_labels().empty());
}

#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
TEST_CASE("gpu_seconds and cpu_seconds are the last device and host times; statistics run on", "[exec][stats]") {
  hetero::forget_split_labels();
  hetero::set_tuner("timed", hetero::tuner_kind::manual);
  hetero::reset_weight("timed", 0.5);
  using policy = hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial>;
  // The device half sleeps 20 ms, the host half 5 ms (one iteration each sleeps).
  for (int run = 0; run < 3; ++run)
    hetero::parallel_for("timed", policy(0, 2).host_chunks(1), [](std::int64_t i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(i == 0 ? 20 : 5));
    });
  CHECK(hetero::gpu_seconds("timed") >= 0.019);
  CHECK(hetero::cpu_seconds("timed") >= 0.0049);
  CHECK(hetero::cpu_seconds("timed") < hetero::gpu_seconds("timed"));
  const auto s = hetero::split_statistics("timed");
  CHECK(s.runs == 3);
  CHECK(s.device_items == 1);
  CHECK(s.host_items == 1);
  CHECK(s.weight == 0.5);  // manual: unchanged
  CHECK(s.last_weight == 0.5);
  CHECK(s.device.min >= 0.019);
  CHECK(s.device.max >= s.device.mean);
  CHECK(s.device.mean >= s.device.min);
  CHECK(s.device.total >= 3 * 0.019);
  CHECK(s.step.last >= s.device.last);  // the call waits for both sides
  CHECK(s.host.ewma > 0);

  // The default tuner moves the weight after a run.
  hetero::set_tuner("timed", hetero::tuner_kind::model);
  hetero::parallel_for("timed", policy(0, 2).host_chunks(1), [](std::int64_t) {});
  CHECK(hetero::split_statistics("timed").runs == 4);

  // A tuner of the user's that gives NaN: named, and the weight stays (std::clamp kept NaN).
  struct nan_tuner final : hetero::tuner {
    double next_weight(const hetero::split_sample&) override { return std::nan(""); }
    [[nodiscard]] const char* name() const noexcept override { return "nan"; }
  };
  hetero::reset_weight("timed", 0.5);
  hetero::set_tuner("timed", std::make_unique<nan_tuner>());
  CHECK_THROWS_WITH(hetero::parallel_for("timed", policy(0, 2).host_chunks(1), [](std::int64_t) {}),
                    ContainsSubstring("the tuner of split loop 'timed' gave the next weight NaN") &&
                        ContainsSubstring("the weight stays 0.5"));
  CHECK(hetero::cpu_weight("timed") == 0.5);
}
#endif

namespace {

using one_space = hetero::split_policy<hetero::default_host_space, hetero::default_host_space>;

// Each element sleeps 2 ms, so a timed run of one element or more takes at least that.
void run_sleepy(const hetero::work_sharing& sharing, const char* label, std::int64_t n) {
  hetero::parallel_for(sharing, label, one_space(0, n),
                       [](std::int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
}

struct loop_counter final : hetero::observer {
  std::string last_label;
  double last_seconds = -1;
  int loops = 0;
  void split_loop_end(const hetero::split_loop_event& e) noexcept override {
    ++loops;
    last_label = std::string(e.label);
    last_seconds = e.device_seconds;
  }
  [[nodiscard]] hetero::observer_events events() const noexcept override { return hetero::observer_events::loops; }
};

}  // namespace

TEST_CASE("a loop on one space is counted but not timed unless asked", "[exec][stats]") {
  hetero::work_sharing sharing;
  run_sleepy(sharing, "single", 4);
  run_sleepy(sharing, "single", 3);
  auto s = sharing.statistics("single");
  CHECK(s.runs == 2);
  CHECK(s.timed_runs == 0);
  CHECK(s.device_items == 3);
  CHECK(s.host_items == 0);
  CHECK(s.device.last == 0);
  CHECK(s.device.total == 0);
  CHECK(sharing.gpu_seconds("single") == 0);
  CHECK(sharing.cpu_seconds("single") == 0);
  CHECK(s.decision.empty());
}

TEST_CASE("a loop on one space with time_one_space reports its time as the device's", "[exec][stats]") {
  hetero::split_config config;
  config.time_one_space = true;
  hetero::work_sharing sharing(config);
  run_sleepy(sharing, "single", 4);
  const auto s = sharing.statistics("single");
  CHECK(s.runs == 1);
  CHECK(s.timed_runs == 1);
  CHECK(s.device_items == 4);
  CHECK(s.host_items == 0);
  CHECK(sharing.gpu_seconds("single") >= 0.0019);  // at least one element's sleep, on any number of threads
  CHECK(s.step.last == s.device.last);             // one clock pair: the part's time is the call's
  CHECK(sharing.cpu_seconds("single") == 0);

  // Untimed again: counted; the times keep the timed runs' but say the last run was not timed.
  config.time_one_space = false;
  sharing.set_config(config);
  run_sleepy(sharing, "single", 2);
  const auto after = sharing.statistics("single");
  CHECK(after.runs == 2);
  CHECK(after.timed_runs == 1);
  CHECK(after.device_items == 2);
  CHECK(after.device.last == 0);
  CHECK(after.device.total == s.device.total);
  CHECK(after.device.mean == s.device.mean);
}

TEST_CASE("a loop on one space is timed while an observer listens for loops", "[exec][stats]") {
  hetero::work_sharing sharing;
  loop_counter counter;
  {
    hetero::scoped_observer listening(counter);
    run_sleepy(sharing, "observed", 2);
  }
  CHECK(counter.loops == 1);
  CHECK(counter.last_label == "observed");
  CHECK(counter.last_seconds >= 0.0019);
  CHECK(sharing.gpu_seconds("observed") == counter.last_seconds);
  CHECK(sharing.statistics("observed").timed_runs == 1);
  run_sleepy(sharing, "observed", 2);  // no observer now
  CHECK(counter.loops == 1);
  CHECK(sharing.statistics("observed").timed_runs == 1);
  CHECK(sharing.statistics("observed").runs == 2);
}

TEST_CASE("a label's state found through this thread's cache is the handle's own and forgotten with it",
          "[exec][stats]") {
  hetero::work_sharing a, b;
  run_sleepy(a, "same", 1);
  run_sleepy(a, "same", 1);
  run_sleepy(b, "same", 1);  // same label, same thread, other handle: its own state
  CHECK(a.statistics("same").runs == 2);
  CHECK(b.statistics("same").runs == 1);
  // More labels than the cache holds, then the first again: still the same state.
  for (int i = 0; i < 20; ++i) run_sleepy(a, ("label" + std::to_string(i)).c_str(), 0);
  run_sleepy(a, "same", 1);
  CHECK(a.statistics("same").runs == 3);
  // Forgotten labels start again, though this thread's cache still names the old state.
  a.forget_labels();
  CHECK_THROWS_AS(a.statistics("same"), hetero::invalid_argument);
  run_sleepy(a, "same", 1);
  CHECK(a.statistics("same").runs == 1);
  CHECK(b.statistics("same").runs == 1);
  // Another thread has its own cache and finds the same state.
  std::thread other([&] { run_sleepy(a, "same", 1); });
  other.join();
  CHECK(a.statistics("same").runs == 2);
}

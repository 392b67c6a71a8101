// Per-label state: reset_weight/cpu_weight, the last device and host times (gpu_seconds,
// cpu_seconds), running statistics, tuner choice, and errors for unknown labels.
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_stats.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cstdint>
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
}
#endif

TEST_CASE("a loop on one space runs whole on it and reports its time as the device's", "[exec][stats]") {
  hetero::forget_split_labels();
  hetero::parallel_for("single",
                       hetero::split_policy<hetero::default_host_space, hetero::default_host_space>(0, 4),
                       [](std::int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  const auto s = hetero::split_statistics("single");
  CHECK(s.runs == 1);
  CHECK(s.device_items == 4);
  CHECK(s.host_items == 0);
  CHECK(hetero::gpu_seconds("single") > 0);
  CHECK(hetero::cpu_seconds("single") == 0);
}

#include <hetero/config.hpp>
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_for.hpp>
#include <hetero/power/actuators/dry_run.hpp>
#include <hetero/power/node_shift.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>

using Catch::Matchers::ContainsSubstring;
using namespace hetero::power;

namespace {
const frequency_table gpu_table({1.0, 2.0}, {100.0, 200.0});
const frequency_table cpu_table({1.0, 2.0}, {50.0, 100.0});
}  // namespace

TEST_CASE("the node's budget goes to the side with the longer time", "[power][node]") {
  const node_power_shifter shifter(gpu_table, cpu_table);
  // At 2 GHz the GPU took 2 s and the CPU 1 s: 4 s and 2 s at f_min. From 150 W at f_min the GPU
  // is raised first (250 W, its f_max); the CPU's step would need 300 W.
  const auto s =
      shifter.split({.gpu_seconds = 2.0, .cpu_seconds = 1.0}, gpu_table.setting(1), cpu_table.setting(1), 250.0);
  CHECK(s.gpu.step == 1);
  CHECK(s.cpu.step == 0);
  CHECK(s.gpu.power_watts == 200.0);
  CHECK(s.cpu.power_watts == 50.0);
  CHECK(s.predicted_seconds == Catch::Approx(2.0));
  // The reverse when the CPU was the slow side; 10 W left are shared.
  const auto r =
      shifter.split({.gpu_seconds = 1.0, .cpu_seconds = 3.0}, gpu_table.setting(1), cpu_table.setting(1), 210.0);
  CHECK(r.gpu.step == 0);
  CHECK(r.cpu.step == 1);
  CHECK(r.gpu.power_watts == 105.0);
  CHECK(r.cpu.power_watts == 105.0);
  // Times measured at f_min count as they are.
  const auto t =
      shifter.split({.gpu_seconds = 1.0, .cpu_seconds = 1.5}, gpu_table.setting(0), cpu_table.setting(1), 250.0);
  CHECK(t.gpu.step == 0);  // GPU 1 s at f_min vs CPU 3 s: the CPU goes up (200 W); the GPU's step needs 300 W
  CHECK(t.cpu.step == 1);
  CHECK(t.gpu.power_watts == 125.0);
}

TEST_CASE("the shifter applies through actuators and remembers the settings", "[power][node]") {
  node_power_shifter shifter(gpu_table, cpu_table);
  dry_run_actuator gpu_log(gpu_table), cpu_log(cpu_table);
  // First call: measured at the tables' tops (the shifter's assumption until told).
  shifter.apply({.gpu_seconds = 2.0, .cpu_seconds = 1.0}, 250.0, gpu_log, cpu_log);
  // Second: the CPU ran at 1 GHz and took 2 s (1 s at 2 GHz): the GPU at 2 GHz took 1 s.
  const auto s = shifter.apply({.gpu_seconds = 1.0, .cpu_seconds = 2.0}, 250.0, gpu_log, cpu_log);
  // 2 s at f_min on both sides, both at f_min: the tie goes to the lower device number, the GPU.
  CHECK(s.gpu.step == 1);
  CHECK(s.cpu.step == 0);
  REQUIRE(gpu_log.history().size() == 2);
  REQUIRE(cpu_log.history().size() == 2);
  CHECK(gpu_log.history()[1].setting.step == s.gpu.step);
  CHECK(cpu_log.history()[0].setting.step == 0);
}

TEST_CASE("the shifter reads a work-sharing loop's measured device and host times", "[power][node]") {
#if HETERO_HAS_OPENMP()
  // A real split (device = OpenMP, host = Serial) whose device chunk takes 4x the host's.
  hetero::split_for("power_node_times", hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial>(0, 2).weight(0.5),
                    [](const auto& space, std::int64_t, std::int64_t) {
                      constexpr bool on_device = std::is_same_v<std::decay_t<decltype(space)>, Kokkos::OpenMP>;
                      std::this_thread::sleep_for(std::chrono::milliseconds(on_device ? 40 : 10));
                    });
  const device_host_times t = measured_times("power_node_times");
  CHECK(t.gpu_seconds == hetero::gpu_seconds("power_node_times"));
  CHECK(t.cpu_seconds == hetero::cpu_seconds("power_node_times"));
  CHECK(t.gpu_seconds >= 0.040);
  CHECK(t.cpu_seconds >= 0.010);
  // The measured times feed the shifter as they are: the longer side gets the step up.
  node_power_shifter shifter(gpu_table, cpu_table);
  dry_run_actuator gpu_log(gpu_table), cpu_log(cpu_table);
  const auto s = shifter.apply(t, 250.0, gpu_log, cpu_log);
  const bool gpu_longer = t.gpu_seconds >= t.cpu_seconds;  // 40 ms vs 10 ms unless badly preempted
  CHECK(s.gpu.step == (gpu_longer ? 1u : 0u));
  CHECK(s.cpu.step == (gpu_longer ? 0u : 1u));
#else
  SKIP("needs Kokkos::OpenMP to emulate a device beside Kokkos::Serial");
#endif
  CHECK_THROWS_WITH(measured_times("never_ran"), ContainsSubstring("no split loop labelled 'never_ran'"));
}

TEST_CASE("loop times come through the observer hook, from any work_sharing handle", "[power][node]") {
  // A loop_times of one's own sees the loops run while it is registered; measured_times sees
  // every loop of the process, also those of a handle other than the default.
  loop_times mine;
  CHECK(mine.events() == hetero::observer_events::loops);
  hetero::work_sharing other;
  {
    hetero::scoped_observer listening(mine);
    hetero::parallel_for(other, "power_node_other", hetero::split_policy<>(0, 100).weight(0.3),
                         [](std::int64_t) {});
  }
  hetero::parallel_for(other, "power_node_unseen", hetero::split_policy<>(0, 10), [](std::int64_t) {});
  REQUIRE(mine.contains("power_node_other"));
  CHECK_FALSE(mine.contains("power_node_unseen"));
  const device_host_times seen = mine.of("power_node_other");
  CHECK(seen.gpu_seconds == other.gpu_seconds("power_node_other"));
  CHECK(seen.cpu_seconds == other.cpu_seconds("power_node_other"));
  const device_host_times process = measured_times("power_node_unseen");
  CHECK(process.gpu_seconds == other.gpu_seconds("power_node_unseen"));
  CHECK(process.cpu_seconds == other.cpu_seconds("power_node_unseen"));
  CHECK_THROWS_WITH(mine.of("power_node_unseen"), ContainsSubstring("no split loop labelled 'power_node_unseen'"));
  CHECK_THROWS_AS(hetero::gpu_seconds("power_node_other"), hetero::invalid_argument);  // not the default's
}

TEST_CASE("node split: bad input is refused with the minimum", "[power][node]") {
  const node_power_shifter shifter(gpu_table, cpu_table);
  CHECK_THROWS_WITH(shifter.split({1.0, 1.0}, gpu_table.setting(0), cpu_table.setting(0), 149.0),
                    ContainsSubstring("node budget 149 W is below the minimum") && ContainsSubstring("= 150 W"));
  CHECK_THROWS_WITH(shifter.split({-1.0, 1.0}, gpu_table.setting(0), cpu_table.setting(0), 200.0),
                    ContainsSubstring("must be finite and >= 0"));
  CHECK_THROWS_WITH(shifter.split({1.0, 1.0}, {0, 1.5, 100.0}, cpu_table.setting(0), 200.0),
                    ContainsSubstring("GPU now): frequency 1.5 GHz is not step 0"));
}

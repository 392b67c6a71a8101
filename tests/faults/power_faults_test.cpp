// Fault injection into the power controller's waits (dynamic policy, phases from marks, an
// emulated CPU): a rank that stops early, a rank that never constructs its controller, and a
// rank that sleeps past the timeout (1 s, set by this folder's main) before constructing or
// before stopping. The ranks that wait for it get a deadlock_error naming the controller's call.
#include <hetero/power/actuators/emulated.hpp>
#include <hetero/power/controller.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "../power/modelled_table.hpp"
#include "faults_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero::power;

namespace {

// The options every rank passes: dynamic shifting of a random budget between the even setting
// at f_min and at f_max, phases from marks (planned from the start, so exchanges begin with the
// first marks).
controller_options options_for(const frequency_table& table) {
  const auto p = static_cast<std::size_t>(faults::world_size());
  const auto step = static_cast<std::size_t>(faults::shared_random(0, static_cast<long long>(table.size()) - 1));
  return {.budget_watts = static_cast<double>(p) * table.power(step), .phases = phase_source::markers};
}

// Phases of emulated compute (2-4 ms) with a mark after each, for `seconds`: the controller
// posts an exchange per phase.
void marked_phases(const emulated_actuator& cpu, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int i = 0;
  while (std::chrono::steady_clock::now() < end) {
    cpu.compute([&] { std::this_thread::sleep_for(std::chrono::milliseconds(2 + (i++ % 3))); });
    hetero::mark_phase();
  }
}

void check_gave_up(const faults::outcome& o, const std::string& call) {
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring(call) && ContainsSubstring(faults::limit_text()) &&
                         ContainsSubstring("runtime_options::wait_timeout") &&
                         ContainsSubstring("HETERO_WAIT_TIMEOUT"));
}

}  // namespace

TEST_CASE("a rank that stops its controller early: it gives up in the stop agreement, the others in the exchanges",
          "[faults][power]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto table = hetero::testing::modelled_cpu_table();
  const auto options = options_for(table);
  monitor m;
  m.install();
  emulated_actuator cpu(table);
  controller c(m, cpu, MPI_COMM_WORLD, options);
  const auto o = faults::attempt([&] {
    if (me != late) marked_phases(cpu, 1.5 * faults::timeout_seconds());
    c.stop();
  });
  faults::report("stops early", "power controller stop", o);
  m.uninstall();
  if (me == late) {
    check_gave_up(o, "hetero::power::controller stop (exchange count agreement)");
    CHECK_THAT(o.text, ContainsSubstring("not known"));
  } else {  // the others' exchanges wait for the late rank's part (or the leader's answer)
    check_gave_up(o, "hetero::power::controller exchange");
  }
  CHECK_NOTHROW(c.stop());  // stopped already: nothing more to do
}

TEST_CASE("a rank that never constructs its controller: the others give up at the start", "[faults][power]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto table = hetero::testing::modelled_cpu_table();
  const auto options = options_for(table);
  const faults::case_comm ranks;
  monitor m;
  m.install();
  emulated_actuator cpu(table);
  const auto o = faults::attempt([&] {
    if (me == late) return;
    controller c(m, cpu, ranks.comm, options);
    c.stop();
  });
  faults::report("skip", "power controller start", o);
  m.uninstall();
  if (me == late) {
    CHECK(o.kind == "none");
  } else {
    check_gave_up(o, "hetero::power::controller start (communicator set-up)");
    CHECK(cpu.frequency() == table.max_frequency());  // no setting was applied
  }
}

TEST_CASE("a rank that sleeps past the timeout: the others give up, so does the sleeper", "[faults][power]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const auto table = hetero::testing::modelled_cpu_table();
  const auto options = options_for(table);
  monitor m;
  m.install();
  emulated_actuator cpu(table);

  SECTION("before constructing") {
    const faults::case_comm ranks;
    const auto o = faults::attempt([&] {
      if (me == late) faults::oversleep();
      controller c(m, cpu, ranks.comm, options);
      c.stop();
    });
    faults::report("sleeps 1.5 s", "power controller start", o);
    if (me == late) {  // its set-up matched the others' abandoned one; nobody came to the barrier
      check_gave_up(o, "hetero::power::controller start (every rank here)");
    } else {
      check_gave_up(o, "hetero::power::controller start (communicator set-up)");
    }
  }
  SECTION("before stopping") {
    controller c(m, cpu, MPI_COMM_WORLD, options);
    const auto o = faults::attempt([&] {
      marked_phases(cpu, 0.2);
      if (me == late) faults::oversleep();
      c.stop();
    });
    faults::report("sleeps 1.5 s", "power controller stop", o);
    if (me != late) {
      check_gave_up(o, "hetero::power::controller stop (exchange count agreement)");
    } else if (o.kind != "none") {  // it agrees with the abandoned agreement, then may wait for an answer
      check_gave_up(o, "hetero::power::controller exchange");
    }
  }
  m.uninstall();
}

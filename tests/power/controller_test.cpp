#include <hetero/comm/communicator.hpp>
#include <hetero/power/actuators/dry_run.hpp>
#include <hetero/power/actuators/emulated.hpp>
#include <hetero/power/controller.hpp>

#include <mpi.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "modelled_table.hpp"
#include "region_recorder.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero::power;

namespace {

int rank_of(MPI_Comm comm = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm = MPI_COMM_WORLD) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

// A bulk-synchronous loop: rank 0 computes twice as long as the others (emulated compute that
// sleeps, so the outcome does not depend on how many cores the ranks share), then all meet in
// an allreduce marked as a wait. Steps and run HETERO_TEST_TIME_SCALE times longer where
// tools/nodes/scale.sh crowds many ranks onto few cores, so that the imbalance still shows
// through MPI's slower allreduce.
void imbalanced_steps(const emulated_actuator& cpu, double seconds, bool mark) {
  const double work = (rank_of() == 0 ? 0.008 : 0.004) * hetero::testing::time_scale();
  seconds *= hetero::testing::time_scale();
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int go = 1;
  while (go) {
    cpu.compute([&] { std::this_thread::sleep_for(std::chrono::duration<double>(work)); });
    int here = std::chrono::steady_clock::now() < end ? 1 : 0;
    {
      hetero::wait_scope waiting(hetero::wait_kind::collective, "allreduce");
      MPI_Allreduce(&here, &go, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (mark) hetero::mark_phase();
  }
}

// The controller's learning window: 64 of the monitor's 4 ms frames, HETERO_TEST_TIME_SCALE
// times more where the steps are that many times longer (automatic phases take the marks only
// where every rank marked at least twice in the window; at 32 ranks on 2 cores 64 frames hold
// fewer than two of rank 0's steps).
std::size_t learning_frames() { return 64 * static_cast<std::size_t>(hetero::testing::time_scale()); }

// Every rank's setting in each round that all ranks received: rounds[k][rank].
std::vector<std::vector<power_setting>> common_rounds(const controller& c) {
  const auto history = c.history();
  const int mine = static_cast<int>(history.size());
  int rounds = 0;
  MPI_Allreduce(&mine, &rounds, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  std::vector<std::vector<power_setting>> all(static_cast<std::size_t>(rounds));
  for (int k = 0; k < rounds; ++k) {
    all[k].resize(static_cast<std::size_t>(size_of()));
    MPI_Allgather(&history[k], sizeof(power_setting), MPI_BYTE, all[k].data(), sizeof(power_setting), MPI_BYTE,
                  MPI_COMM_WORLD);
  }
  return all;
}

// Checks what Algorithm 1 must give this workload: in every round each group within its share
// of the budget; in most rounds (single phases can be noisy) the busy rank 0 above every other
// rank of its group, which are at or below the even frequency. Where tools/nodes/scale.sh
// crowds many ranks onto few cores (HETERO_TEST_TIME_SCALE > 1), a rank whose sleep has ended
// can wait long for a core held by MPI's busy-polling allreduce and so looks busy too: there
// rank 0 must be at the top step of its group, not alone there.
void check_shift(const std::vector<std::vector<power_setting>>& rounds, const frequency_table& table,
                 double budget, int group) {
  REQUIRE(rounds.size() >= 2);
  const int n = static_cast<int>(rounds[0].size());
  const int per_group = group > 0 ? group : n;
  const std::size_t even = table.even_step(budget, static_cast<std::size_t>(n));
  const bool crowded = hetero::testing::time_scale() > 1;
  std::size_t shifted = 0;
  for (std::size_t k = 1; k < rounds.size(); ++k) {
    const auto& all = rounds[k];
    for (int first = 0; first < n; first += per_group) {
      double used = 0;
      const int count = std::min(per_group, n - first);
      for (int r = first; r < first + count; ++r) used += table.power(all[r].step);
      CHECK(used <= budget * count / n + 1e-9);
    }
    bool busy_first = true;
    for (int r = 1; r < std::min(per_group, n); ++r)
      busy_first =
          busy_first && (crowded ? all[0].step >= all[r].step : all[0].step > all[r].step && all[r].step <= even);
    shifted += busy_first ? 1 : 0;
  }
  std::string steps;  // the last round's, rank by rank, for a failure's report
  for (const auto& setting : rounds.back()) steps += " " + std::to_string(setting.step);
  INFO("even step " << even << "; the last round's steps:" << steps);
  if (std::min(per_group, n) > 1) CHECK(shifted * 2 > rounds.size() - 1);
}

// The imbalanced loop for `seconds` under a dynamic controller with `options` (emulated DVFS on
// the seed's table); what the controller ended with.
struct controlled_run {
  controller_status status;
  std::vector<std::vector<power_setting>> rounds;  // common_rounds
  std::size_t history = 0;
  double frequency = 0;  // the emulated CPU's at the end
};

controlled_run run_controlled(const controller_options& options, double seconds, bool mark,
                              hetero::comm_ref comm = MPI_COMM_WORLD) {
  monitor m;
  m.install();
  emulated_actuator cpu(hetero::testing::modelled_cpu_table());
  controller c(m, cpu, comm, options);
  imbalanced_steps(cpu, seconds, mark);
  c.stop();
  m.uninstall();
  return {c.status(), common_rounds(c), c.history().size(), cpu.frequency()};
}

}  // namespace

TEST_CASE("policy even: every rank at the even step, monitoring running, the setting a region",
          "[power][controller]") {
  // The power module's regions: what hetero's tracer and a Kokkos Tools library see of the
  // settings the controller applies.
  hetero::testing::region_recorder regions("power");
  const hetero::scoped_observer listening(regions);
  const auto table = hetero::testing::modelled_cpu_table();
  const double budget = size_of() * table.power(4) + 0.5;
  monitor m;
  m.install();
  dry_run_actuator log(table);
  controller c(m, log, MPI_COMM_WORLD, {.budget_watts = budget, .mode = policy::even});
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the even policy drains every 16 frames
  const double accounted = m.accounted_seconds();
  c.stop();
  m.uninstall();
  const auto history = c.history();
  REQUIRE(history.size() == 1);
  CHECK(history[0].step == 4);
  CHECK(history[0].power_watts == budget / size_of());
  CHECK(log.history().size() == 1);
  CHECK(accounted > 0.05);  // the helper thread kept the monitor's frames going
  CHECK_FALSE(c.status().planned);
  const auto seen = regions.seen();
  REQUIRE(seen.size() == 1);
  std::array<char, 32> expected{};
  std::snprintf(expected.data(), expected.size(), "set %.2f GHz", table.frequency(4));
  CHECK(seen[0].first == expected.data());
}

TEST_CASE("policy dynamic with phase marks shifts power to the busy rank", "[power][controller]") {
  const auto table = hetero::testing::modelled_cpu_table();
  const double budget = size_of() * table.power(4);
  const int group = size_of() == 3 ? 2 : 0;  // on 3 ranks: groups {0, 1} and {2}
  // Automatic phases: marks seen on every rank while learning take over.
  const auto run = run_controlled(
      {.budget_watts = budget, .group_size = group, .learning_frames = learning_frames()}, 0.7, true);
  CHECK(run.status.planned);
  CHECK(run.status.markers);
  CHECK(run.status.settings > 5);
  CHECK(run.history == run.status.settings + 1);
  CHECK(run.frequency == run.status.setting.frequency_ghz);
  check_shift(run.rounds, table, budget, group);
}

TEST_CASE("policy dynamic with detected phases", "[power][controller]") {
  const auto table = hetero::testing::modelled_cpu_table();
  const double budget = size_of() * table.power(4);
  const auto run = run_controlled(
      {.budget_watts = budget, .learning_frames = learning_frames(), .detection = {.min_frames = 10}}, 0.9, false);
  CHECK(run.status.planned);
  CHECK_FALSE(run.status.markers);
  CHECK(run.status.phase_frames >= 10);
  CHECK(run.status.settings > 2);
  // One rank alone never waits: no period. Three ranks share two cores here: the period is
  // there but blurred, so it is checked where each rank has its core.
  if (size_of() == 2) CHECK(run.status.period_frames > 0.0);
  check_shift(run.rounds, table, budget, 0);
}

TEST_CASE("hetero handles drive the controller as their MPI_Comm does", "[power][controller]") {
  const auto table = hetero::testing::modelled_cpu_table();
  hetero::communicator_options o;
  o.wait_timeout = std::chrono::seconds(20);
  const hetero::communicator world(o);
  const hetero::comm_ref ref(world);  // what the controller is given: the ranks and the timeout
  CHECK(ref.get() == world.mpi_comm());
  CHECK(ref.wait_timeout() == hetero::timeout(std::chrono::seconds(20)));
  CHECK(ref.timeout_option() == "communicator_options::wait_timeout");
  CHECK(hetero::comm_ref(MPI_COMM_WORLD).wait_timeout().inherits());  // inherits hetero::wait_timeout()

  // Dynamic shifting with phase marks on a hetero::communicator of every rank.
  const double budget = size_of() * table.power(4);
  const int group = size_of() == 3 ? 2 : 0;
  const auto run = run_controlled(
      {.budget_watts = budget, .group_size = group, .learning_frames = learning_frames()}, 0.7, true, world);
  CHECK(run.status.planned);
  CHECK(run.status.markers);
  CHECK(run.status.settings > 5);
  CHECK(run.history == run.status.settings + 1);
  CHECK(run.frequency == run.status.setting.frequency_ghz);
  check_shift(run.rounds, table, budget, group);

  // The even policy on each half of the ranks (split by parity): the budget is the half's.
  MPI_Comm split = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank_of() % 2, rank_of(), &split);
  {
    const hetero::communicator half(split);
    const double half_budget = half.size() * table.power(2) + 0.25;
    monitor m;
    m.install();
    dry_run_actuator log(table);
    controller c(m, log, half, {.budget_watts = half_budget, .mode = policy::even});
    c.stop();
    m.uninstall();
    const auto history = c.history();
    REQUIRE(history.size() == 1);
    CHECK(history[0].step == 2);
    CHECK(history[0].frequency_ghz == table.frequency(2));
    CHECK(history[0].power_watts == half_budget / half.size());
    REQUIRE(log.history().size() == 1);
    CHECK(log.history()[0].setting.step == 2);
    // A budget below the half's minimum is refused with the half's size, not the world's.
    CHECK_THROWS_WITH(controller(m, log, half, {.budget_watts = half.size() * table.min_power() - 1.0}),
                      ContainsSubstring("is below the minimum for " + std::to_string(half.size()) + " device(s)"));
  }
  MPI_Comm_free(&split);
}

TEST_CASE("the controller refuses bad options and reports actuator failures at stop", "[power][controller]") {
  const auto table = hetero::testing::modelled_cpu_table();
  monitor m;
  dry_run_actuator log(table);
  const double too_little = size_of() * table.min_power() - 1.0;
  CHECK_THROWS_WITH(controller(m, log, MPI_COMM_WORLD, {.budget_watts = too_little}),
                    ContainsSubstring("is below the minimum for " + std::to_string(size_of()) + " device(s)"));
  CHECK_THROWS_WITH(
      controller(m, log, MPI_COMM_WORLD, {.budget_watts = size_of() * table.power(4), .group_size = -1}),
      ContainsSubstring("group_size is -1"));
  // Detection options are checked here, on every rank: on the leader's helper thread, where the
  // detection runs, they could not raise (the group waited for its answer until the timeout).
  CHECK_THROWS_WITH(
      controller(m, log, MPI_COMM_WORLD,
                 {.budget_watts = size_of() * table.power(4), .detection = {.min_correlation = 0.0}}),
      ContainsSubstring("min_correlation is 0"));
  CHECK_THROWS_WITH(controller(m, log, MPI_COMM_WORLD,
                               {.budget_watts = size_of() * table.power(4), .detection = {.min_frames = 0}}),
                    ContainsSubstring("min_frames is 0"));
  // What the monitor keeps (4096 frames by default) bounds the frames between two wake-ups and,
  // for phases learnt from frames, the learning series and the phase: beyond it they were read
  // after being dropped (a learning series padded with zeros, a phase's work summed short).
  const double budget = size_of() * table.power(4);
  CHECK_THROWS_WITH(controller(m, log, MPI_COMM_WORLD, {.budget_watts = budget, .tick_frames = 4097}),
                    ContainsSubstring("tick_frames is 4097; allowed: 0 (automatic) to 4096"));
  CHECK_THROWS_WITH(controller(m, log, MPI_COMM_WORLD, {.budget_watts = budget, .learning_frames = 4096}),
                    ContainsSubstring("learning_frames is 4096; allowed: 16 to 4095"));
  CHECK_THROWS_WITH(
      controller(m, log, MPI_COMM_WORLD,
                 {.budget_watts = budget, .learning_frames = std::numeric_limits<std::size_t>::max()}),
      ContainsSubstring("learning_frames is 18446744073709551615"));
  CHECK_THROWS_WITH(controller(m, log, MPI_COMM_WORLD,
                               {.budget_watts = budget, .fallback_phase_frames = 4000, .tick_frames = 100}),
                    ContainsSubstring("fallback_phase_frames is 4000; allowed: 1 to 3996"));
  CHECK_THROWS_WITH(
      controller(m, log, MPI_COMM_WORLD, {.budget_watts = budget, .detection = {.min_frames = 5000}}),
      ContainsSubstring("detection.min_frames is 5000; allowed: 1 to 4095"));

  // An actuator that fails on rank 0 after its first setting: the loop goes on (the other
  // ranks wait for rank 0's part), and stop() tells rank 0.
  class failing : public actuator {
   public:
    explicit failing(const frequency_table& t) : m_table(t) {}
    void apply(const power_setting&) override {
      if (rank_of() == 0 && ++m_calls > 1) throw hetero::backend_error("test actuator refused");
    }
    [[nodiscard]] const frequency_table& table() const noexcept override { return m_table; }
    [[nodiscard]] std::string describe() const override { return "failing"; }

   private:
    frequency_table m_table;
    int m_calls = 0;
  } broken(table);
  m.install();
  emulated_actuator cpu(table);
  controller c(m, broken, MPI_COMM_WORLD,
               {.budget_watts = size_of() * table.power(4), .phases = phase_source::markers});
  imbalanced_steps(cpu, 0.2, true);
  if (rank_of() == 0) {
    CHECK_THROWS_WITH(c.stop(), ContainsSubstring("test actuator refused"));
  } else {
    CHECK_NOTHROW(c.stop());
  }
  m.uninstall();
}

TEST_CASE("marks made just before the controller is built are not its phases", "[power][controller]") {
  // The constructor merged only the marks older than a frame: a warm-up's last marks (all 100
  // here, made within microseconds) became phases 0 to 99, more than the monitor keeps, and
  // were counted as skipped (84 of them on one rank, where the start barrier takes less than a
  // frame); on a rank last into the barrier its phase k then met the others' later phases.
  const auto table = hetero::testing::modelled_cpu_table();
  monitor m({.frames_kept = 16});  // and 16 marks
  m.install();
  for (int i = 0; i < 100; ++i) hetero::mark_phase();
  emulated_actuator cpu(table);
  controller c(m, cpu, MPI_COMM_WORLD,
               {.budget_watts = size_of() * table.power(4), .phases = phase_source::markers});
  imbalanced_steps(cpu, 0.4, true);  // one mark a step, which it keeps up with
  c.stop();
  m.uninstall();
  const auto status = c.status();
  CHECK(status.skipped_phases == 0);
  CHECK(status.settings > 2);
}

TEST_CASE("phases whose start the monitor no longer keeps are skipped and counted, not waited for",
          "[power][controller]") {
  // The controller waited for phase 0's mark for ever once it had been dropped: no setting came
  // after, and nothing said why.
  const auto table = hetero::testing::modelled_cpu_table();
  monitor m({.frames_kept = 16});  // and 16 marks
  m.install();
  // Marks made before the controller (a warm-up's) are not its phases: they were taken as
  // phases 0 to 99 (and made 100 more skipped below).
  for (int i = 0; i < 100; ++i) hetero::mark_phase();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));  // over a frame: merged by the next update
  emulated_actuator cpu(table);
  controller c(m, cpu, MPI_COMM_WORLD,
               {.budget_watts = size_of() * table.power(4), .phases = phase_source::markers});
  for (int i = 0; i < 200; ++i) hetero::mark_phase();  // faster than any exchange: 184 are dropped
  imbalanced_steps(cpu, 0.4, true);                    // then one mark a step, which it keeps up with
  c.stop();
  m.uninstall();
  const auto status = c.status();
  // 184 are dropped; up to 64 (the exchanges in flight) may be measured first where the first
  // update took in only part of the burst.
  CHECK(status.skipped_phases >= 120);
  CHECK(status.skipped_phases < 200);
  CHECK(status.settings > 2);
}

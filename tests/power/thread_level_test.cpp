// The power controller where the application initialised MPI with MPI_THREAD_FUNNELED: the
// dynamic policy, whose helper thread exchanges the ranks' activity through MPI, is refused on
// every rank before any collective; the even policy, whose helper makes no MPI call, runs.
#include <hetero/power/actuators/dry_run.hpp>
#include <hetero/power/controller.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <thread>

#include "funneled.hpp"
#include "modelled_table.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::MessageMatches;

TEST_CASE("under MPI_THREAD_FUNNELED the dynamic power policy is refused and the even one runs",
          "[power][thread_level]") {
  if (hetero::testing::provided_multiple()) SKIP("MPI provided MPI_THREAD_MULTIPLE (more than asked)");
  const auto table = hetero::testing::modelled_cpu_table();
  const double budget = hetero::testing::world_size() * table.power(4) + 0.5;
  hetero::power::monitor m;
  m.install();
  hetero::power::dry_run_actuator log(table);
  CHECK_THROWS_MATCHES(
      hetero::power::controller(m, log, MPI_COMM_WORLD, {.budget_watts = budget}), hetero::runtime_error,
      MessageMatches(ContainsSubstring("the dynamic power policy calls MPI from a helper thread and needs "
                                       "MPI_THREAD_MULTIPLE, " +
                                       hetero::testing::provided_text())));
  CHECK(log.history().empty());  // refused before any setting was applied
  {
    hetero::power::controller even(m, log, MPI_COMM_WORLD,
                                   {.budget_watts = budget, .mode = hetero::power::policy::even});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    even.stop();
    REQUIRE(even.history().size() == 1);
    CHECK(even.history()[0].step == 4);  // the highest step the budget allows every rank
  }
  CHECK(log.history().size() == 1);
  m.uninstall();
}

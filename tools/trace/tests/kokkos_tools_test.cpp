// hetero's regions as a Kokkos Tools library sees them: run with KOKKOS_PROFILE_LIBRARY set to
// hetero_region_printer (tools/trace), which records every region path. Checks the names
// (`hetero:<module>:<label>[:<part>]`) and the nesting of tasks, a user region inside a task, the
// parts of a split loop, a collective and its wait, reflect and a coarray's sync_all.
#include <hetero/hetero.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "split_spaces.hpp"

using Catch::Matchers::StartsWith;

namespace {

using hetero::testing::split_device;
using hetero::testing::split_host;

std::set<std::string> recorded_paths() {
  using paths_function = const char* (*)();
  const auto paths = reinterpret_cast<paths_function>(dlsym(RTLD_DEFAULT, "hetero_region_printer_paths"));
  if (!paths) FAIL("hetero_region_printer is not loaded: set KOKKOS_PROFILE_LIBRARY to it");
  std::set<std::string> out;
  std::istringstream lines(paths());
  for (std::string line; std::getline(lines, line);) out.insert(line);
  return out;
}

}  // namespace

TEST_CASE("a Kokkos Tools library sees hetero's regions, named and nested as they ran", "[trace][kokkos_tools]") {
  REQUIRE(Kokkos::Profiling::profileLibraryLoaded());
  const hetero::communicator world;
  std::mt19937_64 rng(static_cast<std::uint64_t>(std::random_device{}()));

  // Tasks, one of them with a user region inside.
  {
    hetero::task_graph graph({.workers = 2, .comm = MPI_COMM_SELF});
    int a = 0, b = 0;
    const auto a_written = graph.event("a written");
    const auto b_written = graph.event("b written");
    graph.spawn("tool alpha", hetero::out(a_written), [&] {
      const hetero::region inner("user", "inside alpha");
      a = 1;
    });
    graph.spawn("tool beta", hetero::in(a_written), hetero::out(b_written), [&] { b = a + 1; });
    graph.wait();
    CHECK(b == 2);
  }

  // A collective, checked against the serial sum.
  std::vector<long long> mine(17);
  for (auto& x : mine) x = static_cast<long long>(rng() % 1000);
  const std::vector<long long> all = world.allgather(hetero::send_buf(mine));
  const std::vector<long long> sum = world.allreduce(hetero::send_buf(mine), hetero::op(hetero::ops::sum{}));
  for (std::size_t i = 0; i < mine.size(); ++i) {
    long long expected = 0;
    for (int r = 0; r < world.size(); ++r) expected += all[static_cast<std::size_t>(r) * mine.size() + i];
    CHECK(sum[i] == expected);
  }

  // A split loop with a part on each side.
  using policy = hetero::split_policy<split_device, split_host>;
  Kokkos::View<double*, split_host::memory_space> x("x", 4000);
  hetero::parallel_for(
      "tool split", policy(0, 4000).weight(0.5),
      KOKKOS_LAMBDA(std::int64_t i) { x(i) = 2.0 * static_cast<double>(i); });
  for (std::int64_t i = 0; i < 4000; ++i) REQUIRE(x(i) == 2.0 * static_cast<double>(i));

  // A reflect and a coarray's synchronisation.
  hetero::shadow_width<1> shadow;
  shadow.lower[0] = shadow.upper[0] = 1;
  hetero::distributed_array<double, 1> u(hetero::index_space<1>({64}, hetero::process_grid<1>()),
                                         {.shadow = shadow});
  hetero::reflect(u);
  hetero::coarray<int, 1> c({4});
  c.sync_all();

  const std::set<std::string> paths = recorded_paths();
  std::string listing;
  for (const auto& p : paths) listing += p + "\n";
  INFO("recorded regions:\n" << listing);
  CHECK(paths.contains("hetero:task:tool alpha"));
  CHECK(paths.contains("hetero:task:tool beta"));
  CHECK(paths.contains("hetero:task:tool alpha>hetero:user:inside alpha"));
  CHECK(paths.contains("hetero:comm:allgather"));
  CHECK(paths.contains("hetero:comm:allreduce"));
  CHECK(paths.contains("hetero:distarray:reflect"));
  CHECK(paths.contains("hetero:distarray:sync_all"));
  const bool split = split_device().name() != split_host().name();
  if (split) {
    CHECK(paths.contains("hetero:exec:tool split:device"));
    CHECK(paths.contains("hetero:exec:tool split:host"));
  }
  // Every hetero region is named hetero:<module>:<label>; a wait is either outermost (a set-up
  // step, the workers' idle wait) or directly inside a hetero operation that is not itself a
  // wait (the collective, reflect or sync that waited).
  for (const auto& p : paths) {
    const std::size_t cut = p.rfind('>');
    const std::string last = p.substr(cut == std::string::npos ? 0 : cut + 1);
    if (!last.starts_with("hetero:")) continue;
    INFO("region path " << p);
    CHECK(std::count(last.begin(), last.end(), ':') >= 2);
    if (cut == std::string::npos || last.find(":wait:") == std::string::npos) continue;
    const std::size_t parent_cut = p.rfind('>', cut - 1);
    const std::string parent = p.substr(parent_cut == std::string::npos ? 0 : parent_cut + 1,
                                        cut - (parent_cut == std::string::npos ? 0 : parent_cut + 1));
    CHECK_THAT(parent, StartsWith("hetero:"));
    CHECK(parent.find(":wait:") == std::string::npos);
  }
}

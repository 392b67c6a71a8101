// Fault injection into distarray's waits: a rank that skips a reflect, a gmove, a coarray
// sync_all or (staged windows) a sync_all or sync_images after puts, or sleeps past the timeout
// (1 s, set by this folder's main) in a reflect or while another image gets from it. The ranks
// that wait for it get a deadlock_error naming it (where MPI's call does not say, that it is
// not known). Arrays made afterwards get none of the late messages of those waits. A blocking
// gmove behind an unfinished gmove_async of the same sections on its own thread gives up too.
// An array or coarray whose reflect, gmove or sync gave up refuses its next one on that rank.
#include <hetero/distarray.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "../distarray/distarray_support.hpp"
#include "../distarray/reflect_check.hpp"
#include "faults_support.hpp"
#include "nodes.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::MessageMatches;

namespace {

using array1 = hetero::distributed_array<double, 1, Kokkos::HostSpace>;

void check_array_gave_up(const faults::outcome& o, const std::string& call, int missing) {
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring(call) && ContainsSubstring(faults::limit_text()) &&
                         ContainsSubstring("HETERO_WAIT_TIMEOUT"));
  if (missing >= 0) {
    CHECK(o.missing == std::vector<int>{missing});
  } else {
    CHECK_THAT(o.text, ContainsSubstring("not known"));
  }
}

// After an exchange on the array `label` gave up on this rank, the next one (`call`, on this rank alone:
// no barrier) raises at once: the late rank's messages of the abandoned exchange would match
// its receives.
template <class Call>
void check_refuses_next(const std::string& label, const std::string& marked_by, Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_MATCHES(call(), hetero::runtime_error,
                       MessageMatches(ContainsSubstring("array '" + label + "' is out of step since a " +
                                                        marked_by + " on it gave up")));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  CHECK(took.count() < 0.5 * faults::timeout_seconds());  // no wait for the late rank
}

std::int64_t random_extent(int p) { return 4 * p + faults::shared_random(0, 50); }

}  // namespace

TEST_CASE("distarray: a rank that never constructs the array: the others give up in its set-up",
          "[faults][dist]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const hetero::process_grid<1> grid;  // its own communicator: the abandoned set-up stays on it
  const hetero::index_space<1> space({random_extent(p)}, grid);
  const auto o = faults::attempt([&] {
    if (me == late) return;
    array1 a(space);
    dist_test::fill(a, 2);
  });
  faults::report("skip", "distarray construction", o);
  if (me == late)
    CHECK(o.kind == "none");
  else
    check_array_gave_up(o, "hetero::distributed_array construction (communicator set-up)", -1);
}

TEST_CASE("distarray: a rank that skips or is late to a reflect or gmove", "[faults][dist]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const hetero::process_grid<1> grid;
  // Whether rank a borders rank b in a periodic reflect of one axis: only those wait for b.
  const auto beside = [p](int a, int b) { return a != b && (a == (b + 1) % p || a == (b + p - 1) % p); };

  SECTION("reflect, skipped") {
    array1 a(hetero::index_space<1>({random_extent(p)}, grid), {.shadow = hetero::shadow_width<1>::uniform(1)});
    dist_test::fill(a, 3);
    hetero::reflect(a, {.periodic = {true}});    // the plan is built and works
    const auto storage = a.local_with_shadow();  // a View: its use count says who holds the storage
    const auto holders = storage.use_count();
    const bool async = GENERATE(false, true);
    INFO((async ? "reflect_async" : "reflect"));
    const auto o = faults::attempt([&] {
      if (me == late) return;
      if (async)
        hetero::reflect_async(a, {.periodic = {true}}).wait();
      else
        hetero::reflect(a, {.periodic = {true}});
    });
    faults::report("skip", "distarray reflect", o);
    if (beside(me, late)) {
      check_array_gave_up(o, "hetero::reflect", late);
      // Its sends, released to MPI, read the storage when the late rank comes: kept for good,
      // whatever becomes of the array (before, freed with it).
      CHECK(storage.use_count() == holders + 1);
      check_refuses_next(a.options().label, "reflect", [&] { hetero::reflect(a, {.periodic = {true}}); });
      check_refuses_next(a.options().label, "reflect", [&] { hetero::reflect_async(a).wait(); });
    } else {
      CHECK(o.kind == "none");  // the late rank, and from 4 ranks those that do not border it
      CHECK(storage.use_count() == holders);
    }
  }
  SECTION("reflect, a send fails on one rank") {
    // The failing rank raises mpi_error from the reflect's start, with its receives posted: they
    // are ended there (before, the run's destructor waited for them), its storage kept as after
    // any abandoned run, and the array refuses its next exchange (its neighbours' messages of
    // this reflect are on their way). Its neighbours wait for the message that never left and
    // give up.
    array1 a(hetero::index_space<1>({random_extent(p)}, grid), {.shadow = hetero::shadow_width<1>::uniform(1)});
    dist_test::fill(a, 6);
    hetero::reflect(a, {.periodic = {true}});
    const auto storage = a.local_with_shadow();
    const auto holders = storage.use_count();
    const auto o = faults::attempt([&] {
      if (me == late) faults::fail_next_isend();
      hetero::reflect(a, {.periodic = {true}});
    });
    faults::report("failed send", "distarray reflect", o);
    if (me == late) {
      INFO(o.text);
      CHECK(o.kind == "error");  // hetero::mpi_error
      CHECK_THAT(o.text, ContainsSubstring("MPI_Isend"));
      CHECK(o.seconds < 0.5 * faults::timeout_seconds());
      CHECK(storage.use_count() == holders + 1);
      check_refuses_next(a.options().label, "reflect", [&] { hetero::reflect(a, {.periodic = {true}}); });
    } else if (beside(me, late)) {
      check_array_gave_up(o, "hetero::reflect", late);
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("reflect, its test fails in MPI on one rank") {
    // The failing rank raises mpi_error from the handle's test(), its messages posted: the run
    // ends them there (before, the run's destructor waited for them), keeps its storage as after
    // any abandoned run, and the array refuses its next exchange. Its sends left before the
    // failure, so its neighbours complete.
    array1 a(hetero::index_space<1>({random_extent(p)}, grid), {.shadow = hetero::shadow_width<1>::uniform(1)});
    dist_test::fill(a, 7);
    hetero::reflect(a, {.periodic = {true}});
    const auto storage = a.local_with_shadow();
    const auto holders = storage.use_count();
    const auto o = faults::attempt([&] {
      auto reflecting = hetero::reflect_async(a, {.periodic = {true}});
      if (me == late) {
        faults::fail_next_testall();
        (void)reflecting.test();
      }
      reflecting.wait();
    });
    faults::report("failed test", "distarray reflect", o);
    if (me == late) {
      INFO(o.text);
      CHECK(o.kind == "error");                                      // hetero::mpi_error
      CHECK_THAT(o.text, ContainsSubstring("MPI_Testall failed:"));  // test()'s own, not a wait's
      CHECK(o.seconds < 0.5 * faults::timeout_seconds());
      CHECK(storage.use_count() == holders + 1);
      check_refuses_next(a.options().label, "reflect", [&] { hetero::reflect(a, {.periodic = {true}}); });
    } else {
      CHECK(o.kind == "none");
      CHECK(storage.use_count() == holders);
    }
  }
  SECTION("reflect, late rank") {
    array1 a(hetero::index_space<1>({random_extent(p)}, grid), {.shadow = hetero::shadow_width<1>::uniform(1)});
    dist_test::fill(a, 4);
    hetero::reflect(a, {.periodic = {true}});
    const auto o = faults::attempt([&] {
      if (me == late) faults::oversleep();
      hetero::reflect(a, {.periodic = {true}});
    });
    faults::report("slow rank", "distarray reflect", o);
    if (beside(me, late)) {
      check_array_gave_up(o, "hetero::reflect", late);
    } else {
      CHECK(o.kind == "none");  // the late rank: its neighbours' messages were sent before they gave up
    }
  }
  SECTION("gmove, skipped") {
    const std::int64_t n = 10 * p + random_extent(p);
    array1 block(hetero::index_space<1>({n}, grid), {.label = "block"});
    array1 cyclic(hetero::index_space<1>({n}, grid, {hetero::distribution::cyclic()}), {.label = "cyclic"});
    dist_test::fill(block, 5);
    hetero::gmove(cyclic, block);                     // the plan is built and works
    array1 other(hetero::index_space<1>({n}, grid));  // collective: made before the fault
    const auto source = block.local_with_shadow();
    const auto holders = source.use_count();
    const auto o = faults::attempt([&] {
      if (me != late) hetero::gmove(cyclic, block);
    });
    // A rank that gave up keeps the source's storage, which its released sends read (not the
    // arrays: their communicators and windows end as usual).
    CHECK(source.use_count() == holders + (o.kind == "deadlock_error" ? 1 : 0));
    faults::report("skip", "distarray gmove", o);
    // Only the ranks that own, cyclically, an element of the late rank's block wait for it: all
    // of the others while that block holds at least p elements, not always from 15 ranks.
    bool receives_from_late = false;
    for (std::int64_t i = 0; i < n && !receives_from_late; ++i)
      receives_from_late = block.space().owner_of({i}) == late && cyclic.space().owner_of({i}) == me;
    if (me != late && receives_from_late) {
      check_array_gave_up(o, "hetero::gmove", late);
      // The destination refuses, as a destination or a source: the messages ran on its
      // communicator (the source's has none of them, and stays usable).
      check_refuses_next("cyclic", "gmove", [&] { hetero::gmove(cyclic, block); });
      check_refuses_next("cyclic", "gmove", [&] { hetero::gmove_async(cyclic, other).wait(); });
      check_refuses_next("cyclic", "gmove",
                         [&] { hetero::gmove(Kokkos::View<double*, Kokkos::HostSpace>("c", n), cyclic); });
    } else {
      CHECK(o.kind == "none");
    }
  }
}

TEST_CASE("distarray: arrays made after a reflect or gmove gave up get none of its late messages",
          "[faults][dist]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  // The late rank skips a reflect and a gmove: their messages to it stay queued on the arrays'
  // communicators. Had the ranks that gave up freed those communicators with the arrays, MPI
  // could give their ids to the next arrays' communicators, and the late rank's next reflect
  // and gmove would take the old messages.
  const hetero::process_grid<1> grid;
  const hetero::reflect_options<1> periodic{.periodic = {true}};
  const std::int64_t n = 10 * p + random_extent(p);
  const hetero::index_space<1> space({n}, grid);
  const hetero::index_space<1> cyclic_space({n}, grid, {hetero::distribution::cyclic()});
  const auto salt = static_cast<std::uint64_t>(faults::shared_random(1, 1000000));
  {
    array1 a(space, {.shadow = hetero::shadow_width<1>::uniform(1)});
    array1 block(space), cyclic(cyclic_space);
    dist_test::fill(a, salt);
    dist_test::fill(block, salt);
    hetero::reflect(a, periodic);  // the plans are built and work
    hetero::gmove(cyclic, block);
    faults::report("skip", "distarray reflect, then new arrays", faults::attempt([&] {
                     if (me != late) hetero::reflect(a, periodic);
                   }));
    faults::report("skip", "distarray gmove, then new arrays", faults::attempt([&] {
                     if (me != late) hetero::gmove(cyclic, block);
                   }));
  }
  array1 a(space, {.shadow = hetero::shadow_width<1>::uniform(1)});
  array1 block(space), cyclic(cyclic_space);
  const double sentinel = -1;
  Kokkos::deep_copy(a.local_with_shadow(), sentinel);
  dist_test::fill(a, salt + 1);
  dist_test::fill(block, salt + 1);
  hetero::reflect(a, periodic);
  dist_test::check_reflected(a, periodic, salt + 1, sentinel);
  hetero::gmove(cyclic, block);
  dist_test::for_each_owned_element(
      cyclic, [&](const auto& g, double v) { CHECK(v == dist_test::value_at<double>(g, salt + 1)); });
}

TEST_CASE("distarray: a blocking gmove behind an unfinished gmove_async of the same sections gives up",
          "[faults][dist]") {
  const int p = faults::world_size();
  const hetero::process_grid<1> grid;  // the world's, after the cases above (they keep theirs)
  const std::int64_t n = 10 * p + random_extent(p);
  array1 block(hetero::index_space<1>({n}, grid));
  array1 cyclic(hetero::index_space<1>({n}, grid, {hetero::distribution::cyclic()}));
  const auto salt = static_cast<std::uint64_t>(faults::shared_random(1, 1000000));
  dist_test::fill(block, salt);
  auto pending = hetero::gmove_async(cyclic, block);  // holds the plan until its handle completes
  // Every rank alike, on the thread that would complete the handle: nothing else releases the plan.
  const auto o = faults::attempt([&] { hetero::gmove(cyclic, block); });
  faults::report("plan held", "distarray gmove", o);
  INFO(o.text);
  REQUIRE(o.kind == "deadlock_error");
  CHECK_THAT(o.text, ContainsSubstring("hetero::gmove waited") &&
                         ContainsSubstring("for an earlier gmove_async of the same sections to complete") &&
                         ContainsSubstring("HETERO_WAIT_TIMEOUT"));
  CHECK(o.waited >= 0.99 * hetero::wait_timeout().duration().count());  // the error says how long it waited
  CHECK(o.waited <= o.seconds);
  pending.wait();  // still completes, and the plan serves the next gmove
  dist_test::fill(block, salt + 1);
  hetero::gmove(cyclic, block);
  dist_test::for_each_owned_element(
      cyclic, [&](const auto& g, double v) { CHECK(v == dist_test::value_at<double>(g, salt + 1)); });
}

TEST_CASE("coarray: an image that skips sync_all, or sleeps while another gets from it", "[faults][dist]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const std::int64_t n = faults::shared_random(8, 100);

  SECTION("sync_all, skipped") {
    hetero::coarray<double, 1, Kokkos::HostSpace> a({n});
    a.sync_all();
    const auto o = faults::attempt([&] {
      if (me != late) a.sync_all();
    });
    faults::report("skip", "coarray sync_all", o);
    if (me != late) {
      check_array_gave_up(o, "hetero::sync_all", -1);
      check_refuses_next("hetero::coarray", "sync_all", [&] { a.sync_all(); });
      check_refuses_next("hetero::coarray", "sync_all", [&] { a.sync_images({late}); });
    } else {
      CHECK(o.kind == "none");
    }
  }
  // Through MPI the get gives up where MPICH serves it only when the target calls MPI (its
  // active messages, as on one node); a transport that reads the target's memory without it
  // (UCX between emulated nodes on some layouts, RDMA on a cluster) completes it at once, as the
  // node's shared memory does. Across nodes the late image is not in this node's memory: the
  // "shared memory" coarray travels through MPI there too.
  const bool beside_late = hetero::testing::node_layout_of().same_node(late, me);
  const auto get_from_sleeper = [&](bool shared) {
    hetero::coarray<double, 1, Kokkos::HostSpace> a({n}, {.shared_memory = shared});
    for (std::int64_t i = 0; i < n; ++i) a.local()(i) = 1000.0 * me + static_cast<double>(i);
    a.sync_all();
    Kokkos::View<double*, Kokkos::HostSpace> into("into", static_cast<std::size_t>(n));  // outlives the get
    const auto o = faults::attempt([&] {
      if (me == late) faults::oversleep();
      // A quarter of the limit first: the target is asleep then, not still in MPI after the
      // sync_all (where it would serve the get; seen on 4 ranks of one node).
      if (me == 0) {
        faults::oversleep(0.25);
        a.get(late, {hetero::slice{0, n}}, into);
      }
    });
    faults::report("slow rank", shared ? "coarray get, shared memory" : "coarray get", o);
    if (me != late) CHECK(a.shares_memory_with(late) == (shared && beside_late));
    if (me == 0 && !a.shares_memory_with(late) && (a.comm().nodes() == 1 || o.kind != "none")) {
      check_array_gave_up(o, "hetero::coarray::get", late);
    } else {
      CHECK(o.kind == "none");
    }
    a.sync_all();  // completes an abandoned get (the target is back in MPI)
    if (me == 0) CHECK(into(static_cast<std::size_t>(n - 1)) == 1000.0 * late + static_cast<double>(n - 1));
  };
  SECTION("get from a sleeping image, through MPI") { get_from_sleeper(false); }
  SECTION("get from a sleeping image, shared memory") { get_from_sleeper(true); }
  // A sync_all that gives up while it still completes a get that gave up earlier (the target
  // still asleep) has not put its own part on the communicator yet: the coarray is not marked,
  // and the next sync_all, with the target back in MPI, completes the get and itself.
  SECTION("sync_all gives up completing a get that gave up") {
    hetero::coarray<double, 1, Kokkos::HostSpace> a({n}, {.shared_memory = false});
    for (std::int64_t i = 0; i < n; ++i) a.local()(i) = 1000.0 * me + static_cast<double>(i);
    a.sync_all();
    Kokkos::View<double*, Kokkos::HostSpace> into("into", static_cast<std::size_t>(n));  // outlives the get
    bool get_gave_up = false;
    const auto o = faults::attempt([&] {
      if (me == late) faults::oversleep(3.0);  // through rank 0's get and its sync
      if (me != 0) return;
      faults::oversleep(0.25);  // the target asleep, as in get_from_sleeper
      try {
        a.get(late, {hetero::slice{0, n}}, into);
      } catch (const hetero::deadlock_error&) {
        get_gave_up = true;
      }
      if (get_gave_up) a.sync_all();  // waits for the get again, then gives up
    });
    faults::report("slow rank", "coarray sync_all after a get gave up", o);
    if (me == 0 && a.comm().nodes() == 1) CHECK(get_gave_up);  // as in get_from_sleeper
    if (get_gave_up) {
      check_array_gave_up(o, "completing an earlier get that gave up", late);
    } else {
      CHECK(o.kind == "none");
    }
    a.sync_all();  // not refused: completes the get (the target is back in MPI)
    if (me == 0) CHECK(into(static_cast<std::size_t>(n - 1)) == 1000.0 * late + static_cast<double>(n - 1));
  }
}

// Staged windows (forced on host memory with device_buffer_path::staged) exchange the logs of
// their puts at every sync: MPI_Ialltoall / MPI_Ialltoallv in sync_all, polled MPI_Improbe in
// sync_images, both waited with the timeout.
TEST_CASE("coarray, staged: an image that never syncs after puts", "[faults][dist]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const std::int64_t n = faults::shared_random(8, 100);
  using staged_coarray = hetero::coarray<double, 1, Kokkos::HostSpace>;
  const hetero::coarray_options staged{.device_path = hetero::device_buffer_path::staged};
  Kokkos::View<double*, Kokkos::HostSpace> values("values", static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) values(static_cast<std::size_t>(i)) = 100.0 * me + static_cast<double>(i);

  SECTION("sync_all, skipped") {
    staged_coarray a({n}, staged);
    REQUIRE(a.staged());
    a.sync_all();
    a.put((me + 1) % p, {hetero::slice::all()}, values);  // every image has a log to send
    const auto o = faults::attempt([&] {
      if (me != late) a.sync_all();
    });
    faults::report("skip", "coarray sync_all, staged", o);
    if (me != late) {
      check_array_gave_up(o, "hetero::sync_all: put log sizes", -1);
      check_refuses_next("hetero::coarray", "sync_all", [&] { a.sync_all(); });
    } else {
      CHECK(o.kind == "none");
    }
  }
  SECTION("sync_images, the partner never syncs") {
    staged_coarray a({n}, staged);
    REQUIRE(a.staged());
    a.sync_all();
    if (me != late) a.put(late, {hetero::slice::all()}, values);
    const auto o = faults::attempt([&] {
      if (me != late) a.sync_images({late});
    });
    faults::report("skip", "coarray sync_images, staged", o);
    if (me != late) {
      check_array_gave_up(o, "hetero::sync_images: put logs", late);
      check_refuses_next("hetero::coarray", "sync_images", [&] { a.sync_images({late}); });
    } else {
      CHECK(o.kind == "none");
    }
  }
}

// A block no machine can hold (2^45 doubles, 256 TiB: beyond the 47-bit address space, so it
// fails whatever the kernel's overcommit setting; under AddressSanitizer the test runs with
// allocator_may_return_null=1, see CMakeLists.txt).
constexpr std::int64_t impossible_block = std::int64_t{1} << 45;

void check_told(const faults::outcome& o, int me, int bad, const std::string& what) {
  INFO(o.text);
  if (me == bad) {
    CHECK(o.kind == "other");  // Kokkos' own allocation error, as it threw it
  } else {
    REQUIRE(o.kind == "runtime_error");
    CHECK_THAT(o.text, ContainsSubstring(what) &&
                           ContainsSubstring("rank " + std::to_string(bad) + " could not make its part"));
  }
}

TEST_CASE("distarray, coarray: a rank whose block cannot be allocated: every rank hears it at construction",
          "[faults][dist]") {
  const int p = faults::world_size(), me = faults::world_rank(), bad = p - 1;
  if (p < 2) return;
  const hetero::process_grid<1> grid;
  SECTION("one-sided distributed array") {
    std::vector<std::int64_t> sizes(static_cast<std::size_t>(p));
    for (auto& n : sizes) n = faults::shared_random(1, 50);
    sizes.back() = impossible_block;
    std::int64_t extent = 0;
    for (const auto n : sizes) extent += n;
    const hetero::index_space<1> space({extent}, grid, {hetero::distribution::gen_block(sizes)});
    const auto o = faults::attempt([&] { array1 a(space, {.one_sided = true}); });
    faults::report("allocation fails", "distarray construction", o);
    check_told(o, me, bad, "hetero::distributed_array construction (storage)");
  }
  SECTION("coarray larger than the node's memory") {
    // Every rank asks for the same impossible size, and every rank refuses it before MPI's
    // shared allocation (which MPICH would leave hanging on the ranks it did not refuse).
    const auto o =
        faults::attempt([&] { hetero::coarray<double, 1, Kokkos::HostSpace> a({impossible_block}, grid.comm()); });
    faults::report("allocation fails", "coarray construction", o);
    REQUIRE(o.kind == "runtime_error");
    CHECK_THAT(o.text, ContainsSubstring("hetero::coarray: ") && ContainsSubstring("more than the node's memory"));
  }
  // Nothing is left pending: the arrays and coarrays of this grid still work on every rank.
  array1 after(hetero::index_space<1>({random_extent(p)}, grid));
  dist_test::fill(after, 3);
}

void check_refused(const faults::outcome& o, const std::string& what, const std::string& arguments) {
  INFO(o.text);
  REQUIRE(o.kind == "invalid_argument");
  CHECK_THAT(o.text, ContainsSubstring(what + ": the ranks passed different " + arguments));
}

// Every rank draws the same numbers (shared_random), also the rank that then passes another: a
// rank that skipped a draw would pass other extents in every later case.
TEST_CASE("distarray, coarray: a rank that passes other extents: every rank hears it at construction",
          "[faults][dist]") {
  const int p = faults::world_size(), me = faults::world_rank(), odd = p - 1;
  if (p < 2) return;
  const hetero::process_grid<1> grid;
  const std::int64_t n = random_extent(p) + (me == odd ? 1 : 0);
  SECTION("distributed array") {
    const auto o = faults::attempt([&] { array1 a(hetero::index_space<1>({n}, grid)); });
    faults::report("extents", "distarray construction", o);
    check_refused(o, "hetero::distributed_array construction (storage)", "index spaces");
  }
  SECTION("distributed array, shadow widths") {
    const auto width = hetero::shadow_width<1>::uniform(me == odd ? 2 : 1);
    const auto o =
        faults::attempt([&] { array1 a(hetero::index_space<1>({4 * p + 4}, grid), {.shadow = width}); });
    faults::report("shadow widths", "distarray construction", o);
    check_refused(o, "hetero::distributed_array construction (storage)", "index spaces");
  }
  SECTION("coarray") {
    const auto o = faults::attempt([&] { hetero::coarray<double, 1, Kokkos::HostSpace> a({n}, grid.comm()); });
    faults::report("extents", "coarray construction", o);
    check_refused(o, "hetero::coarray construction (storage)", "extents or element types");
  }
  // Nothing is left pending: the arrays and coarrays of this grid still work on every rank.
  array1 after(hetero::index_space<1>({random_extent(p)}, grid));
  dist_test::fill(after, 3);
}

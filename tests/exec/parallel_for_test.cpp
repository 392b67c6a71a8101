// parallel_for / parallel_reduce: results equal a serial loop for random ranges and weights 0,
// 1 and random, on every space pair; mirrored arrays move exactly the rows each side lacked;
// bad input and exceptions.
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_for.hpp>
#include <hetero/exec/split_stats.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "random.hpp"
#include "space_pairs.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

// Weight 0, 1 or random, in turn.
double pick_weight(int trial, std::mt19937_64& gen) {
  if (trial % 3 == 0) return 0.0;
  if (trial % 3 == 1) return 1.0;
  return std::uniform_real_distribution<double>(0, 1)(gen);
}

KOKKOS_INLINE_FUNCTION std::int64_t value_of(std::int64_t i) { return (i * 7919) % 1009 - 500; }

}  // namespace

TEMPLATE_LIST_TEST_CASE("parallel_for and parallel_reduce equal a serial loop for any range and weight",
                        "[exec][parallel_for]", hetero::testing::all_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  auto gen = hetero::testing::rng(31);
  // Both sides write `out`, so it lives where both can (managed memory with a GPU device).
  Kokkos::View<std::int64_t*, hetero::testing::shared_memory<TestType>> out("out", 6000);
  for (int trial = 0; trial < 24; ++trial) {
    const std::int64_t begin = std::uniform_int_distribution<std::int64_t>(0, 500)(gen);
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(0, 5000)(gen);
    const double w = pick_weight(trial, gen);
    INFO("range [" << begin << ", " << begin + n << ") weight " << w);
    Kokkos::deep_copy(out, -1);
    hetero::reset_weight("test_for", w);
    hetero::parallel_for(
        "test_for", hetero::split_policy<device, host>(begin, begin + n),
        KOKKOS_LAMBDA(std::int64_t i) { out(i) = value_of(i); });
    for (std::int64_t i = 0; i < 6000; ++i) REQUIRE(out(i) == (i >= begin && i < begin + n ? value_of(i) : -1));

    std::int64_t sum = 0, expected = 0;
    for (std::int64_t i = begin; i < begin + n; ++i) expected += value_of(i);
    hetero::parallel_reduce(
        "test_sum", hetero::split_policy<device, host>(begin, begin + n).weight(w),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t & s) { s += value_of(i); }, sum);
    CHECK(sum == expected);

    std::int64_t largest = 0, expected_largest = std::numeric_limits<std::int64_t>::lowest();
    for (std::int64_t i = begin; i < begin + n; ++i) expected_largest = std::max(expected_largest, value_of(i));
    hetero::parallel_reduce(
        "test_max", hetero::split_policy<device, host>(begin, begin + n).weight(w),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t & m) { m = value_of(i) > m ? value_of(i) : m; },
        Kokkos::Max<std::int64_t>(largest));
    CHECK(largest == expected_largest);
  }
}

TEMPLATE_LIST_TEST_CASE("partitioned and replicated arrays move exactly the rows each side lacked",
                        "[exec][parallel_for][mirror]", hetero::testing::split_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  using array = hetero::mirrored_array<double*, device, host>;
  using pairs = hetero::mirrored_array<double* [2], device, host>;
  auto gen = hetero::testing::rng(32);
  for (int trial = 0; trial < 12; ++trial) {
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, 3000)(gen);
    const double w = pick_weight(trial, gen);
    INFO("n " << n << " weight " << w);
    array x(hetero::mirror_mode::separate, "x", n), y(hetero::mirror_mode::separate, "y", n);
    pairs table(hetero::mirror_mode::separate, "table", n);
    std::vector<double> xs(static_cast<std::size_t>(n)), ts(static_cast<std::size_t>(2 * n));
    for (auto& v : xs) v = std::uniform_real_distribution<double>(-1, 1)(gen);
    for (auto& v : ts) v = std::uniform_real_distribution<double>(-1, 1)(gen);
    x.assign_host(xs);
    table.assign_host(ts);
    constexpr bool single = hetero::is_single_space<device, host>;  // then all runs on the device
    const auto plan = hetero::detail::make_split_plan(0, n, single ? 0.0 : w, 1);
    const auto device_rows = static_cast<std::uint64_t>(plan.device_items());

    // y(i) = x(i) * table(n - 1 - i, 1): x partitioned in, table replicated in, y out.
    hetero::parallel_for(
        "test_access", hetero::split_policy<device, host>(0, n).weight(w),
        hetero::access(hetero::reads(x), hetero::reads_all(table), hetero::writes(y)),
        KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double*> xv, hetero::loop_view<const double* [2]> tv,
                      hetero::loop_view<double*> yv) { yv(i) = xv(i) * tv(n - 1 - i, 1); });
    CHECK(x.bytes_to_device() == device_rows * sizeof(double));  // the device's rows only
    CHECK(x.bytes_to_host() == 0);                               // the host had them
    CHECK(table.bytes_to_device() == (device_rows > 0 ? static_cast<std::uint64_t>(n) * 2 * sizeof(double) : 0));
    CHECK(table.bytes_to_host() == 0);
    CHECK(y.bytes_to_device() + y.bytes_to_host() == 0);  // out: nothing read
    CHECK(y.device_current(plan.device_begin, plan.device_end));
    CHECK(y.host_current(plan.host_begin, plan.host_end));
    CHECK(y.host_current() == (device_rows == 0));

    y.sync_host();  // the device's rows come back, no more
    CHECK(y.bytes_to_host() == device_rows * sizeof(double));
    for (std::int64_t i = 0; i < n; ++i)
      REQUIRE(y.host_view()(i) ==
              xs[static_cast<std::size_t>(i)] * ts[static_cast<std::size_t>(2 * (n - 1 - i) + 1)]);

    // inout with the other weight: each side lacks the rows the other side held last time.
    const double w2 = 1.0 - w;
    const auto plan2 = hetero::detail::make_split_plan(0, n, single ? 0.0 : w2, 1);
    x.reset_transfer_counters();
    y.modify_host();  // the host holds the newest y everywhere now
    hetero::parallel_for(
        "test_access", hetero::split_policy<device, host>(0, n).weight(w2), hetero::access(hetero::updates(y)),
        KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<double*> yv) { yv(i) += 1.0; });
    CHECK(y.bytes_to_device() == static_cast<std::uint64_t>(plan2.device_items()) * sizeof(double));
    y.sync_host();
    for (std::int64_t i = 0; i < n; ++i)
      REQUIRE(y.host_view()(i) ==
              xs[static_cast<std::size_t>(i)] * ts[static_cast<std::size_t>(2 * (n - 1 - i) + 1)] + 1.0);
  }
}

TEMPLATE_LIST_TEST_CASE("an exception of the host part reaches the caller after the device part finished",
                        "[exec][parallel_for]", hetero::testing::split_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  if constexpr (hetero::is_single_space<device, host>) {
    SKIP("one space: there is no host part");
  } else if constexpr (hetero::is_gpu_space<device>) {
    SKIP("a GPU device part cannot run this host-only body (it sleeps and throws)");
  } else {
    std::atomic<bool> device_done{false};
    Kokkos::View<int*, Kokkos::HostSpace> touched("touched", 100);
    const auto run = [&] {
      hetero::parallel_for("test_throw", hetero::split_policy<device, host>(0, 100).weight(0.5).host_chunks(1),
                           [=, &device_done](std::int64_t i) {
                             if (i >= 50) throw std::runtime_error("host part failed at " + std::to_string(i));
                             touched(i) = 1;
                             if (i == 49) {
                               std::this_thread::sleep_for(std::chrono::milliseconds(30));
                               device_done = true;
                             }
                           });
    };
    // On a parallel host (OpenMP) another element may throw first: any of them.
    CHECK_THROWS_WITH(run(), ContainsSubstring("host part failed at "));
    CHECK(device_done.load());
    for (int i = 0; i < 50; ++i) REQUIRE(touched(i) == 1);
  }
}

TEST_CASE("bad weights, counts and sizes raise invalid_argument naming the value", "[exec][parallel_for]") {
  CHECK_THROWS_WITH(hetero::reset_weight("bad", 1.5), ContainsSubstring("1.5") && ContainsSubstring("[0, 1]"));
  CHECK_THROWS_WITH(hetero::reset_weight("bad", -0.25), ContainsSubstring("-0.25"));
  CHECK_THROWS_AS(hetero::reset_weight("bad", std::nan("")), hetero::invalid_argument);
  CHECK_THROWS_WITH(hetero::parallel_for("bad", -5, KOKKOS_LAMBDA(std::int64_t){}),
                    ContainsSubstring("iteration count is -5"));
  hetero::mirrored_array<double*> small("small", 10);
  CHECK_THROWS_WITH(hetero::parallel_for("bad", 12, hetero::access(hetero::writes(small)),
                                         KOKKOS_LAMBDA(std::int64_t, hetero::loop_view<double*>){}),
                    ContainsSubstring("'small' has 10 rows") && ContainsSubstring("[0, 12)"));
  CHECK_THROWS_WITH(
      hetero::parallel_for("bad", 10, hetero::access(hetero::reads(small), hetero::writes(small)),
                           KOKKOS_LAMBDA(std::int64_t, hetero::loop_view<double*>, hetero::loop_view<double*>){}),
      ContainsSubstring("appears twice"));
  auto copy = small;  // a copy of the handle is the same array
  CHECK_THROWS_WITH(hetero::parallel_for("bad", 10, hetero::access(hetero::reads_all(small), hetero::writes(copy)),
                                         KOKKOS_LAMBDA(std::int64_t, hetero::loop_view<const double*>,
                                                       hetero::loop_view<double*>){}),
                    ContainsSubstring("appears twice"));
  hetero::mirrored_array<double*> big("big", 5);
  CHECK_NOTHROW(hetero::parallel_for("ok", 3, hetero::access(hetero::reads_all(big)),
                                     KOKKOS_LAMBDA(std::int64_t, hetero::loop_view<const double*>){}));
}

#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
TEST_CASE("a split loop inside a part of another split loop is refused", "[exec][parallel_for]") {
  using policy = hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial>;
  // split_for calls the bodies directly (an exception must not leave an OpenMP region).
  CHECK_THROWS_WITH(hetero::split_for("outer", policy(0, 4).weight(0.5).host_chunks(1),
                                      [](const auto&, std::int64_t, std::int64_t) {
                                        hetero::parallel_for("inner", policy(0, 4).weight(0.5),
                                                             [](std::int64_t) {});
                                      }),
                    ContainsSubstring("'inner' was started inside a part of split loop 'outer'"));
  // The same from the threads of a part's OpenMP kernel (the host part's chunks run there):
  // each is refused, where before it waited for ever for the outer loop's lock.
  using host_openmp = hetero::split_policy<Kokkos::Serial, Kokkos::OpenMP>;
  // Starts the inner split loop, counting its refusal in `refusals`.
  const auto start_inner = [](std::atomic<int>& refusals) {
    try {
      hetero::parallel_for("inner", host_openmp(0, 4).weight(0.5), [](std::int64_t) {});
    } catch (const hetero::runtime_error&) {
      ++refusals;
      throw;
    }
  };
  std::atomic<int> refused{0}, chunks{0};
  CHECK_THROWS_WITH(hetero::split_for("outer", host_openmp(0, 8).weight(0.5).host_chunks(4),
                                      [&](const auto&, std::int64_t, std::int64_t) {
                                        ++chunks;
                                        start_inner(refused);
                                      }),
                    ContainsSubstring("'inner' was started inside a part of split loop 'outer'"));
  CHECK(refused.load() == chunks.load());
  // And from the blocks of a parallel_for body that may throw, on every host thread.
  std::atomic<int> inner_refused{0};
  CHECK_THROWS_WITH(hetero::parallel_for("outer", host_openmp(0, 64).weight(0.5),
                                         [&](std::int64_t) { start_inner(inner_refused); }),
                    ContainsSubstring("'inner' was started inside a part of split loop 'outer'"));
  CHECK(inner_refused.load() >= 1);
  // Refused before its arrays are touched: the device copy stays the current one.
  hetero::mirrored_array<double*, Kokkos::OpenMP, Kokkos::Serial> y(hetero::mirror_mode::separate, "y", 4);
  Kokkos::deep_copy(y.device_view(), 7.0);
  y.modify_device();
  CHECK_THROWS_WITH(hetero::split_for("outer", policy(0, 4).weight(0.5).host_chunks(1),
                                      [&](const auto&, std::int64_t, std::int64_t) {
                                        hetero::parallel_for("inner", policy(0, 4).weight(0.5),
                                                             hetero::access(hetero::writes(y)),
                                                             [](std::int64_t, hetero::loop_view<double*>) {});
                                      }),
                    ContainsSubstring("'inner' was started inside a part of split loop 'outer'"));
  y.sync_host();
  for (std::int64_t i = 0; i < 4; ++i) CHECK(y.host_view()(i) == 7.0);
  // A loop that does not split (one side has nothing) may run inside one.
  std::atomic<int> count{0};
  hetero::split_for("outer", policy(0, 4).weight(0.5).host_chunks(1),
                    [&](const auto&, std::int64_t b, std::int64_t e) {
                      hetero::parallel_for("inner", policy(b, e).weight(0.0), [&](std::int64_t) { ++count; });
                    });
  CHECK(count == 4);
}
#endif

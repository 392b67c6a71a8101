// split_for: the device gets one chunk with its instance, the host one chunk per core with its
// instance, together covering the range once; views of mirrored arrays; exceptions.
#include <hetero/exec/split_for.hpp>
#include <hetero/exec/split_stats.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "random.hpp"
#include "space_pairs.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

struct chunk {
  bool on_device;
  std::int64_t begin, end;
};

// c(i, j) = 3 a(i, j) over rows, as a kernel: a GPU side's views are in device memory (and nvcc
// takes no device lambda inside the generic chunk body).
template <class A, class C>
struct triple_rows {
  A a;
  C c;
  std::int64_t columns;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    for (std::int64_t j = 0; j < columns; ++j) c(i, j) = 3 * a(i, j);
  }
};

}  // namespace

TEMPLATE_LIST_TEST_CASE("split_for hands each side its instance and chunks that cover the range once",
                        "[exec][split_for]", hetero::testing::all_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  constexpr bool single = hetero::is_single_space<device, host>;
  auto gen = hetero::testing::rng(41);
  for (int trial = 0; trial < 30; ++trial) {
    const std::int64_t begin = std::uniform_int_distribution<std::int64_t>(0, 100)(gen);
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(0, 2000)(gen);
    const double w = trial % 3 == 0   ? 0.0
                     : trial % 3 == 1 ? 1.0
                                      : std::uniform_real_distribution<double>(0, 1)(gen);
    const int chunks = std::uniform_int_distribution<int>(1, 4)(gen);
    INFO("range [" << begin << ", " << begin + n << ") weight " << w << " host chunks " << chunks);
    std::mutex mutex;
    std::vector<chunk> seen;
    hetero::split_for("test_chunks",
                      hetero::split_policy<device, host>(begin, begin + n).weight(w).host_chunks(chunks),
                      [&](const auto& space, std::int64_t b, std::int64_t e) {
                        using space_t = std::decay_t<decltype(space)>;
                        std::scoped_lock lock(mutex);
                        seen.push_back({std::is_same_v<space_t, device>, b, e});
                      });
    const auto plan = hetero::detail::make_split_plan(
        begin, begin + n, single ? 0.0 : w, std::min<int>(chunks, static_cast<int>(host().concurrency())));
    std::sort(seen.begin(), seen.end(), [](const chunk& a, const chunk& b) { return a.begin < b.begin; });
    const std::size_t expected_calls = (plan.device_items() > 0 ? 1u : 0u) +
                                       (plan.host_items() > 0 ? static_cast<std::size_t>(plan.host_chunks) : 0u);
    REQUIRE(seen.size() == expected_calls);
    std::int64_t next = begin;
    for (const auto& c : seen) {
      CHECK(c.begin == next);
      CHECK(c.end > c.begin);
      next = c.end;
    }
    CHECK(next == begin + n);
    if (plan.device_items() > 0) {
      CHECK(seen.front().end == plan.device_end);  // one device chunk, first
      CHECK(seen.front().on_device);
    }
    if (!single)
      for (std::size_t k = plan.device_items() > 0 ? 1 : 0; k < seen.size(); ++k) CHECK_FALSE(seen[k].on_device);
  }
}

TEMPLATE_LIST_TEST_CASE("split_for bodies get their side's views after the missing rows moved",
                        "[exec][split_for][mirror]", hetero::testing::split_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  using array = hetero::mirrored_array<double**, device, host>;
  auto gen = hetero::testing::rng(42);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(10, 200)(gen);
  const std::int64_t m = 7;
  array a(hetero::mirror_mode::separate, "a", n, m), c(hetero::mirror_mode::separate, "c", n, m);
  std::vector<double> values(static_cast<std::size_t>(n * m));
  for (auto& v : values) v = std::uniform_real_distribution<double>(-1, 1)(gen);
  a.assign_host(values);
  const double w = std::uniform_real_distribution<double>(0.1, 0.9)(gen);
  hetero::split_for(
      "test_rows", hetero::split_policy<device, host>(0, n).weight(w),
      hetero::access(hetero::reads(a), hetero::writes(c)),
      [&](const auto& space, std::int64_t b, std::int64_t e, const auto& av, const auto& cv) {
        using space_type = std::remove_cvref_t<decltype(space)>;
        if constexpr (hetero::is_gpu_space<space_type>) {  // device views: a kernel
          Kokkos::parallel_for(
              "triple", Kokkos::RangePolicy<space_type>(space, b, e),
              triple_rows<std::remove_cvref_t<decltype(av)>, std::remove_cvref_t<decltype(cv)>>{av, cv, m});
          space.fence();
        } else {
          for (std::int64_t i = b; i < e; ++i)
            for (std::int64_t j = 0; j < m; ++j) cv(i, j) = 3 * av(i, j);
        }
      });
  const auto plan = hetero::detail::make_split_plan(0, n, hetero::is_single_space<device, host> ? 0.0 : w, 1);
  CHECK(a.bytes_to_device() == static_cast<std::uint64_t>(plan.device_items() * m) * sizeof(double));
  c.sync_host();
  CHECK(c.bytes_to_host() == static_cast<std::uint64_t>(plan.device_items() * m) * sizeof(double));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      REQUIRE(c.host_view()(i, j) == 3 * values[static_cast<std::size_t>(i * m + j)]);
}

TEMPLATE_LIST_TEST_CASE("an exception of a host chunk reaches the caller after the device chunk finished",
                        "[exec][split_for]", hetero::testing::split_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  if constexpr (hetero::is_single_space<device, host>) {
    SKIP("one space: there is no host part");
  } else {
    std::atomic<bool> device_done{false};
    const auto run = [&] {
      hetero::split_for("test_chunk_throw", hetero::split_policy<device, host>(0, 64).weight(0.5),
                        [&](const auto& space, std::int64_t b, std::int64_t) {
                          if constexpr (std::is_same_v<std::decay_t<decltype(space)>, host>) {
                            throw std::runtime_error("host chunk at " + std::to_string(b) + " failed");
                          } else {
                            std::this_thread::sleep_for(std::chrono::milliseconds(30));
                            device_done = true;
                          }
                        });
    };
    CHECK_THROWS_WITH(run(), ContainsSubstring("host chunk at ") && ContainsSubstring("failed"));
    CHECK(device_done.load());
  }
}

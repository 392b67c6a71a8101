// exec on a GPU: Kokkos::Cuda as the device side of split loops and the host cores as the other.
// Every result is checked against a serial loop on the host: mirrored arrays' row moves in both
// directions (the device copy read back by a device kernel), parallel_for and parallel_reduce
// over random ranges and weights, the chunk form with cuBLAS-free device kernels, an exception
// of the host half, and the tuner settling on a loop the GPU dwarfs.
#include <hetero/exec.hpp>

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_support.hpp"
#include "random.hpp"

namespace {

using gpu_test::device;
using gpu_test::host;
using policy = hetero::split_policy<device, host>;
using rows3 = hetero::mirrored_array<double* [3], device, host>;
using column = hetero::mirrored_array<double*, device, host>;

KOKKOS_INLINE_FUNCTION double value_of(std::int64_t i, int c) {
  return static_cast<double>((i * 7919 + c * 104729) % 1009) - 504.0;
}

struct host_failure : std::logic_error {
  using std::logic_error::logic_error;
};

// Device bodies called from split_for's generic chunk body: nvcc takes no extended lambda inside
// another lambda, so these are functors.
template <class X, class Y>
struct negate {
  X x;
  Y y;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { y(i) = -x(i); }
};
template <class Out>
struct write_index {
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { out(i) = static_cast<double>(i); }
};

}  // namespace

TEST_CASE("mirrored arrays move the rows each side lacks between GPU and host memory, both ways", "[gpu][exec]") {
  auto gen = hetero::testing::rng(101);
  for (int trial = 0; trial < 6; ++trial) {
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, 50000)(gen);
    rows3 a("a", n);
    REQUIRE_FALSE(a.shares_memory());
    std::vector<double> values(static_cast<std::size_t>(3 * n));
    for (auto& v : values) v = std::uniform_real_distribution<double>(-1, 1)(gen);
    a.assign_host(values);
    const std::int64_t lo = std::uniform_int_distribution<std::int64_t>(0, n)(gen);
    const std::int64_t hi = std::uniform_int_distribution<std::int64_t>(lo, n)(gen);
    INFO("n " << n << ", rows [" << lo << ", " << hi << ")");
    a.sync_device(lo, hi);
    CHECK(a.bytes_to_device() == static_cast<std::uint64_t>(hi - lo) * a.row_bytes());
    // The device copy, read back by a kernel on the GPU: rows [lo, hi) hold the host's values.
    Kokkos::View<double*, Kokkos::HostSpace> expected_host("expected", static_cast<std::size_t>(3 * n));
    for (std::size_t k = 0; k < values.size(); ++k) expected_host(k) = values[k];
    const auto expected = Kokkos::create_mirror_view_and_copy(gpu_test::device_memory{}, expected_host);
    const auto d = a.device_view();
    std::int64_t wrong = 0;
    Kokkos::parallel_reduce(
        "check_rows", Kokkos::RangePolicy<device>(lo, hi),
        KOKKOS_LAMBDA(std::int64_t r, std::int64_t & w) {
          for (int c = 0; c < 3; ++c) w += d(r, c) != expected(3 * r + c) ? 1 : 0;
        },
        wrong);
    CHECK(wrong == 0);

    // The GPU writes some rows; only those come back, and the others keep the host's values.
    const std::int64_t w0 = std::uniform_int_distribution<std::int64_t>(0, n)(gen);
    const std::int64_t w1 = std::uniform_int_distribution<std::int64_t>(w0, n)(gen);
    a.sync_device();
    Kokkos::parallel_for(
        "write_rows", Kokkos::RangePolicy<device>(w0, w1), KOKKOS_LAMBDA(std::int64_t r) {
          for (int c = 0; c < 3; ++c) d(r, c) = value_of(r, c);
        });
    a.modify_device(w0, w1);
    a.reset_transfer_counters();
    a.sync_host();
    CHECK(a.bytes_to_host() == static_cast<std::uint64_t>(w1 - w0) * a.row_bytes());
    std::int64_t host_wrong = 0;
    for (std::int64_t r = 0; r < n; ++r)
      for (int c = 0; c < 3; ++c)
        host_wrong += a.host_view()(r, c) != (r >= w0 && r < w1 ? value_of(r, c) : values[3 * r + c]);
    CHECK(host_wrong == 0);
  }
}

TEST_CASE("split loops on the GPU and the host cores equal a serial loop for any range and weight",
          "[gpu][exec]") {
  auto gen = hetero::testing::rng(102);
  for (int trial = 0; trial < 12; ++trial) {
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(0, 200000)(gen);
    const double w = trial % 3 == 0   ? 0.0
                     : trial % 3 == 1 ? 1.0
                                      : std::uniform_real_distribution<double>(0, 1)(gen);
    INFO("n " << n << ", weight " << w);
    column x("x", n), y("y", n);
    // Multiples of 1/8: 3 x + v is exact, whether or not a side contracts it into a fused
    // multiply-add (the GPU does; the first GPU run found 0.1-0.6 % of elements a rounding apart).
    std::vector<double> xs(static_cast<std::size_t>(n));
    for (auto& v : xs) v = static_cast<double>(std::uniform_int_distribution<int>(-8000, 8000)(gen)) / 8;
    x.assign_host(xs);
    hetero::reset_weight("gpu_scale", w);
    hetero::parallel_for(
        "gpu_scale", policy(0, n), hetero::access(hetero::reads(x), hetero::writes(y)),
        KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double*> xv, hetero::loop_view<double*> yv) {
          yv(i) = 3 * xv(i) + value_of(i, 1);
        });
    const auto stats = hetero::split_statistics("gpu_scale");
    CHECK(stats.device_items + stats.host_items == n);
    y.sync_host();
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < n; ++i) wrong += y.host_view()(i) != 3 * xs[i] + value_of(i, 1);
    CHECK(wrong == 0);

    double sum = 0, expected_sum = 0, largest = -1e300, expected_largest = -1e300;
    for (std::int64_t i = 0; i < n; ++i) {
      expected_sum += value_of(i, 2);  // integers: exact in any order
      expected_largest = std::max(expected_largest, xs[i]);
    }
    hetero::parallel_reduce(
        "gpu_sum", policy(0, n).weight(w), KOKKOS_LAMBDA(std::int64_t i, double& s) { s += value_of(i, 2); }, sum);
    CHECK(sum == expected_sum);
    hetero::parallel_reduce(
        "gpu_max", policy(0, n).weight(w), hetero::access(hetero::reads(x)),
        KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double*> xv, double& m) {
          m = xv(i) > m ? xv(i) : m;
        },
        Kokkos::Max<double>(largest));
    if (n > 0) CHECK(largest == expected_largest);
  }
}

TEST_CASE("split_for hands the GPU its device views and the host its host views", "[gpu][exec]") {
  auto gen = hetero::testing::rng(103);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1000, 100000)(gen);
  column x("x", n), y("y", n);
  std::vector<double> xs(static_cast<std::size_t>(n));
  for (auto& v : xs) v = std::uniform_real_distribution<double>(-1, 1)(gen);
  x.assign_host(xs);
  int device_calls = 0, host_calls = 0;
  hetero::split_for("gpu_chunks", policy(0, n).weight(0.5).host_chunks(3),
                    hetero::access(hetero::reads(x), hetero::writes(y)),
                    [&](const auto& space, std::int64_t b, std::int64_t e, const auto& xv, const auto& yv) {
                      using space_type = std::remove_cvref_t<decltype(space)>;
                      if constexpr (hetero::is_gpu_space<space_type>) {
                        ++device_calls;
                        Kokkos::parallel_for(
                            "gpu_chunk", Kokkos::RangePolicy<space_type>(space, b, e),
                            negate<std::remove_cvref_t<decltype(xv)>, std::remove_cvref_t<decltype(yv)>>{xv, yv});
                      } else {
                        ++host_calls;
                        for (std::int64_t i = b; i < e; ++i) yv(i) = -xv(i);
                      }
                    });
  CHECK(device_calls == 1);
  CHECK(host_calls >= 1);
  y.sync_host();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += y.host_view()(i) != -xs[i];
  CHECK(wrong == 0);
}

TEST_CASE("an exception of the host half reaches the caller after the GPU half finished", "[gpu][exec]") {
  const std::int64_t n = 100000;
  Kokkos::View<double*, Kokkos::CudaUVMSpace> out("out", n);
  const std::int64_t host_begin = hetero::detail::make_split_plan(0, n, 0.5, 1).host_begin;
  const std::int64_t failing = host_begin + 17;
  Kokkos::deep_copy(out, -1.0);
  bool caught = false;
  try {
    hetero::split_for("gpu_host_throws", policy(0, n).weight(0.5).host_chunks(1),
                      [&](const auto& space, std::int64_t b, std::int64_t e) {
                        using space_type = std::remove_cvref_t<decltype(space)>;
                        if constexpr (hetero::is_gpu_space<space_type>) {
                          Kokkos::parallel_for("gpu_half", Kokkos::RangePolicy<space_type>(space, b, e),
                                               write_index<decltype(out)>{out});
                        } else {
                          for (std::int64_t i = b; i < e; ++i) {
                            if (i == failing) throw host_failure("element " + std::to_string(i) + " failed");
                            out(i) = static_cast<double>(i);
                          }
                        }
                      });
  } catch (const host_failure& e) {
    caught = true;
    CHECK(std::string(e.what()) == "element " + std::to_string(failing) + " failed");
  }
  CHECK(caught);
  Kokkos::fence();
  std::int64_t wrong = 0;  // the GPU half ran whole; the host half stopped at its failing element
  for (std::int64_t i = 0; i < n; ++i) {
    const double expected = i < failing ? static_cast<double>(i) : -1.0;
    wrong += out(i) != expected;
  }
  CHECK(wrong == 0);
  // The next split loop runs every element.
  hetero::parallel_for(
      "gpu_after_throw", policy(0, n), KOKKOS_LAMBDA(std::int64_t i) { out(i) = 2.0 * static_cast<double>(i); });
  Kokkos::fence();
  wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += out(i) != 2.0 * static_cast<double>(i);
  CHECK(wrong == 0);
}

TEST_CASE("the tuner settles on a loop the GPU dwarfs, every step's result right", "[gpu][exec][tuner]") {
  // Work per element heavy enough that the GPU runs the whole loop far faster than the host cores.
  const std::int64_t n = 1 << 20;
  column y("y", n);
  const char* label = "gpu_tuner";
  hetero::set_tuner(label, hetero::tuner_kind::model);
  hetero::reset_weight(label, 0.2);  // the seed paper's start
  std::vector<double> weights;
  std::string line;
  for (int step = 1; step <= 8; ++step) {
    weights.push_back(hetero::cpu_weight(label));
    hetero::parallel_for(
        label, policy(0, n), hetero::access(hetero::writes(y)),
        KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<double*> yv) {
          double s = 0;
          for (int k = 1; k <= 200; ++k) s += 1.0 / (static_cast<double>(i % 97) + k);
          yv(i) = s;
        });
    y.sync_host();
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < n; i += 997) {
      double s = 0;
      for (int k = 1; k <= 200; ++k) s += 1.0 / (static_cast<double>(i % 97) + k);
      wrong += std::abs(y.host_view()(i) - s) > 1e-12 * s;
    }
    REQUIRE(wrong == 0);
    line += " " + std::to_string(weights.back()).substr(0, 6);
  }
  const auto stats = hetero::split_statistics(label);
  std::printf("kit: exec tuner from w = 0.2 on a GPU-bound loop, weights per step:%s; decision: %s\n",
              line.c_str(), stats.decision.c_str());
  // Settled: the last steps keep one weight, and it is below the start (the GPU is faster).
  CHECK(weights[6] == weights[7]);
  CHECK(weights.back() < 0.2);
}

// The bounds the GPU benchmarks print (bench/support/bounds.hpp): the rates file they read, the
// bound of a piece of work, and the bytes and flops of each benchmark's kernels, against serial
// references (a walk over a random CSR matrix that records every byte it touches; a tally of
// each fused CG kernel's reads and writes).
#include "bounds.hpp"

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "random.hpp"

using Catch::Approx;
using Catch::Matchers::ContainsSubstring;
namespace hb = hetero::bench;

namespace {

const char* const rate_names[] = {"triad_bytes_per_s",        "launch_s",
                                  "launch_and_wait_s",        "h2d_pinned_bytes_per_s",
                                  "d2h_pinned_bytes_per_s",   "h2d_pageable_bytes_per_s",
                                  "d2h_pageable_bytes_per_s", "fp64_flops_per_s",
                                  "fp64_matrix_flops_per_s"};

std::string rates_text(const std::vector<double>& v, int leave_out = -1) {
  std::ostringstream out;
  out << "# a comment\n\n";
  for (int i = 0; i < 9; ++i)
    if (i != leave_out) out << rate_names[i] << ' ' << v[i] << '\n';
  return out.str();
}

hb::device_rates some_rates() {
  return {.bandwidth = 4e12,
          .launch = 2e-6,
          .launch_and_wait = 6e-6,
          .to_device_pinned = 50e9,
          .to_host_pinned = 40e9,
          .to_device_pageable = 10e9,
          .to_host_pageable = 8e9,
          .fp64 = 33e12,
          .fp64_matrix = 50e12};
}

}  // namespace

TEST_CASE("the rates file of kit_device_rates is read, and a wrong one named", "[bench][bounds]") {
  auto gen = hetero::testing::rng(1);
  std::uniform_real_distribution<double> u(1e-7, 1e13);
  std::vector<double> v(9);
  for (auto& x : v) x = u(gen);
  std::istringstream in(rates_text(v));
  const hb::device_rates r = hb::parse_device_rates(in);
  const double got[] = {r.bandwidth,        r.launch,         r.launch_and_wait,
                        r.to_device_pinned, r.to_host_pinned, r.to_device_pageable,
                        r.to_host_pageable, r.fp64,           r.fp64_matrix};
  for (int i = 0; i < 9; ++i) CHECK(got[i] == Approx(v[i]).epsilon(1e-5));

  for (int missing = 0; missing < 9; ++missing) {
    std::istringstream partial(rates_text(v, missing));
    CHECK_THROWS_WITH(hb::parse_device_rates(partial),
                      ContainsSubstring(std::string("no value for ") + rate_names[missing]));
  }
  std::istringstream bad("triad_bytes_per_s 4e12\nlaunch_s\n");
  CHECK_THROWS_WITH(hb::parse_device_rates(bad), ContainsSubstring("line 2: 'launch_s'"));
  std::istringstream negative("triad_bytes_per_s -1\n");
  CHECK_THROWS_WITH(hb::parse_device_rates(negative), ContainsSubstring("a value of 0 or more"));
  std::istringstream extra("triad_bytes_per_s 1 2\n");
  CHECK_THROWS_WITH(hb::parse_device_rates(extra), ContainsSubstring("line 1"));
}

TEST_CASE("a bound is the slowest of memory, FP64 work and launches, plus waits and copies", "[bench][bounds]") {
  const hb::device_rates r = some_rates();
  // Memory alone: 4 GB at 4 TB/s.
  CHECK(hb::bound_seconds({.bytes = 4e9}, r) == Approx(1e-3));
  // FP64 on the pipe and on the matrix units add up; memory hides under them.
  CHECK(hb::bound_seconds({.bytes = 4e6, .flops = 33e9, .matrix_flops = 50e9}, r) == Approx(2e-3));
  // 1,000 launches of tiny kernels: the launches bound it.
  CHECK(hb::bound_seconds({.bytes = 1e3, .launches = 1000}, r) == Approx(2e-3));
  // Each host wait adds what a waited launch costs beyond a plain one (4 us here).
  CHECK(hb::bound_seconds({.bytes = 4e9, .launches = 3, .host_waits = 2}, r) == Approx(1e-3 + 8e-6));
  // Copies over the link add, at the pinned or the pageable rate.
  CHECK(hb::bound_seconds({.to_device_bytes = 50e6, .to_host_bytes = 40e6}, r) == Approx(2e-3));
  CHECK(hb::bound_seconds({.to_device_bytes = 10e6, .to_host_bytes = 8e6, .pinned = false}, r) == Approx(2e-3));
  // Work adds up piece by piece.
  hb::device_work w{.bytes = 1e9, .launches = 1};
  w += hb::device_work{.bytes = 3e9, .launches = 2, .host_waits = 1, .pinned = false};
  CHECK(w.bytes == 4e9);
  CHECK(w.launches == 3);
  CHECK(w.host_waits == 1);
  CHECK_FALSE(w.pinned);
}

TEST_CASE("a CSR product's bytes are those a walk over the product touches", "[bench][bounds]") {
  auto gen = hetero::testing::rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(1, 300)(gen);
    // Every column is read at least once (the diagonal), as in every SPD matrix.
    std::vector<std::int64_t> offsets{0};
    std::vector<std::int64_t> columns;
    for (std::int64_t i = 0; i < rows; ++i) {
      std::set<std::int64_t> row{i};
      const int extra = std::uniform_int_distribution<int>(0, 6)(gen);
      for (int e = 0; e < extra; ++e) row.insert(std::uniform_int_distribution<std::int64_t>(0, rows - 1)(gen));
      columns.insert(columns.end(), row.begin(), row.end());
      offsets.push_back(static_cast<std::int64_t>(columns.size()));
    }
    const std::int64_t nnz = offsets.back();
    for (const auto& [offset_bytes, index_bytes] : {std::pair{8, 4}, std::pair{8, 8}, std::pair{4, 4}}) {
      // The serial reference: y(i) = sum over row i of v(k) x(col(k)), each element's bytes
      // recorded once, as (array, element) pairs.
      std::set<std::pair<int, std::int64_t>> touched;
      double bytes = 0;
      const auto touch = [&](int array, std::int64_t element, int size) {
        if (touched.emplace(array, element).second) bytes += size;
      };
      for (std::int64_t i = 0; i < rows; ++i) {
        touch(0, i, offset_bytes), touch(0, i + 1, offset_bytes);
        for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
          touch(1, k, index_bytes), touch(2, k, 8), touch(3, columns[k], 8);
        }
        touch(4, i, 8);
      }
      CHECK(hb::csr_product_bytes(rows, rows, nnz, offset_bytes, index_bytes) == bytes);
    }
  }
}

TEST_CASE("a CG iteration's floor: the matrix per product and the passes of its fused kernels",
          "[bench][bounds]") {
  // A 3-D Poisson matrix of n^3 rows: 7 entries a row less one per face.
  auto gen = hetero::testing::rng(3);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(8, 160)(gen);
  const std::int64_t rows = n * n * n, nnz = 7 * rows - 6 * n * n;
  const double matrix = 8.0 * static_cast<double>(rows + 1) + 12.0 * static_cast<double>(nnz);
  const double pass = 8.0 * static_cast<double>(rows);
  // Each fused kernel's vectors read plus written, in the order the recurrence runs them.
  struct tally {
    hb::cg_recurrence recurrence;
    hb::cg_preconditioning preconditioning;
    std::vector<int> passes;  // per kernel
    int products, launches, waits;
  };
  const tally cases[] = {
      // q = A p (p, q) with p'q; x, r update with r'r (x p r q -> x r); p = r + b p (r p -> p)
      {hb::cg_recurrence::classic, hb::cg_preconditioning::none, {2, 6, 3}, 1, 3, 2},
      // ... z = D r in the update (x p r q d -> x r z); p = z + b p
      {hb::cg_recurrence::classic, hb::cg_preconditioning::jacobi, {2, 8, 3}, 1, 3, 2},
      // both products in one sweep (s r -> u w); the recurrences' update and the dots
      {hb::cg_recurrence::pipelined, hb::cg_preconditioning::none, {4, 10}, 1, 2, 1},
      {hb::cg_recurrence::pipelined, hb::cg_preconditioning::jacobi, {4, 15}, 1, 2, 1},
  };
  for (const auto& c : cases) {
    double passes = 0;
    for (const int p : c.passes) passes += p;
    const hb::device_work w = hb::cg_iteration_work(c.recurrence, c.preconditioning, 0, rows, nnz, 8, 4);
    CHECK(w.bytes == Approx(c.products * matrix + passes * pass));
    CHECK(w.launches == c.launches);
    CHECK(w.host_waits == c.waits);
    CHECK(w.flops >= 2.0 * static_cast<double>(nnz));
  }
  // Chebyshev of degree d: Jacobi's iteration and d - 1 more products, each with its 6-pass step.
  for (int d = 1; d <= 6; ++d) {
    const auto classic =
        hb::cg_iteration_work(hb::cg_recurrence::classic, hb::cg_preconditioning::polynomial, d, rows, nnz, 8, 4);
    CHECK(classic.bytes == Approx(d * matrix + (6.0 * (d - 1) + 13) * pass));
    CHECK(classic.launches == 2 + d);
    const auto pipelined = hb::cg_iteration_work(hb::cg_recurrence::pipelined, hb::cg_preconditioning::polynomial,
                                                 d, rows, nnz, 8, 4);
    CHECK(pipelined.bytes == Approx(d * matrix + (6.0 * (d - 1) + 19) * pass));
  }
  CHECK_THROWS_WITH(
      hb::cg_iteration_work(hb::cg_recurrence::classic, hb::cg_preconditioning::polynomial, 0, rows, nnz, 8, 4),
      ContainsSubstring("degree 0; allowed: 1 or more"));
  // The figure at 128^3 (rows 2,097,152): classic, none moves about 376 MB at its floor.
  const auto at128 = hb::cg_iteration_work(hb::cg_recurrence::classic, hb::cg_preconditioning::none, 0, 2097152,
                                           7 * 2097152 - 6 * 128 * 128, 8, 4);
  CHECK(at128.bytes / 1e6 == Approx(376.2).margin(0.5));
}

TEST_CASE("the N-body, triad and DGEMM kernels' work", "[bench][bounds]") {
  auto gen = hetero::testing::rng(4);
  const std::int64_t targets = std::uniform_int_distribution<std::int64_t>(1, 1 << 20)(gen);
  const std::int64_t sources = std::uniform_int_distribution<std::int64_t>(1, 1 << 20)(gen);
  const auto nbody = hb::nbody_forces_work(targets, sources);
  // 13 FP64 instructions an interaction, 2 flops each at the FMA pipe's rate.
  CHECK(nbody.flops == 26.0 * static_cast<double>(targets) * static_cast<double>(sources));
  CHECK(nbody.bytes == 32.0 * static_cast<double>(sources) + 24.0 * static_cast<double>(targets));
  CHECK(nbody.launches == 1);
  const auto triad = hb::triad_work(targets);
  CHECK(triad.bytes == 24.0 * static_cast<double>(targets));
  const auto gemm = hb::dgemm_work(targets % 4096 + 1, 64, 128);
  const double m = static_cast<double>(targets % 4096 + 1);
  CHECK(gemm.matrix_flops == 2.0 * m * 64 * 128);
  CHECK(gemm.bytes == 8.0 * (m * 128 + 128 * 64 + m * 64));
  const auto potrf = hb::potrf_work(3000, true);
  CHECK(potrf.matrix_flops == Approx(9e9));
  CHECK(potrf.to_device_bytes == 72e6);
  CHECK(potrf.to_host_bytes == 72e6);
  CHECK_FALSE(potrf.pinned);
  CHECK(hb::potrf_work(3000, false).to_device_bytes == 0);
  const auto allreduce = hb::staged_allreduce_work(1 << 20);
  CHECK(hb::bound_seconds(allreduce, some_rates()) == Approx(4e-6 + 1048576 / 50e9 + 1048576 / 40e9));
  const auto broadcast = hb::staged_broadcast_work(1 << 20);
  CHECK(hb::bound_seconds(broadcast, some_rates()) == hb::bound_seconds(allreduce, some_rates()));
  // 3 ranks: one block to the host, three back.
  const auto allgather = hb::staged_allgather_work(1 << 20, 3);
  CHECK(allgather.to_host_bytes == 1048576);
  CHECK(allgather.to_device_bytes == 3 * 1048576.0);
  CHECK(hb::bound_seconds(allgather, some_rates()) == Approx(4e-6 + 3 * 1048576 / 50e9 + 1048576 / 40e9));
  // 16,384 bodies on a device of 33 TFLOP/s: 0.21 ms, the flops far above the bytes.
  const auto r = some_rates();
  CHECK(hb::bound_seconds(hb::nbody_forces_work(16384, 16384), r) == Approx(26.0 * 16384 * 16384 / 33e12));
}

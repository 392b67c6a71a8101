// The kernels CG runs on a GPU (linalg/detail/vector_kernels.hpp: Kokkos' reductions, updates
// fused with their dot products), run here on the host's default execution space, each against
// a serial loop over the same random vectors. The GPU kit runs them on a GPU inside the solver
// (tests/gpu/linalg_gpu_test.cpp).
#include <hetero/linalg.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "random.hpp"

using Catch::Approx;

namespace {

using space = Kokkos::DefaultHostExecutionSpace;
using vector = Kokkos::View<double*, space::memory_space>;
using policy = Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>;

vector random_vector(std::mt19937_64& gen, std::int64_t n) {
  std::uniform_real_distribution<double> u(-1, 1);
  vector v("v", n);
  for (std::int64_t i = 0; i < n; ++i) v(i) = u(gen);
  return v;
}

vector copy_of(const vector& v) {
  vector c("copy", v.extent(0));
  Kokkos::deep_copy(c, v);
  return c;
}

/// A sum of n terms, in the order a serial loop adds them, with the sum of their magnitudes.
/// A parallel reduction adds them in another order. The two differ by less than
/// 8 sqrt(n) eps sum|t| but for a vanishing chance (Higham and Mary's probabilistic bound),
/// which can be far more than eps times the sum itself when signed terms cancel.
struct serial_sum {
  double value = 0, magnitude = 0;
  std::int64_t terms = 0;
  void add(double t) { value += t, magnitude += std::abs(t), ++terms; }
  /// `value` within that margin: a dropped or wrong term is still caught unless it is that small.
  [[nodiscard]] Approx approx() const {
    const double eps = std::numeric_limits<double>::epsilon();
    return Approx(value).epsilon(0).margin(8 * std::sqrt(static_cast<double>(terms)) * eps * magnitude);
  }
};

/// `a + b * c` as the kernel may compute it: rounded twice, or once where the compiler fuses
/// the two into an FMA (nvcc does by default, GCC with FMA enabled), so within an ulp of each term.
Approx fused(double a, double b, double c) {
  const double eps = std::numeric_limits<double>::epsilon();
  return Approx(a + b * c).epsilon(0).margin(2 * eps * (std::abs(a) + std::abs(b * c)));
}

}  // namespace

TEST_CASE("the GPU path's dot products and fused updates match serial loops", "[linalg][device_kernels]") {
  auto gen = hetero::testing::rng(11);
  for (const std::int64_t n :
       {std::int64_t{1}, std::int64_t{1000}, std::uniform_int_distribution<std::int64_t>(2, 300000)(gen)}) {
    CAPTURE(n);
    const vector x = random_vector(gen, n), r = random_vector(gen, n), p = random_vector(gen, n),
                 q = random_vector(gen, n), d = random_vector(gen, n), z = random_vector(gen, n),
                 s = random_vector(gen, n);
    const double alpha = std::uniform_real_distribution<double>(-2, 2)(gen);
    const policy all(0, n);

    serial_sum pq;
    for (std::int64_t i = 0; i < n; ++i) pq.add(p(i) * q(i));
    CHECK(hetero::detail::dot_reduce(all, p, q) == pq.approx());

    // x += alpha p; r -= alpha q; r'r
    {
      const vector x1 = copy_of(x), r1 = copy_of(r);
      const double rr = hetero::detail::cg_update_dot(all, x1, r1, alpha, p, q);
      serial_sum expected;
      for (std::int64_t i = 0; i < n; ++i) {
        const double ri = r(i) - alpha * q(i);
        CHECK(x1(i) == fused(x(i), alpha, p(i)));
        CHECK(r1(i) == fused(r(i), -alpha, q(i)));
        expected.add(ri * ri);
      }
      CHECK(rr == expected.approx());
    }
    // ... and z = d r, r'z and r'r (Jacobi)
    {
      const vector x1 = copy_of(x), r1 = copy_of(r), z1("z", n);
      const auto dots = hetero::detail::cg_update_jacobi_dots(all, x1, r1, z1, d, alpha, p, q);
      serial_sum rz, rr;
      for (std::int64_t i = 0; i < n; ++i) {
        const double ri = r(i) - alpha * q(i);
        CHECK(x1(i) == fused(x(i), alpha, p(i)));
        CHECK(r1(i) == fused(r(i), -alpha, q(i)));
        const double eps = std::numeric_limits<double>::epsilon();  // d times r1, rounded once more
        CHECK(z1(i) == Approx(d(i) * ri).epsilon(0).margin(4 * eps * std::abs(d(i)) *
                                                           (std::abs(r(i)) + std::abs(alpha * q(i)))));
        rz.add(ri * d(i) * ri);
        rr.add(ri * ri);
      }
      CHECK(dots.v[0] == rz.approx());
      CHECK(dots.v[1] == rr.approx());
    }
    // The pipelined variant's five products: r'z, p's, r'q, s'q, r'r.
    {
      const auto t = hetero::detail::pipelined_dots(all, r, z, p, s, q);
      serial_sum e[5];
      for (std::int64_t i = 0; i < n; ++i) {
        e[0].add(r(i) * z(i)), e[1].add(p(i) * s(i)), e[2].add(r(i) * q(i)), e[3].add(s(i) * q(i));
        e[4].add(r(i) * r(i));
      }
      for (int k = 0; k < 5; ++k) CHECK(t.v[k] == e[k].approx());
    }
  }
}

/// @file
/// The largest eigenvalue of D^-1 A (D the diagonal of an SPD `distributed_csr` A), estimated by
/// a few Lanczos steps on the symmetric D^-1/2 A D^-1/2, which has the same eigenvalues: what a
/// Chebyshev preconditioner needs to stay positive definite. Lanczos' largest Ritz value
/// approaches the largest eigenvalue from below within a few steps; its products run in the
/// matrix's memory (a GPU's too) and each step adds two allreduces of one number.
#ifndef HETERO_LINALG_DETAIL_SPECTRUM_HPP
#define HETERO_LINALG_DETAIL_SPECTRUM_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/linalg/detail/vector_kernels.hpp"

namespace hetero::detail {

/// The largest eigenvalue of the symmetric tridiagonal matrix with diagonal `alpha` and
/// off-diagonal `beta` (beta[i] couples rows i and i + 1), by bisection on Sturm counts.
inline double tridiagonal_largest(const std::vector<double>& alpha, const std::vector<double>& beta) {
  const std::size_t m = alpha.size();
  if (m == 0) return 0;
  // Gershgorin bounds the spectrum.
  double low = alpha[0], high = alpha[0];
  for (std::size_t i = 0; i < m; ++i) {
    const double radius = (i > 0 ? std::abs(beta[i - 1]) : 0.0) + (i + 1 < m ? std::abs(beta[i]) : 0.0);
    low = std::min(low, alpha[i] - radius);
    high = std::max(high, alpha[i] + radius);
  }
  // Eigenvalues greater than x: the sign changes of the Sturm sequence give those below.
  const auto below = [&](double x) {
    std::size_t count = 0;
    double q = 1;
    for (std::size_t i = 0; i < m; ++i) {
      const double b2 = i > 0 ? beta[i - 1] * beta[i - 1] : 0.0;
      q = alpha[i] - x - (i > 0 ? b2 / q : 0.0);
      if (q == 0) q = -1e-300;
      if (q < 0) ++count;
    }
    return count;
  };
  for (int k = 0; k < 200 && high - low > 1e-14 * std::max(std::abs(low), std::abs(high)); ++k) {
    const double mid = 0.5 * (low + high);
    if (below(mid) == m) {
      high = mid;  // every eigenvalue is below mid
    } else {
      low = mid;
    }
  }
  return high;
}

/// `steps` Lanczos steps on S = D^-1/2 A D^-1/2 (`root` holds D^-1/2 on this rank's rows) from
/// a start vector that depends on the global row only (the same on any number of ranks);
/// returns the largest Ritz value (at most S's largest eigenvalue). Collective.
template <class Matrix, class Vector>
double lanczos_largest(const Matrix& a, const Vector& root, int steps) {
  using space = typename Matrix::execution_space;
  const std::size_t n = a.local_rows();
  const Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>> policy(0, static_cast<std::int64_t>(n));
  Vector v("hetero::lanczos v", n), previous("hetero::lanczos previous", n), w("hetero::lanczos w", n);
  Vector scaled = a.make_halo_vector("hetero::lanczos scaled"), product = a.make_vector("hetero::lanczos Av");
  Vector partials("hetero::lanczos partials", dot_chunks(n));
  auto host_partials = Kokkos::create_mirror_view(partials);
  const auto global_dot = [&](const Vector& x, const Vector& y) {
    return a.comm().allreduce(send_buf(dot(policy, x, y, partials, host_partials)), op(ops::sum{}));
  };
  {
    auto start = Kokkos::create_mirror_view(v);
    for (std::size_t i = 0; i < n; ++i)
      start(i) = 1.0 + 0.5 * std::sin(0.7 * static_cast<double>(a.rows().begin + static_cast<std::int64_t>(i)));
    Kokkos::deep_copy(v, start);
  }
  double norm = std::sqrt(global_dot(v, v));
  axpby(policy, v, 1.0 / norm, v, 0.0, v);
  std::vector<double> alpha, beta;
  double beta_last = 0;
  for (int j = 0; j < steps; ++j) {
    scale(policy, scaled, root, v);  // w = S v
    a.multiply_halo(scaled, product);
    scale(policy, w, root, product);
    const double alpha_j = global_dot(w, v);
    alpha.push_back(alpha_j);
    axpby(policy, w, 1.0, w, -alpha_j, v);
    axpby(policy, w, 1.0, w, -beta_last, previous);
    beta_last = std::sqrt(global_dot(w, w));
    if (!(beta_last > 1e-12 * std::abs(alpha_j))) break;  // an invariant subspace: T is exact
    beta.push_back(beta_last);
    std::swap(previous, v);
    axpby(policy, v, 1.0 / beta_last, w, 0.0, w);
  }
  beta.resize(alpha.size() - 1);  // the last one couples to a step not taken
  return tridiagonal_largest(alpha, beta);
}

}  // namespace hetero::detail

#endif  // HETERO_LINALG_DETAIL_SPECTRUM_HPP

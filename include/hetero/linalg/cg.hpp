/// @file
/// `hetero::cg_solver`: conjugate gradients (no preconditioner) on a `distributed_csr`, in three
/// variants that differ in their communication per iteration:
///  - `allgather` (seed 003, Fig. 13): an allgather of the direction vector before the product,
///    and two allreduces of dot products;
///  - `halo`: only the entries of other ranks the rows read are exchanged, two allreduces;
///  - `pipelined` (Ghysels & Vanroose): one non-blocking allreduce of two dot products per
///    iteration, overlapped with the product (and its halo exchange).
/// Products, dot products and vector updates are Kokkos kernels in the matrix's memory space.
#ifndef HETERO_LINALG_CG_HPP
#define HETERO_LINALG_CG_HPP

#include <Kokkos_Core.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/linalg/detail/vector_kernels.hpp"
#include "hetero/linalg/distributed_csr.hpp"

namespace hetero {

/// How a CG iteration communicates (see the file comment).
enum class cg_variant { allgather, halo, pipelined };

/// "allgather", "halo" or "pipelined".
constexpr std::string_view to_string(cg_variant v) noexcept {
  return v == cg_variant::allgather ? "allgather" : v == cg_variant::halo ? "halo" : "pipelined";
}

/// What a solve does.
struct cg_options {
  cg_variant variant = cg_variant::halo;
  /// Stop when ||r|| / ||b|| falls below this (r the recurrence residual).
  double tolerance = 1e-8;
  /// Iterations at most (the solve then reports `converged` false unless the tolerance was met).
  int max_iterations = 10000;
  /// Run exactly `max_iterations` iterations whatever the residual (seed 003 timed 1000 fixed
  /// iterations).
  bool fixed_iterations = false;
};

/// What a solve did.
struct cg_result {
  int iterations = 0;
  /// ||b - A x|| / ||b|| of the returned x, computed afresh at the end.
  double residual = 0;
  /// The tolerance was met (for the recurrence residual that stops the iteration, or the true one).
  bool converged = false;
  /// Wall time of the iterations (all ranks: the slowest), and per iteration.
  double seconds = 0;
  double seconds_per_iteration = 0;
};

/// Solves A x = b for a symmetric positive definite `distributed_csr` A. Work vectors are
/// allocated once; `solve` may be called many times.
/// @code
/// hetero::distributed_csr<> a(comm, hetero::poisson_3d(64));
/// hetero::cg_solver<> cg(a, {.variant = hetero::cg_variant::pipelined});
/// auto b = a.make_vector(), x = a.make_vector();   // fill b; x is the initial guess
/// hetero::cg_result r = cg.solve(b, x);
/// @endcode
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class cg_solver {
 public:
  using matrix_type = distributed_csr<ExecutionSpace>;
  using vector_type = typename matrix_type::vector_type;

  cg_solver(const matrix_type& a, const cg_options& options = {}) : m_a(a), m_options(options) {
    HETERO_EXPECTS(options.tolerance >= 0 && options.max_iterations >= 0, "cg_options: tolerance ",
                   options.tolerance, " and max_iterations ", options.max_iterations, " must not be negative");
    m_r = a.make_vector("hetero::cg r");
    m_q = a.make_vector("hetero::cg q");
    m_p = a.make_halo_vector("hetero::cg p");  // halo room for the halo variant; a block otherwise
    if (options.variant == cg_variant::allgather)
      m_global = vector_type("hetero::cg gathered p", static_cast<std::size_t>(a.global_rows()));
    if (options.variant == cg_variant::pipelined) {
      m_w = a.make_halo_vector("hetero::cg w");
      m_z = a.make_vector("hetero::cg z");
      m_s = a.make_vector("hetero::cg s");
    }
  }

  /// Solves A x = b; `x` holds the initial guess on entry. Both hold this rank's rows. Throws
  /// `invalid_argument` when the iteration shows A is not positive definite (p'Ap <= 0).
  cg_result solve(const vector_type& b, const vector_type& x) {
    HETERO_EXPECTS(b.extent(0) == m_a.local_rows() && x.extent(0) >= m_a.local_rows(),
                   "cg_solver::solve: b holds ", b.extent(0), " and x ", x.extent(0), " entries; this rank's ",
                   m_a.local_rows(), " rows needed");
    const double b_norm = std::sqrt(allreduce(dot(b, b)));
    cg_result result;
    if (b_norm == 0) {  // the solution is zero
      Kokkos::deep_copy(Kokkos::subview(x, range(0, m_a.local_rows())), 0.0);
      result.converged = true;
      return result;
    }
    const auto start = std::chrono::steady_clock::now();
    result.iterations =
        m_options.variant == cg_variant::pipelined ? pipelined(b, x, b_norm) : classic(b, x, b_norm);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds = m_a.comm().allreduce(send_buf(seconds), op(ops::max{}));
    result.seconds = seconds;
    result.seconds_per_iteration = result.iterations > 0 ? seconds / result.iterations : 0;
    // The true residual of the returned x.
    copy(m_p, x);
    multiply(m_p, m_q);
    axpby(m_r, 1.0, b, -1.0, m_q);
    result.residual = std::sqrt(allreduce(dot(m_r, m_r))) / b_norm;
    // Stopped by the tolerance (not by max_iterations), or met it anyway.
    result.converged = (!m_options.fixed_iterations && result.iterations < m_options.max_iterations) ||
                       result.residual <= m_options.tolerance;
    return result;
  }

  [[nodiscard]] const cg_options& options() const noexcept { return m_options; }

 private:
  using pair = std::pair<std::size_t, std::size_t>;
  static pair range(std::size_t a, std::size_t b) { return {a, b}; }

  // Seed 003 Fig. 13 and the halo variant: one exchange and two allreduces per iteration. (Fig.
  // 13 recomputes r'r at the top of each iteration, a third allreduce; it equals the previous
  // iteration's, so it is kept instead. Its line 16 divides before summing; the sum comes first.)
  int classic(const vector_type& b, const vector_type& x, double b_norm) {
    copy(m_p, x);
    multiply(m_p, m_q);
    axpby(m_r, 1.0, b, -1.0, m_q);  // r = b - A x
    copy(m_p, m_r);
    double rho = allreduce(dot(m_r, m_r));
    int k = 0;
    for (; k < m_options.max_iterations; ++k) {
      if (!m_options.fixed_iterations && std::sqrt(rho) <= m_options.tolerance * b_norm) break;
      multiply(m_p, m_q);
      const double pq = allreduce(dot(m_p, m_q));
      if (!(pq > 0)) not_positive_definite(pq, k);
      const double alpha = rho / pq;
      update_x_r(x, alpha);
      const double rho_next = allreduce(dot(m_r, m_r));
      xpby(m_p, m_r, rho_next / rho);  // p = r + beta p
      rho = rho_next;
      mark_phase();
    }
    return k;
  }

  // Pipelined CG without preconditioner (Ghysels & Vanroose 2014, Alg. 4 with M = I): the dot
  // products (r, r) and (w, r) travel in one non-blocking allreduce while n = A w is computed.
  // Its recurrences for r, w, s, z drift from the true ones in rounding (Cools et al. 2018), so
  // on an ill-conditioned matrix p'Ap can come out <= 0 after many iterations, and the recurrence
  // residual can fall below the tolerance while the true one has not. Either way the solve
  // restarts from the current x with freshly computed r = b - A x and w = A r ("residual
  // replacement"). A p'Ap <= 0 right after a restart, or too many restarts, means the matrix is
  // not SPD.
  int pipelined(const vector_type& b, const vector_type& x, double b_norm) {
    restart(b, x);
    double gamma_old = 0, alpha_old = 0;
    int k = 0, since_restart = 0, breakdowns = 0;
    while (k < m_options.max_iterations) {
      std::array<double, 2> dots{dot(m_r, m_r), dot(m_w, m_r)};
      auto request = m_a.comm().iallreduce(send_recv_buf(dots), op(ops::sum{}));
      multiply(m_w, m_q);  // q = n = A w, overlapping the allreduce
      request.wait();
      const double gamma = dots[0], delta = dots[1];
      const bool fresh = since_restart == 0;
      const bool small = !m_options.fixed_iterations && std::sqrt(gamma) <= m_options.tolerance * b_norm;
      const double beta = fresh ? 0.0 : gamma / gamma_old;
      const double pap = fresh ? delta : delta - beta * gamma / alpha_old;  // p'Ap
      if (small && fresh) break;                                            // r is the true residual here
      if (!small && !(pap > 0) && (since_restart < 3 || ++breakdowns > max_breakdowns))
        not_positive_definite(pap, k);
      if (small || !(pap > 0)) {
        restart(b, x);
        since_restart = 0;
        continue;
      }
      const double alpha = gamma / pap;
      pipelined_update(x, alpha, beta);
      gamma_old = gamma;
      alpha_old = alpha;
      ++since_restart;
      ++k;
      mark_phase();
    }
    return k;
  }

  // Restarts of the pipelined variant after p'Ap <= 0 that are still put down to rounding.
  static constexpr int max_breakdowns = 8;

  // r = b - A x, w = A r, and empty directions p, s, z: the pipelined variant's (re)start.
  void restart(const vector_type& b, const vector_type& x) {
    const std::size_t n = m_a.local_rows();
    copy(m_p, x);
    multiply(m_p, m_q);
    axpby(m_r, 1.0, b, -1.0, m_q);
    copy(m_w, m_r);
    multiply(m_w, m_q);
    copy(m_w, m_q);
    Kokkos::deep_copy(m_z, 0.0);
    Kokkos::deep_copy(m_s, 0.0);
    Kokkos::deep_copy(Kokkos::subview(m_p, range(0, n)), 0.0);
  }

  [[noreturn]] static void not_positive_definite(double pap, int k) {
    detail::raise<invalid_argument>("cg: p'Ap = ", pap, " <= 0 at iteration ", k,
                                    ": the matrix is not symmetric positive definite");
  }

  // y = A x with x's halo (or the gathered x) brought in by the variant's communication.
  void multiply(const vector_type& x, const vector_type& y) {
    if (m_options.variant == cg_variant::allgather) {
      const auto block = Kokkos::subview(x, range(0, m_a.local_rows()));
      m_a.comm().allgatherv(send_buf(block), recv_buf(m_global), recv_counts(m_a.row_counts()));
      m_a.multiply_global(m_global, y);
    } else {
      m_a.multiply_halo(x, y);
    }
  }

  double allreduce(double local) { return m_a.comm().allreduce(send_buf(local), op(ops::sum{})); }

  double dot(const vector_type& u, const vector_type& v) const { return detail::dot(policy(), u, v); }
  void copy(const vector_type& to, const vector_type& from) const { detail::copy(policy(), to, from); }
  // y = a u + c v
  void axpby(const vector_type& y, double a, const vector_type& u, double c, const vector_type& v) const {
    detail::axpby(policy(), y, a, u, c, v);
  }
  // p = r + beta p
  void xpby(const vector_type& p, const vector_type& r, double beta) const { detail::xpby(policy(), p, r, beta); }
  // x += alpha p; r -= alpha q
  void update_x_r(const vector_type& x, double alpha) const {
    detail::cg_update(policy(), x, m_r, alpha, m_p, m_q);
  }
  void pipelined_update(const vector_type& x, double alpha, double beta) const {
    detail::pipelined_update(policy(), detail::pipelined_vectors<vector_type>{x, m_r, m_w, m_p, m_s, m_z, m_q},
                             alpha, beta);
  }

  // 64-bit indices: a device space's default index type is 32 bits wide.
  Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>> policy() const {
    return {0, static_cast<std::int64_t>(m_a.local_rows())};
  }

  const matrix_type& m_a;
  cg_options m_options;
  vector_type m_r, m_q, m_p, m_global, m_w, m_z, m_s;
};

}  // namespace hetero

#endif  // HETERO_LINALG_CG_HPP

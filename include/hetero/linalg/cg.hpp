/// @file
/// `hetero::cg_solver`: preconditioned conjugate gradients on a `distributed_csr`
/// (`cg_options::preconditioner`: none, Jacobi, Chebyshev or block IC(0), by default the one a
/// race on the matrix finds fastest, or near it with fewer iterations; preconditioner.hpp), in three variants that
/// differ in their communication per iteration (cg_options.hpp has the options and results):
///  - `allgather`: an allgather of the direction vector before the product (the simplest scheme),
///    and two allreduces of dot products;
///  - `halo`: only the entries of other ranks the rows read are exchanged, two allreduces;
///  - `pipelined` (predict-and-recompute, Chen & Carson): one non-blocking allreduce of four dot
///    products per iteration (five with a preconditioner), overlapped with two products (and
///    their halo exchanges); it follows the classic variants' iterations and accuracy on hard
///    matrices, with a preconditioner too.
/// Every variant stops with a `cg_status`: converged, out of iterations, diverged or stagnated.
/// Products, dot products and vector updates are Kokkos kernels in the matrix's memory space;
/// a dot product gives the same bits on every host space and thread count (`detail::dot`).
#ifndef HETERO_LINALG_CG_HPP
#define HETERO_LINALG_CG_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/config.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/linalg/cg_options.hpp"
#include "hetero/linalg/detail/vector_kernels.hpp"
#include "hetero/linalg/distributed_csr.hpp"
#include "hetero/linalg/preconditioner.hpp"

namespace hetero {

namespace detail {
// The space of cg_kernels::serial where Kokkos has it (else never used: serial_possible is false).
#if HETERO_HAS_SERIAL()
using cg_serial_space = Kokkos::Serial;
#else
using cg_serial_space = Kokkos::DefaultHostExecutionSpace;
#endif

/// The stagnation window where `cg_options::stagnation_iterations` is 0: 10 x the matrix's rows,
/// at least 1000, at most what an iteration count holds (a larger window could never end a solve).
constexpr int default_stagnation_window(std::int64_t rows) noexcept {
  return static_cast<int>(std::clamp<std::int64_t>(10 * rows, 1000, std::numeric_limits<int>::max()));
}
}  // namespace detail

/// Solves A x = b for a symmetric positive definite `distributed_csr` A. Work vectors are
/// allocated once; `solve` may be called many times.
/// <!-- snippet: fragment
/// hetero::communicator comm;
/// -->
/// @code
/// hetero::distributed_csr<> a(hetero::poisson_3d(64), comm);
/// hetero::cg_solver<> cg(a, {.variant = hetero::cg_variant::pipelined,
///                           .preconditioner = hetero::cg_preconditioner::block_ic0});
/// auto b = a.make_vector(), x = a.make_vector();   // fill b; x is the initial guess
/// hetero::cg_result r = cg.solve(b, x);
/// @endcode
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class cg_solver {
 public:
  using matrix_type = distributed_csr<ExecutionSpace>;    ///< The matrix A the solver works on.
  using vector_type = typename matrix_type::vector_type;  ///< The type of `solve`'s b and x (this rank's rows).

  /// A temporary matrix cannot bind: the solver keeps a reference to `a` (see the constructor below).
  template <class M>
  requires std::same_as<M, matrix_type> cg_solver(M&&, const cg_options& = {}) {
    static_assert(!std::same_as<M, matrix_type>,
                  "hetero: cg_solver keeps a reference to its matrix, which a temporary would leave dangling: "
                  "make the distributed_csr a named variable that outlives the solver");
  }

  /// A solver for `a`, which it keeps by reference: `a` must outlive the solver.
  cg_solver(const matrix_type& a, const cg_options& options = {}) : m_a(a), m_options(options) {
    // (`automatic` is resolved below, after the vectors its measurement uses exist.)
    HETERO_EXPECTS(options.tolerance >= 0 && options.max_iterations >= 0, "cg_options: tolerance ",
                   options.tolerance, " and max_iterations ", options.max_iterations, " must not be negative");
    HETERO_EXPECTS(options.replacement_interval >= 0 && options.stagnation_iterations >= 0,
                   "cg_options: replacement_interval ", options.replacement_interval,
                   " and stagnation_iterations ", options.stagnation_iterations, " must not be negative");
    HETERO_EXPECTS(options.divergence > 1, "cg_options: divergence is ", options.divergence,
                   "; allowed: a factor > 1");
    HETERO_EXPECTS(options.polynomial_degree >= 1 && options.polynomial_degree <= 64,
                   "cg_options: polynomial_degree is ", options.polynomial_degree, "; allowed: 1 to 64");
    m_r = a.make_halo_vector("hetero::cg r");  // halo room: the pipelined variant multiplies r
    m_q = a.make_vector("hetero::cg q");
    m_p = a.make_halo_vector("hetero::cg p");  // halo room for the halo variant; a block otherwise
    m_best = a.make_vector("hetero::cg best x");
    m_partials = partials_type("hetero::cg dot partials", detail::dot_chunks(a.local_rows()));
    m_host_partials = Kokkos::create_mirror_view(m_partials);
    HETERO_EXPECTS(options.kernels != cg_kernels::serial || serial_possible, "cg_options: kernels = serial needs ",
                   "a matrix in host memory and Kokkos::Serial enabled; this matrix's execution space is ",
                   ExecutionSpace::name(), " (allowed here: automatic or space)");
    m_kernels_measured = options.kernels == cg_kernels::automatic && serial_possible;
    const bool serial = options.kernels == cg_kernels::serial || (m_kernels_measured && serial_is_faster());
    m_options.kernels = serial ? cg_kernels::serial : cg_kernels::space;
    if (options.variant == cg_variant::automatic) m_options.variant = choose_variant();
    if (m_options.variant == cg_variant::allgather && m_global.extent(0) == 0)
      m_global = vector_type("hetero::cg gathered p", static_cast<std::size_t>(a.global_rows()));
    if (m_options.variant != cg_variant::allgather) m_global = vector_type();  // only `automatic`'s trial used it
    m_w2 = a.make_halo_vector("hetero::cg scratch");
    if (m_options.variant == cg_variant::pipelined) {
      m_w = a.make_vector("hetero::cg w");
      m_u = a.make_vector("hetero::cg u");
      m_s = a.make_halo_vector("hetero::cg s");
    }
    if (options.preconditioner == cg_preconditioner::automatic) {
      choose_preconditioner();
    } else {
      use(preconditioner_data(a, options.preconditioner));
    }
    // (`automatic` decides the kernels with IC(0)'s solves within its trial of block_ic0.)
    if (options.preconditioner == cg_preconditioner::block_ic0) decide_kernels_with_solves();
    if (options.variant == cg_variant::automatic && m_options.variant != cg_variant::pipelined &&
        std::max(m_gathered_product_seconds, m_product_seconds) <=
            close_products * std::min(m_gathered_product_seconds, m_product_seconds))
      m_options.variant = faster_classic_variant();
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
      result.status = cg_status::converged;
      return result;
    }
    const auto start = std::chrono::steady_clock::now();
    m_monitor = monitor(m_options, m_a.global_rows());
    m_best_rr = std::numeric_limits<double>::infinity();
    result.iterations =
        m_options.variant == cg_variant::pipelined ? pipelined(b, x, b_norm, result) : classic(b, x, b_norm);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds = m_a.comm().allreduce(send_buf(seconds), op(ops::max{}));
    result.seconds = seconds;
    result.seconds_per_iteration = result.iterations > 0 ? seconds / result.iterations : 0;
    // The true residual of the returned x.
    residual(b, x);
    result.residual = std::sqrt(allreduce(dot(m_r, m_r))) / b_norm;
    if (!(result.residual <= m_options.tolerance) && m_best_rr < std::numeric_limits<double>::infinity()) {
      // Not converged: the remembered iterate, when its true residual is smaller (a CG past
      // its attainable accuracy can wander far from it before a stop rule notices).
      residual(b, m_best);
      const double best = std::sqrt(allreduce(dot(m_r, m_r))) / b_norm;
      if (!std::isnan(best) && !(best >= result.residual)) {  // a NaN residual too
        copy(x, m_best);
        result.residual = best;
      }
    }
    // The true residual decides convergence; otherwise why the iteration stopped.
    result.converged = result.residual <= m_options.tolerance;
    result.status = result.converged ? cg_status::converged
                    : m_monitor.stop ? *m_monitor.stop
                                     : cg_status::max_iterations;
    return result;
  }

  /// The options in use; `variant` is the one chosen when `automatic` was asked for.
  [[nodiscard]] const cg_options& options() const noexcept { return m_options; }
  /// The variant the solver runs (the choice of `automatic`).
  [[nodiscard]] cg_variant variant() const noexcept { return m_options.variant; }
  /// The preconditioner it applies (the choice of `cg_preconditioner::automatic`).
  [[nodiscard]] cg_preconditioner preconditioner() const noexcept { return m_options.preconditioner; }
  /// What `cg_preconditioner::automatic` measured of each candidate, in the order first tried
  /// (block_ic0, jacobi, chebyshev, none): its last trial where the race ran more than one
  /// pass; empty when a preconditioner was named.
  [[nodiscard]] const std::vector<cg_trial>& trials() const noexcept { return m_trials; }
  /// block_ic0: the largest diagonal shift a rank's block needed to factor (0: none; see
  /// preconditioner.hpp); 0 for the others.
  [[nodiscard]] double preconditioner_shift() const noexcept { return m_precondition.shift(); }
  /// chebyshev: the interval [a, b] of D^-1 A's spectrum its polynomial covers (0, 0 for the others).
  [[nodiscard]] std::pair<double, double> preconditioner_interval() const noexcept {
    return m_precondition.interval();
  }
  /// Where its kernels run (the choice of `cg_kernels::automatic`: `space` or `serial`).
  [[nodiscard]] cg_kernels kernels() const noexcept { return m_options.kernels; }
  /// What `automatic` measured (zero when a variant was named): seconds of one allreduce of two
  /// numbers and of one product with its halo exchange, the slowest rank's medians.
  [[nodiscard]] std::pair<double, double> measured_allreduce_and_product() const noexcept {
    return {m_allreduce_seconds, m_product_seconds};
  }
  /// `cg_variant::automatic` times whole iterations of the halo and the allgather variants where
  /// their products alone (`measured_allreduce_and_product`, `measured_gathered_product`) are
  /// within this factor of each other; apart by more, the faster product decides.
  static constexpr double close_products = 1.25;
  /// What `automatic` measured of whole iterations of the halo and the allgather variants, with
  /// the preconditioner in place (`faster_classic_variant`): seconds per iteration, the slowest
  /// rank's medians (each solve's start counted in, alike for both); zero where it did not
  /// compare them (a variant named, `pipelined` chosen, one rank, more than 2^22 rows, products
  /// apart by more than `close_products`, or a matrix that the timing solves found not positive
  /// definite).
  [[nodiscard]] std::pair<double, double> measured_halo_and_allgather_iterations() const noexcept {
    return {m_halo_iteration_seconds, m_allgather_iteration_seconds};
  }
  /// What `automatic` measured of the allgather variant's product (the gather and the product
  /// against the whole vector, the slowest rank's median); infinity where it was not tried (one
  /// rank, or more than 2^22 rows), zero when a variant was named.
  [[nodiscard]] double measured_gathered_product() const noexcept { return m_gathered_product_seconds; }

 private:
  using pair = std::pair<std::size_t, std::size_t>;
  static pair range(std::size_t a, std::size_t b) { return {a, b}; }

  using serial_space = detail::cg_serial_space;
  // A matrix in host memory can have its kernels run by Kokkos::Serial on this thread.
  static constexpr bool host_memory =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename matrix_type::memory_space>::accessible;
  static constexpr bool serial_possible = HETERO_HAS_SERIAL() && host_memory;
  // A matrix in memory the host cannot address (a GPU's): Kokkos' reductions, fused with the
  // updates where the recurrence allows, run its iterations (vector_kernels.hpp).
  static constexpr bool device_kernels = !host_memory;

  // The measurements when the solver is made (detail/cg_measurements.hpp, with their reasons):
  // `cg_kernels::automatic`: whether Kokkos::Serial runs a classic iteration's kernels faster.
  bool serial_is_faster();

  // With block_ic0 in place, `cg_kernels::automatic` decides again with IC(0)'s solves timed.
  void decide_kernels_with_solves();

  // `cg_variant::automatic` from an allreduce's and the products' times.
  cg_variant choose_variant();

  // Halo or allgather, from whole solves of each where their products are close.
  cg_variant faster_classic_variant();

  // A solve of `automatic`'s measurements: from x = 0, with no phase marks.
  cg_result trial_solve(const vector_type& b, const vector_type& x);

  static constexpr double variant_seconds = 100e-6;
  static constexpr int variant_iterations = 16;
  static constexpr std::size_t variant_runs = 5;

  // `automatic` considers the allgather variant up to this many rows (a 32 MiB vector per rank).
  static constexpr std::int64_t max_rows_to_gather = std::int64_t{1} << 22;

  // The classic (preconditioned) CG, used by the allgather and halo variants: one exchange and
  // two allreduces per iteration. (r'z and r'r are not recomputed at the top of each iteration,
  // which would be a third allreduce: they equal the previous iteration's, so those are kept.)
  int classic(const vector_type& b, const vector_type& x, double b_norm) {
    residual(b, x);
    precondition(m_r, m_z);
    copy(m_p, m_z);
    auto [rho, rr] = residual_dots();  // r'z and r'r
    int k = 0;
    bool replaced = true;  // r was just computed from its definition
    for (; k < m_options.max_iterations; ++k) {
      if (!m_options.fixed_iterations && std::sqrt(rr) <= m_options.tolerance * b_norm) {
        if (replaced) break;
        // The recurrence residual met the tolerance: check with the true one, and go on from it
        // when it has not (rounding separates the two on ill-conditioned matrices).
        residual(b, x);
        precondition(m_r, m_z);
        const auto [true_rho, true_rr] = residual_dots();
        replaced = true;
        if (std::sqrt(true_rr) <= m_options.tolerance * b_norm) break;
        // p stays: it already is this step's direction (z + beta p, made at the end of the last
        // iteration), as in the pipelined variant's replacement.
        rho = true_rho;
        rr = true_rr;
      }
      replaced = false;
      remember(x, rr);
      if (!m_options.fixed_iterations && m_monitor.ends(std::sqrt(rr), k)) break;
      multiply(m_p, m_q);
      const double pq = allreduce(dot(m_p, m_q));
      if (overflowed(pq)) break;
      if (!(pq > 0) && at_rounding_level(std::sqrt(rr), b_norm)) break;  // nothing left to reduce
      if (!(pq > 0)) not_positive_definite(pq, k);
      const double alpha = rho / pq;
      const auto [rho_next, rr_next] = update_and_residual_dots(x, alpha);
      xpby(m_p, m_z, rho_next / rho);  // p = z + beta p
      rho = rho_next;
      rr = rr_next;
      if (!m_trial) mark_phase();
    }
    return k;
  }

  // x += alpha p, r -= alpha q, z = M r; then r'z and r'r summed over the ranks. On a GPU without
  // a preconditioner or with Jacobi's, one fused pass (detail::cg_update_dot,
  // cg_update_jacobi_dots) instead of an update, a scaling and one or two reductions.
  std::pair<double, double> update_and_residual_dots(const vector_type& x, double alpha) {
    const auto kind = m_precondition.kind();
    if constexpr (device_kernels) {
      if (kind == cg_preconditioner::none) {
        const double rr = allreduce(kernel_policy(
            [&](const auto& policy) { return detail::cg_update_dot(policy, x, m_r, alpha, m_p, m_q); }));
        return {rr, rr};
      }
      if (kind == cg_preconditioner::jacobi) {
        const auto d = m_precondition.inverse_diagonal();
        auto dots = kernel_policy([&](const auto& policy) {
          return detail::cg_update_jacobi_dots(policy, x, m_r, m_z, d, alpha, m_p, m_q);
        });
        m_a.comm().allreduce(send_recv_buf(std::span<double>(dots.v, 2)), op(ops::sum{}));
        return {dots.v[0], dots.v[1]};
      }
    }
    update_x_r(x, alpha);
    precondition(m_r, m_z);
    return residual_dots();
  }

  // r'z and r'r summed over the ranks, in one allreduce (one dot product without a
  // preconditioner, where z is r).
  std::pair<double, double> residual_dots() {
    if (!preconditioned()) {
      const double rr = allreduce(dot(m_r, m_r));
      return {rr, rr};
    }
    std::array<double, 2> dots{dot(m_r, m_z), dot(m_r, m_r)};
    m_a.comm().allreduce(send_recv_buf(dots), op(ops::sum{}));
    return {dots[0], dots[1]};
  }

  // Pipelined predict-and-recompute CG without preconditioner (Chen & Carson 2020, pipe-PR-CG):
  // the four dot products of an iteration (r'r, p's, r's, s's with s = A p) travel in one
  // non-blocking allreduce while the two products u = A s and w = A r are computed. r'r is the
  // one the step uses (recomputed, not carried by a recurrence), and the next step's r'r is
  // predicted from the others, r'r - 2 alpha r's + alpha^2 s's, only to form beta; w is
  // predicted as w - alpha u for the new s and recomputed as A r. Ghysels and Vanroose's
  // pipelined CG, which this replaced, carries r, w, s and z = A s by recurrences alone; on the
  // ill-conditioned SuiteSparse matrices of data/ it needed 1.04-1.43x the classic iterations
  // even with residual replacement (PETSc's PIPECG and PIPECGRR: 1.06-1.9x, or no convergence).
  // Recomputing keeps this variant within a few percent of the classic one (docs/results/linalg.md), for
  // one more product per iteration, overlapped with the allreduce as the first.
  // Residual replacement (Cools & Vanroose) still puts the true vectors back, r = b - A x and
  // s = A p, every `replacement_interval` iterations and whenever the recurrence residual meets
  // the tolerance (the solve ends only when a freshly computed residual meets it). A p'Ap <= 0
  // (rounding, or a matrix that is not SPD) restarts from x with p = z; right after a restart,
  // or after too many, it means the matrix is not SPD.
  // With a preconditioner M (z = M r, q = M s) the same scheme carries r, z, p, s and q: the
  // allreduce takes r'z, p's, r'q, s'q and r'r (r'r for the stopping test only), overlapped
  // with u = A q and w = A z (w recomputed); the step predicts r'z as r'z - 2 alpha r'q +
  // alpha^2 s'q (M symmetric: s'z = q'r), and after x, r, z and w move one application
  // m = M w gives the new q = m + beta q besides p = z + beta p and s = w + beta s.
  int pipelined(const vector_type& b, const vector_type& x, double b_norm, cg_result& result) {
    restart(b, x);
    double rayleigh_max = 0;
    int k = 0, since_restart = 0, since_replacement = 0;
    bool replaced = true;  // r was just computed from its definition
    auto replace_now = [&] {
      replace(b, x);
      ++result.replacements;
      replaced = true;
      since_replacement = 0;
    };
    const bool pc = preconditioned();
    while (k < m_options.max_iterations) {
      // Without a preconditioner z is r and q is s: r'r, p's, r's, s's (the fifth left out).
      std::array<double, 5> dots = pipelined_dots();
      auto request =
          m_a.comm().iallreduce(send_recv_buf(std::span<double>(dots.data(), pc ? 5 : 4)), op(ops::sum{}));
      multiply(m_ms, m_u);  // u = A q and w = A z, overlapping the allreduce
      multiply(m_z, m_w);
      request.wait();
      const double rho = dots[0], pap = dots[1], rs = dots[2], ss = dots[3];
      const double rr = pc ? dots[4] : rho;
      if (pap > 0) rayleigh_max = std::max(rayleigh_max, ss / pap);  // <= the largest eigenvalue of M A
      const bool fresh = since_restart == 0;
      remember(x, rr);
      const bool small = !m_options.fixed_iterations && std::sqrt(rr) <= m_options.tolerance * b_norm;
      if (small && replaced) break;  // a true residual met the tolerance
      if (small) {                   // the recurrence says so: check with the true residual
        replace_now();
        continue;
      }
      if (!m_options.fixed_iterations && m_monitor.ends(std::sqrt(rr), k)) {
        if (replaced) break;
        replace_now();  // judge divergence and stagnation on a true residual
        m_monitor.stop.reset();
        continue;
      }
      if (overflowed(pap)) break;
      if (!(pap > 0)) {
        // Rounding, when p'Ap is tiny beside the largest Rayleigh quotient seen times r'r, or
        // the residual is: nothing left to reduce. Else the matrix is not SPD.
        const bool rounding =
            std::abs(pap) <= 1e-10 * rayleigh_max * rho || at_rounding_level(std::sqrt(rr), b_norm);
        if (rounding && (m_options.fixed_iterations || ++result.restarts > max_restarts)) {
          if (!m_options.fixed_iterations) m_monitor.stop = cg_status::stagnated;
          break;
        }
        if (!rounding && (fresh || ++result.restarts > max_restarts)) {
          if (m_options.fixed_iterations && !fresh) break;  // timing past the attainable accuracy
          not_positive_definite(pap, k);
        }
        restart(b, x);
        since_restart = 0;
        replaced = true;
        continue;
      }
      const double alpha = rho / pap;
      const double rho_next = rho - 2 * alpha * rs + alpha * alpha * ss;  // predicted, for beta only
      if (pc) {
        preconditioned_update(x, alpha, rho_next / rho);
      } else {
        pipelined_update(x, alpha, rho_next / rho);
      }
      ++since_restart;
      ++k;
      replaced = false;
      if (m_options.replacement_interval > 0 && ++since_replacement >= m_options.replacement_interval)
        replace_now();
      if (!m_trial) mark_phase();
    }
    return k;
  }

  // A residual this small is rounding: p'Ap <= 0 there says nothing about the matrix.
  static bool at_rounding_level(double residual, double b_norm) { return residual <= 1e-13 * b_norm; }

  // Restarts of the pipelined variant after p'Ap <= 0 that are still put down to rounding.
  static constexpr int max_restarts = 8;

  // r = b - A x, z = M r, p = z, s = A z and q = M s: the pipelined variant's (re)start.
  void restart(const vector_type& b, const vector_type& x) {
    residual(b, x);
    precondition(m_r, m_z);
    copy(m_p, m_z);
    multiply(m_z, m_s);
    precondition(m_s, m_ms);
  }

  // Residual replacement: r = b - A x, z = M r, s = A p and q = M s (w and u are recomputed at
  // the next step).
  void replace(const vector_type& b, const vector_type& x) {
    residual(b, x);
    precondition(m_r, m_z);
    multiply(m_p, m_s);
    precondition(m_s, m_ms);
  }

  // Keeps a copy of x whenever its (recurrence) residual r'r is 10 % below the last one kept: a
  // solve that does not converge returns the best of the two (as MATLAB's pcg returns the
  // iterate of smallest residual). Not while timing fixed iterations.
  void remember(const vector_type& x, double rr) {
    if (m_options.fixed_iterations || !(rr < 0.81 * m_best_rr)) return;
    copy(m_best, x);
    m_best_rr = rr;
  }

  // z = p(D^-1 A) D^-1 r: `polynomial_degree` steps of the Chebyshev iteration for A z = r from
  // z = 0 with Jacobi scaling (Saad, Iterative Methods, Algorithm 12.1), on the interval of
  // preconditioner_interval(); each step after the first is one halo product.
  void chebyshev(const vector_type& r, const vector_type& z) {
    const auto [lower, upper] = m_precondition.interval();
    const double theta = (upper + lower) / 2, delta = (upper - lower) / 2, sigma = theta / delta;
    const auto d = m_precondition.inverse_diagonal();
    kernel_policy([&](const auto& policy) {
      return (detail::chebyshev_first(policy, m_chebyshev_z, m_chebyshev_d, d, r, 1 / theta), 0);
    });
    double rho = 1 / sigma;
    for (int k = 1; k < m_options.polynomial_degree; ++k) {
      multiply_halo_here(m_chebyshev_z, m_chebyshev_q);
      const double next = 1 / (2 * sigma - rho);
      kernel_policy([&](const auto& policy) {
        return (detail::chebyshev_step(policy, m_chebyshev_z, m_chebyshev_d, d, r, m_chebyshev_q, next * rho,
                                       2 * next / delta),
                0);
      });
      rho = next;
    }
    copy(z, m_chebyshev_z);
  }

  using preconditioner_data = detail::cg_preconditioner_data<typename vector_type::memory_space>;

  // Iterations each candidate of `cg_preconditioner::automatic` runs at most, and those that
  // time one iteration of it first.
  static constexpr int trial_iterations = 1000;
  static constexpr int calibration_iterations = 5;
  // Where no candidate converged, the race runs again with this many times the first's time, up
  // to `race_passes` passes in all.
  static constexpr double race_growth = 4;
  static constexpr int race_passes = 3;

  // Applies `data` from now on, with the vectors it needs (without a preconditioner z = M r is
  // r itself and q = M s is s: the same Views).
  void use(preconditioner_data data) {
    m_precondition = std::move(data);
    m_options.preconditioner = m_precondition.kind();
    const bool pc = preconditioned(), pipelined = m_options.variant == cg_variant::pipelined;
    const auto keep = [&](vector_type& v, bool needed, bool halo, const char* label) {
      if (!needed) v = vector_type();
      if (needed && v.extent(0) == 0) v = halo ? m_a.make_halo_vector(label) : m_a.make_vector(label);
    };
    keep(m_own_z, pc, true, "hetero::cg z");
    keep(m_own_ms, pc && pipelined, true, "hetero::cg q");
    keep(m_mw, pc && pipelined, false, "hetero::cg m");
    const bool polynomial = m_precondition.kind() == cg_preconditioner::chebyshev;
    keep(m_chebyshev_z, polynomial, true, "hetero::cg chebyshev z");
    keep(m_chebyshev_d, polynomial, false, "hetero::cg chebyshev d");
    keep(m_chebyshev_q, polynomial, false, "hetero::cg chebyshev q");
    m_z = pc ? m_own_z : m_r;
    m_ms = pc && pipelined ? m_own_ms : m_s;
  }

  // `cg_preconditioner::automatic`: the race (detail/cg_measurements.hpp; its rule:
  // preconditioner.hpp's `chosen_trial`).
  void choose_preconditioner();

  [[nodiscard]] bool preconditioned() const noexcept { return m_precondition.kind() != cg_preconditioner::none; }

  // z = M r on this rank's rows (nothing without a preconditioner: z is r).
  void precondition(const vector_type& r, const vector_type& z) {
    if (m_precondition.kind() == cg_preconditioner::jacobi) {
      const auto d = m_precondition.inverse_diagonal();
      kernel_policy([&](const auto& policy) { return (detail::scale(policy, z, d, r), 0); });
    } else if (m_precondition.kind() == cg_preconditioner::chebyshev) {
      chebyshev(r, z);
    } else if (m_precondition.kind() == cg_preconditioner::block_ic0) {
      kernel_policy([](const auto& policy) { return (policy.space().fence(), 0); });  // r's last kernel
      m_precondition.solve_block(r, z);
    }
  }

  // r = b - A x (the scratch vector's halo room carries x through the product).
  void residual(const vector_type& b, const vector_type& x) {
    copy(m_w2, x);
    multiply(m_w2, m_q);
    axpby(m_r, 1.0, b, -1.0, m_q);
  }

  // Divergence and stagnation, judged on the residual norms the iteration sees.
  struct monitor {
    monitor() = default;
    monitor(const cg_options& o, std::int64_t rows)
        : divergence(o.divergence),
          window(o.stagnation_iterations > 0 ? o.stagnation_iterations : detail::default_stagnation_window(rows)) {
    }
    /// True (and `stop` set) when the residual norm `r` at iteration `k` ends the solve.
    bool ends(double r, int k) {
      if (!std::isfinite(r) || r > divergence * best) {
        stop = cg_status::diverged;
        return true;
      }
      if (r < 0.99 * best) {
        best = r;
        improved_at = k;
      } else if (k - improved_at >= window) {
        stop = cg_status::stagnated;
        return true;
      }
      return false;
    }
    double divergence = 1e8, best = std::numeric_limits<double>::infinity();
    int window = 1000, improved_at = 0;
    std::optional<cg_status> stop;
  };

  // A p'Ap that is not finite (a product or a preconditioner overflowed: a tiny pivot, huge
  // entries) ends the solve as diverged, the same on every rank (it is summed over them); it
  // says nothing about the matrix being positive definite.
  bool overflowed(double pap) {
    if (std::isfinite(pap)) return false;
    m_monitor.stop = cg_status::diverged;
    return true;
  }

  [[noreturn]] static void not_positive_definite(double pap, int k) {
    detail::raise<invalid_argument>("cg: p'Ap = ", pap, " <= 0 at iteration ", k,
                                    ": the matrix is not symmetric positive definite");
  }

  // y = A x with x's halo brought in, on the kernels' space.
  void multiply_halo_here(const vector_type& x, const vector_type& y) const {
    kernel_policy([&](const auto& policy) {
      using space = typename std::decay_t<decltype(policy)>::execution_space;
      m_a.template multiply_halo<space>(x, y);
      return 0;
    });
  }

  // y = A x with x's halo (or the gathered x) brought in by the variant's communication.
  void multiply(const vector_type& x, const vector_type& y) {
    if (m_options.variant == cg_variant::allgather) {
      const auto block = Kokkos::subview(x, range(0, m_a.local_rows()));
      m_a.comm().allgatherv(send_buf(block), recv_buf(m_global), recv_counts(m_a.row_counts()));
    }
    if (m_options.variant != cg_variant::allgather) return multiply_halo_here(x, y);
    kernel_policy([&](const auto& policy) {
      using space = typename std::decay_t<decltype(policy)>::execution_space;
      m_a.template multiply_global<space>(m_global, y);
      return 0;
    });
  }

  double allreduce(double local) { return m_a.comm().allreduce(send_buf(local), op(ops::sum{})); }

  // u'v on this rank: Kokkos' reduction on a GPU, else `detail::dot`'s fixed-order chunks (the
  // same bits on every host space and thread count).
  double dot(const vector_type& u, const vector_type& v) const {
    return kernel_policy([&](const auto& policy) {
      if constexpr (device_kernels) {
        return detail::dot_reduce(policy, u, v);
      } else {
        return detail::dot(policy, u, v, m_partials, m_host_partials);
      }
    });
  }

  // The pipelined variant's r'z, p's, r'q, s'q and r'r (z is r and q is s without a
  // preconditioner, and r'r is then not needed): one pass on a GPU.
  std::array<double, 5> pipelined_dots() const {
    if constexpr (device_kernels) {
      const auto t = kernel_policy(
          [&](const auto& policy) { return detail::pipelined_dots(policy, m_r, m_z, m_p, m_s, m_ms); });
      return {t.v[0], t.v[1], t.v[2], t.v[3], preconditioned() ? t.v[4] : 0.0};
    } else {
      return {dot(m_r, m_z), dot(m_p, m_s), dot(m_r, m_ms), dot(m_s, m_ms),
              preconditioned() ? dot(m_r, m_r) : 0.0};
    }
  }
  void copy(const vector_type& to, const vector_type& from) const {
    kernel_policy([&](const auto& policy) { return (detail::copy(policy, to, from), 0); });
  }
  // y = a u + c v
  void axpby(const vector_type& y, double a, const vector_type& u, double c, const vector_type& v) const {
    kernel_policy([&](const auto& policy) { return (detail::axpby(policy, y, a, u, c, v), 0); });
  }
  // p = r + beta p
  void xpby(const vector_type& p, const vector_type& r, double beta) const {
    kernel_policy([&](const auto& policy) { return (detail::xpby(policy, p, r, beta), 0); });
  }
  // x += alpha p; r -= alpha q
  void update_x_r(const vector_type& x, double alpha) const {
    kernel_policy([&](const auto& policy) { return (detail::cg_update(policy, x, m_r, alpha, m_p, m_q), 0); });
  }
  void pipelined_update(const vector_type& x, double alpha, double beta) const {
    const detail::pipelined_vectors<vector_type> v{x, m_r, m_w, m_p, m_s, m_u};
    kernel_policy([&](const auto& policy) { return (detail::pipelined_update(policy, v, alpha, beta), 0); });
  }
  // x += alpha p, r -= alpha s, z -= alpha q, w -= alpha u; m = M w; p = z + beta p,
  // s = w + beta s, q = m + beta q.
  void preconditioned_update(const vector_type& x, double alpha, double beta) {
    const detail::preconditioned_vectors<vector_type> v{x, m_r, m_z, m_w, m_p, m_s, m_ms, m_u, m_mw};
    kernel_policy([&](const auto& policy) { return (detail::preconditioned_update(policy, v, alpha), 0); });
    precondition(m_w, m_mw);
    kernel_policy([&](const auto& policy) { return (detail::preconditioned_directions(policy, v, beta), 0); });
  }

  // Calls `kernel` with the range policy over this rank's rows on the space the kernels run on
  // (cg_kernels): the matrix's space, or Serial. 64-bit indices: a device space's default
  // index type is 32 bits wide.
  template <class Kernel>
  auto kernel_policy(Kernel&& kernel) const {
    const auto rows = static_cast<std::int64_t>(m_a.local_rows());
    if constexpr (serial_possible && !std::is_same_v<ExecutionSpace, serial_space>) {
      if (m_options.kernels == cg_kernels::serial)
        return kernel(Kokkos::RangePolicy<serial_space, Kokkos::IndexType<std::int64_t>>(0, rows));
    }
    return kernel(Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(0, rows));
  }

  const matrix_type& m_a;
  cg_options m_options;
  bool m_kernels_measured = false;  // cg_kernels::automatic with Serial possible
  vector_type m_r, m_q, m_p, m_global, m_w, m_u, m_s, m_w2;
  // Preconditioned: z = M r, q = M s (pipelined), m = M w (pipelined), held in m_own_z and
  // m_own_ms; without one z is m_r and q is m_s.
  vector_type m_z, m_ms, m_mw, m_own_z, m_own_ms;
  std::vector<cg_trial> m_trials;
  bool m_trial = false;                                     // a trial of `automatic` runs: no phase marks
  vector_type m_chebyshev_z, m_chebyshev_d, m_chebyshev_q;  // chebyshev's iterate, step and A z
  vector_type m_best;  // the iterate of smallest residual so far (remember), its r'r below
  double m_best_rr = std::numeric_limits<double>::infinity();
  preconditioner_data m_precondition;
  using partials_type = Kokkos::View<double*, typename vector_type::memory_space>;
  partials_type m_partials;  // a dot product's partial sums (detail::dot), and their host copy
  decltype(Kokkos::create_mirror_view(std::declval<partials_type>())) m_host_partials;
  monitor m_monitor;
  double m_allreduce_seconds = 0, m_product_seconds = 0, m_gathered_product_seconds = 0;
  double m_halo_iteration_seconds = 0, m_allgather_iteration_seconds = 0;
};

}  // namespace hetero

#include "hetero/linalg/detail/cg_measurements.hpp"  // cg_solver's measurements at construction

#endif  // HETERO_LINALG_CG_HPP

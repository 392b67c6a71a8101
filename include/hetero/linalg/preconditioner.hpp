/// @file
/// The preconditioners of `cg_solver` (`cg_options::preconditioner`):
///  - `jacobi`: the inverse of A's diagonal, an entry-by-entry product in the matrix's memory;
///  - `chebyshev`: a Chebyshev polynomial of `polynomial_degree` in D^-1 A (D the diagonal)
///    that approximates A^-1 on [b / 30, b], b = 1.1 times the largest eigenvalue of D^-1 A that
///    12 Lanczos steps estimate when the solver is made (Lanczos approaches it from below).
///    M stays positive definite for every eigenvalue with an odd degree (the default 3), and
///    up to a + b with an even one, so an even degree needs the estimate within about 13 %.
///    Only products with A (and their halo exchanges): it runs where the matrix is, a GPU too,
///    and adds no collective per iteration;
///  - `block_ic0`: block Jacobi over the ranks with an incomplete Cholesky IC(0) of each rank's
///    diagonal block (PETSc's default for CG on several ranks is the same shape with ILU(0)),
///    its triangular solves on the host (a matrix in device memory copies the vector there
///    and back for each application: a triangular solve runs row after row, and a level-
///    scheduled or SpSV version for the GPU is not built yet). A block that breaks down is
///    factored with its diagonal scaled by 1 + shift (`cg_solver::preconditioner_shift`).
/// `automatic` (the default) builds each of them when the solver is made and races them to the
/// tolerance on this matrix; of those tied with the fastest solve (the setups are paid in the
/// race, whichever wins: within `cg_race_margin`, up to `cg_race_widest_tie` for one that needs
/// several times fewer iterations) it keeps the one that needs the fewest iterations (`cg_trial`,
/// `chosen_trial`, `cg_race_tie`); while none has converged, each runs as long as the first did
/// (`trial_budget_seconds`), and when none converged, the race runs again with more time.
/// Each needs a positive diagonal: a diagonal entry <= 0 is an `invalid_argument` on every rank,
/// naming the first such row.
#ifndef HETERO_LINALG_PRECONDITIONER_HPP
#define HETERO_LINALG_PRECONDITIONER_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/error.hpp"
#include "hetero/linalg/detail/incomplete_cholesky.hpp"
#include "hetero/linalg/detail/spectrum.hpp"

namespace hetero {

/// How `cg_solver` preconditions (see the file comment).
enum class cg_preconditioner { none, jacobi, chebyshev, block_ic0, automatic };

/// "none", "jacobi", "chebyshev", "block_ic0" or "automatic".
constexpr std::string_view to_string(cg_preconditioner p) noexcept {
  return p == cg_preconditioner::none        ? "none"
         : p == cg_preconditioner::jacobi    ? "jacobi"
         : p == cg_preconditioner::chebyshev ? "chebyshev"
         : p == cg_preconditioner::block_ic0 ? "block_ic0"
                                             : "automatic";
}

/// What `cg_preconditioner::automatic` measured of one candidate (`cg_solver::trials`, the race
/// cg_solver's `choose_preconditioner` describes): on a right-hand side b = A y (y's entries
/// pseudo-random in [-1, 1] by global row), from x = 0.
struct cg_trial {
  cg_preconditioner preconditioner = cg_preconditioner::none;  ///< the candidate
  bool available = true;             ///< false: the matrix refused it (a diagonal entry <= 0, a breakdown)
  double setup_seconds = 0;          ///< building it (the slowest rank)
  int iterations = 0;                ///< iterations run (at most the trial's; fewer when it converged)
  double seconds_per_iteration = 0;  ///< wall time per iteration (the slowest rank)
  double residual = 1;               ///< ||b - A x|| / ||b|| after them
  double estimated_seconds = 0;      ///< `estimated_seconds`: setup and iterations to the tolerance
};

/// The time a candidate would take to reach `tolerance`: its setup plus its time per iteration
/// times the iterations a steady convergence rate needs (`iterations` brought the residual to
/// `residual`, from 1), or those it took when it converged. Infinity when it made no progress.
inline double estimated_seconds(const cg_trial& t, double tolerance) {
  if (!t.available) return std::numeric_limits<double>::infinity();
  if (t.residual <= tolerance) return t.setup_seconds + t.iterations * t.seconds_per_iteration;
  if (!(t.residual < 1) || t.iterations == 0) return std::numeric_limits<double>::infinity();
  const double needed = t.iterations * std::log(std::max(tolerance, 1e-300)) / std::log(t.residual);
  return t.setup_seconds + needed * t.seconds_per_iteration;
}

/// The iterations a candidate would take to reach `tolerance` at the rate of its trial (those it
/// took when it converged). Infinity when it made no progress.
inline double estimated_iterations(const cg_trial& t, double tolerance) {
  if (!t.available) return std::numeric_limits<double>::infinity();
  if (t.residual <= tolerance) return t.iterations;
  if (!(t.residual < 1) || t.iterations == 0) return std::numeric_limits<double>::infinity();
  return t.iterations * std::log(std::max(tolerance, 1e-300)) / std::log(t.residual);
}

/// The time a candidate's solves would take to reach `tolerance`, its setup left out:
/// `estimated_iterations` times its time per iteration. What the race compares: it builds every
/// candidate and keeps the one it chooses, so the setups are paid whichever wins, and only the
/// solves to come differ.
inline double estimated_solve_seconds(const cg_trial& t, double tolerance) {
  const double iterations = estimated_iterations(t, tolerance);
  return std::isinf(iterations) ? iterations : iterations * t.seconds_per_iteration;  // not inf * 0
}

/// How close to the fastest candidate of `cg_preconditioner::automatic`'s race another must be
/// estimated to count as tied with it, when it needs no fewer iterations: 10 %. The trials cannot
/// tell such candidates apart (on Poisson 32^3 none's and block_ic0's solves, 37 and 81
/// iterations, took the same time within 15 %, and the faster changed from one solver to the
/// next), and of tied ones the race keeps the one with the fewest iterations (the fewest
/// reductions, which cost most across nodes): block_ic0's 37 there rather than none's 81. One that
/// needs k times fewer iterations than the fastest is tied within k times this, 3 times at most
/// (`cg_race_tie`).
inline constexpr double cg_race_margin = 0.1;

/// The widest tie `cg_race_tie` gives: 3 times `cg_race_margin`, for 3 times fewer iterations or more.
inline constexpr double cg_race_widest_tie = 3 * cg_race_margin;

/// How much slower than the fastest candidate (estimated to need `fastest_iterations`) one that
/// needs `iterations` may be estimated and still count as tied with it: `cg_race_margin` times
/// `fastest_iterations / iterations`, between `cg_race_margin` and `cg_race_widest_tie`. A race
/// estimate is one trial's: on Poisson 16^3 (1 rank) block_ic0's came out at 0.76-1.06 ms over
/// 15 solvers, and none's at 0.94-1.36 ms for 3 times block_ic0's iterations, so a flat 10 % let a
/// slow spell in block_ic0's trial hand the choice to none (41 iterations against PETSc's 20 on
/// the benchmark's right-hand side). The fewer the iterations, the more time a candidate may cost
/// here for them: each saved one is a reduction saved, which costs most across nodes.
inline double cg_race_tie(double fastest_iterations, double iterations) {
  if (!(iterations > 0)) return cg_race_widest_tie;  // k without bound
  const double k = fastest_iterations / iterations;
  return k >= 1 ? std::min(cg_race_margin * k, cg_race_widest_tie) : cg_race_margin;  // NaN: not fewer
}

namespace detail {

/// Whether `t` converged in its trial.
inline bool converged_trial(const cg_trial& t, double tolerance) { return t.available && t.residual <= tolerance; }

/// Whether any of `trials` converged in its trial.
inline bool any_converged_trial(std::span<const cg_trial> trials, double tolerance) {
  for (const cg_trial& t : trials)
    if (converged_trial(t, tolerance)) return true;
  return false;
}

/// Whether `chosen_trial` weighs `t`: a finite estimate and, when any trial converged, converged.
inline bool weighed_trial(const cg_trial& t, double tolerance, bool any_converged) {
  return std::isfinite(estimated_solve_seconds(t, tolerance)) && (!any_converged || converged_trial(t, tolerance));
}

/// The index of the least `estimated_solve_seconds` of `trials` that `chosen_trial` weighs (the
/// first on a tie); `trials.size()` when it weighs none.
inline std::size_t fastest_trial(std::span<const cg_trial> trials, double tolerance) {
  const bool any_converged = any_converged_trial(trials, tolerance);
  std::size_t fastest = trials.size();
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (weighed_trial(trials[i], tolerance, any_converged) &&
        (fastest == trials.size() ||
         estimated_solve_seconds(trials[i], tolerance) < estimated_solve_seconds(trials[fastest], tolerance)))
      fastest = i;
  return fastest;
}

}  // namespace detail

/// The least `estimated_solve_seconds` of `trials`: of those that converged in their trial (of
/// all, when none did). Infinity when none has a finite estimate.
inline double least_solve_seconds(std::span<const cg_trial> trials, double tolerance) {
  const std::size_t fastest = detail::fastest_trial(trials, tolerance);
  return fastest == trials.size() ? std::numeric_limits<double>::infinity()
                                  : estimated_solve_seconds(trials[fastest], tolerance);
}

/// The time the next candidate of `cg_preconditioner::automatic`'s race may run, given the
/// trials run before it, in the order run: infinity for the first (it runs its iteration cap,
/// and so does each next one while none made progress); while none has converged, the time the
/// first that made progress took (so that candidates that do not converge are compared at equal
/// time, where their estimates order as their residuals do: CG's early rate flatters the
/// extrapolation of a candidate given more iterations); once one has, `least_solve_seconds`
/// (one slower than that by more than a tie cannot win). The race adds `cg_race_margin` to the
/// first, `cg_race_widest_tie` to the second.
inline double trial_budget_seconds(std::span<const cg_trial> so_far, double tolerance) {
  if (detail::any_converged_trial(so_far, tolerance)) return least_solve_seconds(so_far, tolerance);
  for (const cg_trial& t : so_far)
    if (std::isfinite(estimated_iterations(t, tolerance))) return t.iterations * t.seconds_per_iteration;
  return std::numeric_limits<double>::infinity();
}

/// The index in `trials` of the candidate `automatic` keeps: of those that converged in their
/// trial (of all, when none did), the fastest (least `estimated_solve_seconds`, the first on a
/// tie), unless others are tied with it (`cg_race_tie`: within 10-30 % of it, as they need fewer
/// `estimated_iterations` to `tolerance`); then the one of these with the fewest iterations (the
/// first on a tie). `trials.size()` when none has a finite estimate.
inline std::size_t chosen_trial(std::span<const cg_trial> trials, double tolerance) {
  const std::size_t fastest = detail::fastest_trial(trials, tolerance);
  if (fastest == trials.size()) return fastest;
  const bool any_converged = detail::any_converged_trial(trials, tolerance);
  const double least = estimated_solve_seconds(trials[fastest], tolerance);
  const double pace = estimated_iterations(trials[fastest], tolerance);
  std::size_t chosen = fastest;
  double fewest = pace;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (!detail::weighed_trial(trials[i], tolerance, any_converged)) continue;
    const double iterations = estimated_iterations(trials[i], tolerance);
    if (iterations < fewest &&
        estimated_solve_seconds(trials[i], tolerance) <= least * (1 + cg_race_tie(pace, iterations))) {
      chosen = i;
      fewest = iterations;
    }
  }
  return chosen;
}

namespace detail {

/// What a preconditioner keeps: the inverse diagonal (jacobi, chebyshev) and the interval the
/// polynomial covers (chebyshev), or the IC(0) factor of this rank's block (block_ic0).
template <class MemorySpace>
class cg_preconditioner_data {
 public:
  using vector_type = Kokkos::View<double*, MemorySpace>;

  cg_preconditioner_data() = default;

  /// Builds `kind` for `a` (a `distributed_csr`); collective over its ranks, which all raise the
  /// same error when one of them cannot build its part.
  template <class Matrix>
  cg_preconditioner_data(const Matrix& a, cg_preconditioner kind) : m_kind(kind) {
    if (kind == cg_preconditioner::none) return;
    HETERO_EXPECTS(kind != cg_preconditioner::automatic,
                   "cg_preconditioner_data: automatic is chosen by cg_solver");
    const csr_matrix<double> block = a.diagonal_block();
    const std::int64_t first = a.rows().begin;
    // The first row (global) with a diagonal entry <= 0, on any rank.
    std::int64_t bad = std::numeric_limits<std::int64_t>::max();
    double bad_value = 0;
    std::vector<double> diagonal(static_cast<std::size_t>(block.local_rows()), 0.0);
    for (std::int64_t i = 0; i < block.local_rows(); ++i) {
      for (auto k = block.row_ptr()[static_cast<std::size_t>(i)];
           k < block.row_ptr()[static_cast<std::size_t>(i) + 1]; ++k)
        if (block.col_idx()[static_cast<std::size_t>(k)] == i)
          diagonal[static_cast<std::size_t>(i)] = block.values()[static_cast<std::size_t>(k)];
      if (!(diagonal[static_cast<std::size_t>(i)] > 0) && bad == std::numeric_limits<std::int64_t>::max()) {
        bad = first + i;
        bad_value = diagonal[static_cast<std::size_t>(i)];
      }
    }
    const std::int64_t first_bad = a.comm().allreduce(send_buf(bad), op(ops::min{}));
    if (first_bad != std::numeric_limits<std::int64_t>::max()) {
      const double value = a.comm().allreduce(send_buf(bad == first_bad ? bad_value : 0.0), op(ops::sum{}));
      raise<invalid_argument>("cg preconditioner ", to_string(kind), ": row ", first_bad, "'s diagonal entry is ",
                              value,
                              " (none stored counts as 0); every preconditioner needs a positive diagonal, ",
                              "which a symmetric positive definite matrix has (allowed otherwise: none)");
    }
    if (kind == cg_preconditioner::jacobi || kind == cg_preconditioner::chebyshev) {
      std::vector<double> inverse(diagonal.size()), root(diagonal.size());
      for (std::size_t i = 0; i < diagonal.size(); ++i) {
        inverse[i] = 1 / diagonal[i];
        root[i] = std::sqrt(inverse[i]);
      }
      m_inverse_diagonal = to_memory(inverse, "hetero::cg inverse diagonal");
      if (kind == cg_preconditioner::chebyshev) {
        m_upper = 1.1 * lanczos_largest(a, to_memory(root, "hetero::cg root inverse diagonal"), lanczos_steps);
        m_lower = m_upper / 30;
      }
      return;
    }
    ic0_failure failure;
    std::optional<ic0_factor> factor = ic0_factorize(block, failure);
    const std::int64_t failed = factor ? std::numeric_limits<std::int64_t>::max() : first + failure.row;
    const std::int64_t first_failed = a.comm().allreduce(send_buf(failed), op(ops::min{}));
    if (first_failed != std::numeric_limits<std::int64_t>::max())
      raise<invalid_argument>(
          "cg preconditioner block_ic0: the incomplete Cholesky factorisation of the diagonal ",
          "block holding row ", first_failed, " breaks down there even with its diagonal ", "scaled by 1 + ",
          ic0_max_shift, "; allowed for such a matrix: jacobi or none");
    m_factor = std::move(*factor);
    m_shift = a.comm().allreduce(send_buf(m_factor.shift), op(ops::max{}));
    m_host = std::vector<double>(block.local_rows() > 0 ? static_cast<std::size_t>(block.local_rows()) : 0);
  }

  [[nodiscard]] cg_preconditioner kind() const noexcept { return m_kind; }
  /// block_ic0: the largest diagonal shift any rank's block needed (0: none).
  [[nodiscard]] double shift() const noexcept { return m_shift; }
  [[nodiscard]] const vector_type& inverse_diagonal() const noexcept { return m_inverse_diagonal; }
  /// chebyshev: the interval of D^-1 A's spectrum the polynomial covers.
  [[nodiscard]] std::pair<double, double> interval() const noexcept { return {m_lower, m_upper}; }

  /// block_ic0: z = (L L')^-1 r on this rank's rows, on the host (copying through host memory
  /// when the vectors are elsewhere).
  void solve_block(const vector_type& r, const vector_type& z) {
    const std::size_t n = m_host.size();
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible) {
      ic0_solve(m_factor, r.data(), z.data(), n);
    } else {
      using host_view = Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
      const host_view staging(m_host.data(), n);
      Kokkos::deep_copy(staging, Kokkos::subview(r, std::pair<std::size_t, std::size_t>(0, n)));
      ic0_solve(m_factor, m_host.data(), m_host.data(), n);
      Kokkos::deep_copy(Kokkos::subview(z, std::pair<std::size_t, std::size_t>(0, n)), staging);
    }
  }

 private:
  static constexpr int lanczos_steps = 12;

  static vector_type to_memory(const std::vector<double>& host, const char* label) {
    vector_type v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), host.size());
    Kokkos::deep_copy(
        v, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(host.data(), host.size()));
    return v;
  }

  cg_preconditioner m_kind = cg_preconditioner::none;
  vector_type m_inverse_diagonal;
  double m_lower = 0, m_upper = 0;
  ic0_factor m_factor;
  double m_shift = 0;
  std::vector<double> m_host;  // the rows' staging for solve_block, its length the rows
};

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_LINALG_PRECONDITIONER_HPP

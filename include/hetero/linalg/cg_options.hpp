/// @file
/// The vocabulary of `cg_solver` (cg.hpp): how it communicates (`cg_variant`), where its kernels
/// run (`cg_kernels`), what a solve does (`cg_options`) and what it did (`cg_result`, `cg_status`).
#ifndef HETERO_LINALG_CG_OPTIONS_HPP
#define HETERO_LINALG_CG_OPTIONS_HPP

#include <string_view>

#include "hetero/linalg/preconditioner.hpp"

namespace hetero {

/// How a CG iteration communicates (see cg.hpp's file comment). `automatic` measures, when the
/// solver is made, one allreduce, one halo product and (on several ranks, up to 2^22 rows) one
/// allgather product on this matrix and these ranks, and takes `pipelined` where the allreduces
/// of an iteration cost more than the halo product (latency rules, as across many nodes), else
/// the faster of `allgather` and `halo` (on one node, small matrices gather faster through
/// hetero's shared-memory allgather than they exchange halos point to point): by their
/// products, or, where those are within `cg_solver::close_products` of each other, by whole
/// solves of both with the preconditioner in place.
enum class cg_variant { allgather, halo, pipelined, automatic };

/// "allgather", "halo", "pipelined" or "automatic".
constexpr std::string_view to_string(cg_variant v) noexcept {
  return v == cg_variant::allgather   ? "allgather"
         : v == cg_variant::halo      ? "halo"
         : v == cg_variant::pipelined ? "pipelined"
                                      : "automatic";
}

/// Where a solver's kernels run when the matrix is in host memory. A Kokkos kernel on a
/// threaded space costs a launch (0.4 to 1.1 us with Kokkos 3.4's OpenMP) whatever its size,
/// and an iteration has five or more: on a few thousand rows per rank that is most of the
/// iteration, and one thread does better.
enum class cg_kernels {
  automatic,  ///< the faster of the two below, measured on this matrix when the solver is made
  space,      ///< the matrix's execution space (e.g. every thread of Kokkos::OpenMP)
  serial      ///< Kokkos::Serial on the calling thread (host memory only)
};

/// "automatic", "space" or "serial".
constexpr std::string_view to_string(cg_kernels k) noexcept {
  return k == cg_kernels::automatic ? "automatic" : k == cg_kernels::space ? "space" : "serial";
}

/// How a solve ended.
enum class cg_status {
  converged,       ///< ||b - A x|| / ||b|| met the tolerance
  max_iterations,  ///< stopped at `max_iterations` (or ran the fixed count) without meeting it
  diverged,        ///< the residual grew past `divergence` times its best, or it or p'Ap overflowed
  stagnated        ///< the best residual did not improve for `stagnation_iterations` iterations
};

/// "converged", "max_iterations", "diverged" or "stagnated".
constexpr std::string_view to_string(cg_status s) noexcept {
  return s == cg_status::converged        ? "converged"
         : s == cg_status::max_iterations ? "max_iterations"
         : s == cg_status::diverged       ? "diverged"
                                          : "stagnated";
}

/// What a solve does.
struct cg_options {
  /// How an iteration communicates; `automatic` (the default) measures when the solver is made (`cg_variant`).
  cg_variant variant = cg_variant::automatic;
  /// M in M A x = M b (preconditioner.hpp): none, the inverse diagonal, a Chebyshev polynomial,
  /// block Jacobi over the ranks with IC(0) blocks, or (the default) the one of these that a few
  /// trial iterations on this matrix find fastest to the tolerance, or tied with it and with
  /// fewer iterations (`chosen_trial`: within 10 % of its time, up to 30 % for 3 times fewer
  /// iterations, `cg_race_tie`).
  cg_preconditioner preconditioner = cg_preconditioner::automatic;
  /// chebyshev: the polynomial's degree (products with A per application: one less).
  int polynomial_degree = 3;
  /// Where the kernels run (a matrix in device memory always uses its space; `serial` is then
  /// refused).
  cg_kernels kernels = cg_kernels::automatic;
  /// Stop when ||r|| / ||b|| falls below this (r the recurrence residual, not the preconditioned one).
  double tolerance = 1e-8;
  /// Iterations at most (the solve then reports `converged` false unless the tolerance was met).
  int max_iterations = 10000;
  /// Run exactly `max_iterations` iterations whatever the residual (benchmarks commonly time 1000 fixed
  /// iterations).
  bool fixed_iterations = false;
  /// Pipelined variant: recompute r = b - A x and s = A p from their definitions every this
  /// many iterations (residual replacement; 2 extra products each time), besides whenever the
  /// recurrence residual meets the tolerance. 0 (the default): only then. Periodic replacement
  /// disturbs the recurrence: every 10 iterations, it cost 1.05-1.42x the iterations on the
  /// matrices of data/ (docs/results/linalg.md).
  int replacement_interval = 0;
  /// Stop as diverged when the residual exceeds this factor times the best residual seen, or is
  /// not finite.
  double divergence = 1e8;
  /// Stop as stagnated when the best residual has not fallen by 1 % for this many iterations;
  /// 0: 10 times the matrix's rows, at least 1000.
  int stagnation_iterations = 0;
};

/// What a solve did. A solve that does not converge returns the iterate with the smallest
/// residual it saw (within 10 %), which is not always the last.
struct cg_result {
  /// Iterations run.
  int iterations = 0;
  /// ||b - A x|| / ||b|| of the returned x, computed afresh at the end.
  double residual = 0;
  /// How the solve ended.
  cg_status status = cg_status::max_iterations;
  /// `status == cg_status::converged`: the true residual met the tolerance.
  bool converged = false;
  /// Pipelined variant: residual replacements.
  int replacements = 0;
  /// Pipelined variant: restarts (after p'Ap <= 0 from rounding).
  int restarts = 0;
  /// Wall time of the iterations in seconds (all ranks: the slowest).
  double seconds = 0;
  /// `seconds` per iteration (0 when none ran).
  double seconds_per_iteration = 0;
};

}  // namespace hetero

#endif  // HETERO_LINALG_CG_OPTIONS_HPP

/// @file
/// What `cg_solver` measures when it is made (cg.hpp declares these members): the kernels
/// (`cg_kernels::automatic`), the variant (`cg_variant::automatic`) and the preconditioner race
/// (`cg_preconditioner::automatic`). Included at the end of cg.hpp.
#ifndef HETERO_LINALG_DETAIL_CG_MEASUREMENTS_HPP
#define HETERO_LINALG_DETAIL_CG_MEASUREMENTS_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/linalg/cg.hpp"
#include "hetero/linalg/preconditioner.hpp"

namespace hetero {

// `cg_kernels::automatic`: the kernels of a classic iteration (a halo product, two dot
// products, two vector updates; their launches are what Serial saves; and IC(0)'s host solves
// once that preconditioner is in place) timed on the matrix's space and on Serial, alternately
// (so that a drift of the machine hits both), after one untimed run of each; medians of 9, on
// every rank (each rank decides for itself: its kernels touch only its rows). The products
// exchange halos, so every rank runs the same sequence.
template <class ExecutionSpace>
bool cg_solver<ExecutionSpace>::serial_is_faster() {
  if constexpr (!serial_possible || std::is_same_v<ExecutionSpace, serial_space>) {
    return std::is_same_v<ExecutionSpace, serial_space>;
  } else {
    Kokkos::deep_copy(m_p, 1.0);
    auto seconds_of = [&](bool serial) {
      m_options.kernels = serial ? cg_kernels::serial : cg_kernels::space;
      const auto start = std::chrono::steady_clock::now();
      multiply_halo_here(m_p, m_q);
      const double pq = dot(m_p, m_q);
      axpby(m_r, 1.0, m_p, -1.0 / (pq + 1.0), m_q);
      const bool solves = m_precondition.kind() == cg_preconditioner::block_ic0;  // decide_kernels_with_solves
      if (solves) precondition(m_r, m_z);
      dot(m_r, solves ? m_z : m_r);
      xpby(m_q, m_r, 0.5);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    constexpr std::size_t runs = 9;
    std::array<double, runs> on_space{}, on_serial{};
    seconds_of(false);
    seconds_of(true);
    for (std::size_t i = 0; i < runs; ++i) {
      on_space[i] = seconds_of(false);
      on_serial[i] = seconds_of(true);
    }
    m_options.kernels = cg_kernels::space;
    std::sort(on_space.begin(), on_space.end());
    std::sort(on_serial.begin(), on_serial.end());
    return on_serial[runs / 2] < on_space[runs / 2];
  }
}

// IC(0)'s triangular solves run on one host thread between the kernels, over the whole of r
// and z. With the kernels on a host space's threads beside them, an iteration took 1.6x the
// kernels on Serial (nos3 on 2 cores: 27 against 17 us), where the test without the solves
// had found them equal: with block_ic0 in place, `cg_kernels::automatic` decides again, with
// the solves in the test.
template <class ExecutionSpace>
void cg_solver<ExecutionSpace>::decide_kernels_with_solves() {
  if (!m_kernels_measured) return;
  m_options.kernels = serial_is_faster() ? cg_kernels::serial : cg_kernels::space;
}

// `automatic`: an iteration of the halo variant costs a product and two allreduces; the
// pipelined one costs one allreduce overlapped with two products, and more vector work. It is
// chosen only when an allreduce costs more than the product (the pipelined iteration is then
// at most two allreduces long, the halo one longer). Medians of a few runs on every rank; the
// slowest rank's decide, so all ranks choose alike.
template <class ExecutionSpace>
cg_variant cg_solver<ExecutionSpace>::choose_variant() {
  auto median_of = [](auto&& run, int times) {
    std::array<double, 7> t{};
    for (int i = 0; i < times; ++i) {
      const auto start = std::chrono::steady_clock::now();
      run();
      t[static_cast<std::size_t>(i)] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::sort(t.begin(), t.begin() + times);
    return t[static_cast<std::size_t>(times / 2)];
  };
  Kokkos::deep_copy(m_p, 1.0);
  m_a.comm().barrier();
  std::array<double, 2> two{1.0, 1.0};
  double allreduce_seconds = median_of([&] { m_a.comm().allreduce(send_recv_buf(two), op(ops::sum{})); }, 7);
  m_options.variant = cg_variant::halo;  // multiply() below: the halo product
  double product_seconds = median_of([&] { multiply(m_p, m_q); }, 5);
  // The allgather product where the whole vector is small enough to hold on every rank: on a
  // node, hetero's shared-memory allgather can beat the point-to-point halo exchange.
  double gathered_seconds = std::numeric_limits<double>::infinity();
  if (m_a.comm().size() > 1 && m_a.global_rows() <= max_rows_to_gather) {
    m_global = vector_type("hetero::cg gathered p", static_cast<std::size_t>(m_a.global_rows()));
    m_options.variant = cg_variant::allgather;
    gathered_seconds = median_of([&] { multiply(m_p, m_q); }, 5);
  }
  m_options.variant = cg_variant::automatic;
  std::array<double, 3> slowest{allreduce_seconds, product_seconds, gathered_seconds};
  m_a.comm().allreduce(send_recv_buf(slowest), op(ops::max{}));
  m_allreduce_seconds = slowest[0];
  m_product_seconds = slowest[1];
  m_gathered_product_seconds = slowest[2];
  if (m_allreduce_seconds > m_product_seconds && m_a.comm().size() > 1) return cg_variant::pipelined;
  return m_gathered_product_seconds < m_product_seconds ? cg_variant::allgather : cg_variant::halo;
}

// `automatic` between the two variants that compute the same iterates: the halo and the
// allgather one. A product of each alone (choose_variant) does not tell them apart where they
// are close: on 2 ranks nos5's took 1.9 and 1.7 us, 685_bus's 1.6 and 1.6, while a solve's
// iterations differed by 2.5 us, the allgather faster on nos5 and the halo on 685_bus (the
// halo exchange and the gather wait on the other ranks differently inside an iteration). So,
// where the products are within `close_products` of each other, whole solves of each are
// timed with the preconditioner and kernels in place: on b = 1 from x = 0, as many iterations
// as take about `variant_seconds` of products (2 to `variant_iterations`), alternately after
// one untimed solve of each, medians of `variant_runs` per iteration, the slowest rank's
// (every rank chooses alike). Apart by more, the faster product stays.
template <class ExecutionSpace>
cg_variant cg_solver<ExecutionSpace>::faster_classic_variant() {
  const cg_options kept = m_options;
  if (m_global.extent(0) == 0)
    m_global = vector_type("hetero::cg gathered p", static_cast<std::size_t>(m_a.global_rows()));
  auto b = m_a.make_vector("hetero::cg variant b"), x = m_a.make_vector("hetero::cg variant x");
  Kokkos::deep_copy(b, 1.0);
  m_options.max_iterations =
      std::clamp(static_cast<int>(variant_seconds / std::max(m_product_seconds, 1e-9)), 2, variant_iterations);
  m_options.fixed_iterations = false;
  m_options.tolerance = kept.tolerance > 0 ? kept.tolerance : 1e-8;
  const auto per_iteration = [&](cg_variant v) {
    m_options.variant = v;
    return trial_solve(b, x).seconds_per_iteration;
  };
  std::array<double, variant_runs> halo{}, gathered{};
  try {
    per_iteration(cg_variant::halo);
    per_iteration(cg_variant::allgather);
    for (std::size_t i = 0; i < variant_runs; ++i) {
      halo[i] = per_iteration(cg_variant::halo);
      gathered[i] = per_iteration(cg_variant::allgather);
    }
  } catch (const invalid_argument&) {  // A is not positive definite: the user's solve will say so
    m_options = kept;
    if (kept.variant != cg_variant::allgather) m_global = vector_type();
    return kept.variant;
  }
  m_options = kept;
  std::sort(halo.begin(), halo.end());
  std::sort(gathered.begin(), gathered.end());
  m_halo_iteration_seconds = halo[variant_runs / 2];
  m_allgather_iteration_seconds = gathered[variant_runs / 2];
  const bool gather = m_allgather_iteration_seconds < m_halo_iteration_seconds;
  if (!gather) m_global = vector_type();
  return gather ? cg_variant::allgather : cg_variant::halo;
}

// A solve of `automatic`'s measurements: from x = 0, with no phase marks.
template <class ExecutionSpace>
cg_result cg_solver<ExecutionSpace>::trial_solve(const vector_type& b, const vector_type& x) {
  Kokkos::deep_copy(x, 0.0);
  m_trial = true;
  struct unmark {
    bool& trial;
    ~unmark() { trial = false; }
  } const done{m_trial};
  return solve(b, x);
}

// `cg_preconditioner::automatic`: a race to the tolerance on b = A y from x = 0 (y's entries
// pseudo-random by global row), with the solver's variant and kernels. The candidates run in
// the order block_ic0, jacobi, chebyshev, none (the usual winner first, so that the bar is
// low early); each is built and timed over `calibration_iterations`. The first then runs up to
// `trial_iterations`; each next one as many iterations as fit in `trial_budget_seconds` and
// more: the best solve time so far and `cg_race_widest_tie` (the most a tie allows), or, while
// none has converged, the time the first ran and `cg_race_margin` (candidates that do not
// converge are compared at equal time). When none converged, the race runs again with
// `race_growth` times the first's time, up to `race_passes` passes (the trials keep each
// candidate's last). One that converges takes its measured iterations; one that does not,
// those a steady rate from its last residual would need (`estimated_iterations`), which count
// only while no candidate has converged. `chosen_trial` decides: the fewest iterations among
// those tied with the least solve time (`cg_race_tie`), setups left out (each candidate is
// built here, and the winner's build kept); none where nothing made progress. Every rank
// sees the same residuals and the slowest rank's times, so all choose alike. Each trial is a
// trace region (hetero:linalg:cg preconditioner trial:<name>), and so is the choice (its part
// says it and its time). Two limits of the budgets: a candidate cut short before any other
// converged is not run again once one has (only those that converged are weighed then), and a
// trial whose iterations were counted from a calibration up to `cg_race_margin` too slow is not
// topped up, so it may stop short of the widest tie's time.
template <class ExecutionSpace>
void cg_solver<ExecutionSpace>::choose_preconditioner() {
  auto y = m_a.make_halo_vector("hetero::cg trial y");
  auto b = m_a.make_vector("hetero::cg trial b"), x = m_a.make_vector("hetero::cg trial x");
  {
    auto h = Kokkos::create_mirror_view(y);
    for (std::size_t i = 0; i < m_a.local_rows(); ++i) {
      const double t = std::sin(12.9898 * static_cast<double>(m_a.rows().begin + static_cast<std::int64_t>(i)));
      h(i) = 2 * (t * 43758.5453 - std::floor(t * 43758.5453)) - 1;
    }
    Kokkos::deep_copy(y, h);
  }
  m_a.multiply_halo(y, b);
  const cg_options requested = m_options;
  const double tolerance = requested.tolerance > 0 ? requested.tolerance : 1e-8;
  m_options.tolerance = tolerance;
  m_options.fixed_iterations = false;
  const auto run = [&](int iterations) {
    m_options.max_iterations = iterations;
    return trial_solve(b, x);
  };
  // A trial of the candidate in place: the iterations that fit in `seconds` at `rate`'s time
  // per iteration (`trial_iterations` when `seconds` is infinite; `rate` itself when not even
  // one fits). Where the rate was too high by more than the margin (a short calibration), the
  // trial ran out of iterations early and its extrapolation would flatter it: once more at its
  // own rate (not one that converged or that the monitor stopped: it would stop alike).
  const auto timed = [&](double seconds, const cg_result& rate) {
    const auto fitting = [&](double per_iteration) {
      return std::min<double>(seconds / per_iteration, requested.max_iterations);
    };
    if (!std::isfinite(seconds)) return run(std::min(trial_iterations, requested.max_iterations));
    if (!(rate.seconds_per_iteration > 0) || fitting(rate.seconds_per_iteration) < 1) return rate;
    cg_result r = run(static_cast<int>(fitting(rate.seconds_per_iteration)));
    const double ran = r.iterations * r.seconds_per_iteration;
    if (r.status == cg_status::max_iterations && r.seconds_per_iteration > 0 &&
        ran * (1 + cg_race_margin) < seconds && r.iterations < requested.max_iterations)
      r = run(static_cast<int>(fitting(r.seconds_per_iteration)));
    return r;
  };
  const auto budget = [&](std::span<const cg_trial> so_far) {
    const bool converged = detail::any_converged_trial(so_far, tolerance);
    return trial_budget_seconds(so_far, tolerance) * (1 + (converged ? cg_race_widest_tie : cg_race_margin));
  };
  const auto record = [](cg_trial& t, const cg_result& r) {
    t.iterations = r.iterations;
    t.seconds_per_iteration = r.seconds_per_iteration;
    t.residual = r.residual;
  };
  std::array<preconditioner_data, 4> built;
  // The kernels as decided without IC(0)'s solves, for the other candidates, and with them,
  // for block_ic0 (its trial runs on those).
  const cg_kernels without_solves = m_options.kernels;
  cg_kernels with_solves = without_solves;
  const auto kernels_for = [&](cg_preconditioner kind) {
    return kind == cg_preconditioner::block_ic0 ? with_solves : without_solves;
  };
  m_trials.clear();
  for (const auto kind : {cg_preconditioner::block_ic0, cg_preconditioner::jacobi, cg_preconditioner::chebyshev,
                          cg_preconditioner::none}) {
    const region trying("linalg", "cg preconditioner trial", to_string(kind));
    cg_trial t{.preconditioner = kind};
    const auto start = std::chrono::steady_clock::now();
    try {
      use(preconditioner_data(m_a, kind));
    } catch (const invalid_argument&) {  // every rank refuses alike
      t.available = false;
    }
    t.setup_seconds = m_a.comm().allreduce(
        send_buf(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()), op(ops::max{}));
    if (t.available) {
      m_options.kernels = without_solves;
      if (kind == cg_preconditioner::block_ic0) {  // outside its setup time: paid whichever wins
        decide_kernels_with_solves();
        with_solves = m_options.kernels;
      }
      cg_result calibration = run(calibration_iterations);
      // Its time includes the solve's start (a residual: a product, the preconditioner and dot
      // products), about one iteration more.
      calibration.seconds_per_iteration = calibration.seconds / (calibration.iterations + 1);
      const double seconds = budget(m_trials);
      record(t, timed(seconds, calibration));
      built[m_trials.size()] = std::move(m_precondition);
    }
    t.estimated_seconds = estimated_seconds(t, tolerance);
    m_trials.push_back(t);
  }
  // None converged: again with `race_growth` times the first's time, the most promising
  // (by estimate) first, so that one that converges sets the bar for the others early.
  for (int pass = 1; pass < race_passes && !detail::any_converged_trial(m_trials, tolerance); ++pass) {
    const double first_seconds = trial_budget_seconds(m_trials, tolerance);
    if (!std::isfinite(first_seconds)) break;  // nothing ran
    std::array<std::size_t, 4> order{0, 1, 2, 3};
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
      return estimated_solve_seconds(m_trials[i], tolerance) < estimated_solve_seconds(m_trials[j], tolerance);
    });
    std::vector<cg_trial> again;  // this pass's, in the order run
    for (const std::size_t i : order) {
      cg_trial t = m_trials[i];
      if (!t.available || t.iterations == 0) continue;
      const region trying("linalg", "cg preconditioner trial", to_string(t.preconditioner));
      use(std::move(built[i]));
      m_options.kernels = kernels_for(t.preconditioner);
      const double seconds = again.empty() ? race_growth * first_seconds : budget(again);
      record(t, timed(seconds, {.iterations = t.iterations,
                                .residual = t.residual,
                                .seconds_per_iteration = t.seconds_per_iteration}));
      built[i] = std::move(m_precondition);
      t.estimated_seconds = estimated_seconds(t, tolerance);
      m_trials[i] = t;
      again.push_back(t);
    }
  }
  std::size_t best = chosen_trial(m_trials, tolerance);
  if (best == m_trials.size()) best = 3;  // nothing made progress: none
  m_options = requested;
  use(std::move(built[best]));
  m_options.kernels = kernels_for(m_options.preconditioner);
  if (regions_observed()) {
    const std::string why = std::string(to_string(m_options.preconditioner)) + ", " +
                            std::to_string(estimated_solve_seconds(m_trials[best], tolerance)) +
                            " s to the tolerance in its trial";
    const region chosen("linalg", "cg preconditioner chosen", why);
  }
}

}  // namespace hetero

#endif  // HETERO_LINALG_DETAIL_CG_MEASUREMENTS_HPP

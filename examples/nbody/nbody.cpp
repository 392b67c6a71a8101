// nbody: direct all-pairs N-body (double precision, softening, leapfrog), the force loop shared
// between the device and the host of every rank by hetero's work sharing, as in the N-body
// benchmark of the XMP-dev GPU/CPU load-balancing paper (Odajima et al.). Particles are block-distributed over MPI
// ranks (a distributed array of positions); every step a gmove copies the whole array into each rank's replicated
// copy (as XcalableMP's gmove to a non-distributed array), which the force loop reads (replicated in). Prints per
// step and rank the CPU weight of the force loop with that rank's device and host times (the paper's Figure 5),
// and the total energy at the start and the end; checks the first forces against a serial loop and the energy
// drift.
//   mpiexec -n 2 ./nbody [particles] [steps] [--tuner=model|fixed_step|manual] [--weights=FILE]
// With --weights=FILE each rank's tuned weights are loaded from FILE when it exists and saved to
// it at the end (one file, a line per rank and loop), so a second run starts balanced.
#include <hetero/hetero.hpp>

#include <hetero/exec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "nbody_kernels.hpp"

namespace {

// The default spaces; in a CPU-only build OpenMP stands in for the device and Serial is the
// host, so that the split and its tuning are visible on a machine without a GPU.
using device_space = hetero::split_spaces::device;
using host_space = hetero::split_spaces::host;
using policy = hetero::split_policy<device_space, host_space>;
template <class T>
using array = hetero::mirrored_array<T, device_space, host_space>;

constexpr double softening2 = 0.05 * 0.05;

struct options {
  std::int64_t particles = 4096;
  int steps = 10;
  std::string tuner = "model";
  std::string weights_file;
};

options parse(int argc, char** argv) {
  options o;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--tuner=")) {
      o.tuner = a.substr(8);
    } else if (a.starts_with("--weights=")) {
      o.weights_file = a.substr(10);
    } else if (positional == 0) {
      o.particles = std::stoll(argv[i]), ++positional;
    } else {
      o.steps = std::stoi(argv[i]), ++positional;
    }
  }
  HETERO_EXPECTS(o.particles >= 2 && o.steps >= 1, "nbody needs at least 2 particles and 1 step; got ",
                 o.particles, " and ", o.steps);
  HETERO_EXPECTS(o.tuner == "model" || o.tuner == "fixed_step" || o.tuner == "manual", "--tuner=", o.tuner,
                 "; allowed: model, fixed_step, manual");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const options opt = parse(argc, argv);
  const hetero::communicator world;
  const int p = world.size(), r = world.rank();
  // Balanced blocks of particles (the first n % p ranks hold one more), 4 values each (x, y, z,
  // m): ranks in a column, so that each holds whole particles.
  const std::int64_t n = opt.particles;
  const hetero::index_space<2> particles({n, 4}, hetero::process_grid<2>({p, 1}, world));
  hetero::distributed_array<double, 2, Kokkos::HostSpace> blocks(particles);  // each rank's block
  const auto [first, last] = particles.axis(0).block_range(r);
  const std::int64_t mine = last - first;
  const double dt = 1e-3;
  hetero::set_work_sharing_config(hetero::split_config_for(rt));
  const hetero::tuner_kind kind = opt.tuner == "model"        ? hetero::tuner_kind::model
                                  : opt.tuner == "fixed_step" ? hetero::tuner_kind::fixed_step
                                                              : hetero::tuner_kind::manual;
  hetero::set_tuner("nbody_forces", kind);
  if (!opt.weights_file.empty() && std::filesystem::exists(opt.weights_file))
    hetero::load_weights(opt.weights_file, world);

  // Every rank draws all particles from one seed and keeps its block: a cold sphere of radius 1.
  array<double* [4]> all("all", n);  // x, y, z, m of every particle
  array<double* [4]> pos("pos", mine);
  array<double*[3]> vel("vel", mine), acc("acc", mine);
  {
    std::mt19937_64 gen(2024);
    std::uniform_real_distribution<double> u(-1, 1);
    auto a = all.host_view();
    for (std::int64_t i = 0; i < n; ++i) {
      double x, y, z;
      do {
        x = u(gen), y = u(gen), z = u(gen);
      } while (x * x + y * y + z * z > 1);
      a(i, 0) = x, a(i, 1) = y, a(i, 2) = z, a(i, 3) = 1.0 / static_cast<double>(n);
    }
    for (std::int64_t i = 0; i < mine; ++i)
      for (int d = 0; d < 4; ++d) pos.host_view()(i, d) = a(first + i, d);
    all.modify_host();
    pos.modify_host();
  }
  auto gather_positions = [&] {  // every rank's block of (x, y, z, m) into `all`, on the host
    pos.sync_host();
    Kokkos::deep_copy(blocks.local(), pos.host_view());
    hetero::gmove(all.host_view(), blocks);  // distributed -> replicated: every rank gets all
    all.modify_host();
  };
  // The forces in two loops: partial sums over slices of the sources (mine x slices items: a
  // GPU needs more threads than there are particles), then their sum per particle.
  const std::int64_t slices = nbody::force_slices(mine, n);
  array<double* [3]> partial("partial", mine * slices);
  auto compute_forces = [&] {
    hetero::parallel_for("nbody_forces", policy(0, mine * slices),
                         hetero::access(hetero::reads_all(all), hetero::writes(partial)),
                         nbody::partial_forces{first, mine, n, slices, softening2});
    hetero::parallel_for("nbody_sum", policy(0, mine),
                         hetero::access(hetero::reads_all(partial), hetero::writes(acc)),
                         nbody::sum_partials{mine, slices});
  };
  auto total_energy = [&] {
    double kinetic = 0, potential = 0;
    hetero::parallel_reduce("nbody_kinetic", policy(0, mine),
                            hetero::access(hetero::reads(vel), hetero::reads_all(all)),
                            nbody::kinetic_energy{first}, kinetic);
    hetero::parallel_reduce("nbody_potential", policy(0, mine), hetero::access(hetero::reads_all(all)),
                            nbody::potential_energy{first, n, softening2}, potential);
    return world.allreduce(hetero::send_buf(kinetic + potential), hetero::op(hetero::ops::sum{}));
  };

  // Check the split force loop against a serial loop for a few particles of each rank. The two
  // add the same terms in different orders, and signed terms cancel: the difference is measured
  // against the sum of the terms' magnitudes, not against the force itself.
  compute_forces();
  acc.sync_host();
  double worst = 0;
  for (std::int64_t i = 0; i < mine; i += std::max<std::int64_t>(1, mine / 16)) {
    double expected[3] = {0, 0, 0}, magnitude[3] = {0, 0, 0};
    auto a = all.host_view();
    for (std::int64_t j = 0; j < n; ++j) {
      const double dx = a(j, 0) - a(first + i, 0), dy = a(j, 1) - a(first + i, 1), dz = a(j, 2) - a(first + i, 2);
      const double inv = 1.0 / std::sqrt(dx * dx + dy * dy + dz * dz + softening2);
      const double s = a(j, 3) * inv * inv * inv;
      expected[0] += s * dx, expected[1] += s * dy, expected[2] += s * dz;
      magnitude[0] += std::abs(s * dx), magnitude[1] += std::abs(s * dy), magnitude[2] += std::abs(s * dz);
    }
    for (int d = 0; d < 3; ++d)
      worst = std::max(worst, std::abs(acc.host_view()(i, d) - expected[d]) / (magnitude[d] + 1e-300));
  }
  const double energy0 = total_energy();
  if (r == 0) {
    std::printf("nbody: %lld particles on %d rank(s), device %s + host %s, tuner %s, dt %g\n",
                static_cast<long long>(n), p, device_space::name(), host_space::name(), opt.tuner.c_str(), dt);
    std::printf("%5s %5s %8s %12s %12s %12s   (each rank's weight and its own times of the force loop)\n", "step",
                "rank", "weight", "device [s]", "host [s]", "step [s]");
  }

  for (int step = 1; step <= opt.steps; ++step) {
    const double weight = hetero::cpu_weight("nbody_forces");
    hetero::stopwatch watch;
    hetero::parallel_for("nbody_kick_drift", policy(0, mine),
                         hetero::access(hetero::updates(vel), hetero::updates(pos), hetero::reads(acc)),
                         nbody::kick_drift{dt});
    gather_positions();
    compute_forces();
    hetero::parallel_for("nbody_kick", policy(0, mine), hetero::access(hetero::updates(vel), hetero::reads(acc)),
                         nbody::kick{dt});
    // Each rank's weight beside its own times: ranks tune their weights separately.
    const std::vector<double> mine_row{weight, hetero::gpu_seconds("nbody_forces"),
                                       hetero::cpu_seconds("nbody_forces"), watch.seconds()};
    const std::vector<double> rows = world.gather(hetero::send_buf(mine_row), hetero::root(0));
    for (int q = 0; r == 0 && q < p; ++q) {
      const double* row = rows.data() + 4 * q;
      std::printf("%5d %5d %8.4f %12.6f %12.6f %12.6f\n", step, q, row[0], row[1], row[2], row[3]);
    }
    hetero::mark_phase();
  }

  // Why each rank's weight is what it is, in its tuner's words.
  std::vector<char> said(160, '\0');
  const std::string decision = hetero::split_statistics("nbody_forces").decision;
  std::copy_n(decision.begin(), std::min(decision.size(), said.size() - 1), said.begin());
  const std::vector<char> all_said = world.gather(hetero::send_buf(said), hetero::root(0));
  for (int q = 0; r == 0 && q < p; ++q) std::printf("rank %d: %s\n", q, all_said.data() + said.size() * q);

  const double energy1 = total_energy();
  const double drift = std::abs((energy1 - energy0) / energy0);
  const double worst_all = world.allreduce(hetero::send_buf(worst), hetero::op(hetero::ops::max{}));
  const bool forces_ok = worst_all < 1e-12, energy_ok = drift < 1e-4;
  if (r == 0) {
    std::printf("total energy: start %.12f, end %.12f, relative drift %.2e (%s)\n", energy0, energy1, drift,
                energy_ok ? "ok, < 1e-4" : "TOO LARGE");
    std::printf("forces against a serial loop: largest difference %.1e of the terms' magnitude (%s)\n", worst_all,
                forces_ok ? "ok" : "WRONG");
  }
  if (!opt.weights_file.empty()) hetero::save_weights(opt.weights_file, world);  // every rank's own
  return forces_ok && energy_ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

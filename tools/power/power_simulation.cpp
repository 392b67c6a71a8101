// The simulator's study, as the seed's Figures 7 and 12: execution time against the power
// budget for the even allocation, the static one (whole-run criticality) and the dynamic policy
// (one group, and groups of 8 as the seed's "dynamic8"), on the seed's synthetic pattern and a
// BT-MZ-like static imbalance; then the GPU/CPU split inside a node. Prints the tables, writes
// gnuplot data and scripts to --data, and PNG plots to --plots when gnuplot is installed.
//   power_simulation [--ranks 16] [--data <dir>] [--plots <dir>]
// Deterministic: the same numbers on every run and machine. Not an MPI program.
#include <hetero_tools/power/simulator.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace hetero::power;
using namespace hetero_tools::power;

// P(f) between the table's steps, linearly: budgets "at 1.65 GHz on average" as the seed's
// Figure 7 has them (even and detect in 0.1 GHz steps, the others in 0.05 GHz steps).
double power_at(const frequency_table& t, double ghz) {
  std::size_t i = 0;
  while (i + 2 < t.size() && t.frequency(i + 1) < ghz) ++i;
  const double x = (ghz - t.frequency(i)) / (t.frequency(i + 1) - t.frequency(i));
  return t.power(i) + x * (t.power(i + 1) - t.power(i));
}

struct row {
  double ghz, budget, even, fixed, dynamic, dynamic8;
};

double gain(double base, double other) { return 100.0 * (1.0 - other / base); }

std::vector<row> sweep(const imbalance_pattern& pattern, const simulation_options& options) {
  std::vector<row> rows;
  const auto& t = options.table;
  auto grouped = options;
  grouped.group_size = 8;
  for (double f = t.min_frequency(); f <= t.max_frequency() + 1e-9; f += 0.05) {
    const double budget = static_cast<double>(pattern.ranks) * power_at(t, f);
    rows.push_back({f, budget, simulate(pattern, budget, simulated_policy::even, options).seconds,
                    simulate(pattern, budget, simulated_policy::static_criticality, options).seconds,
                    simulate(pattern, budget, simulated_policy::dynamic, options).seconds,
                    simulate(pattern, budget, simulated_policy::dynamic, grouped).seconds});
  }
  return rows;
}

// Prints the table; returns the best dynamic gain over even at budgets on the table's steps
// (where even uses its whole budget) and over all budgets.
std::pair<double, double> report(const std::string& name, const std::vector<row>& rows) {
  std::printf("\n%s pattern: execution time [s] against the budget\n", name.c_str());
  std::printf("%7s %9s %9s %9s %9s %9s %8s %8s %8s\n", "avg GHz", "budget W", "even", "static", "dynamic",
              "dynamic8", "static%", "dynamic%", "dyn8%");
  double best_step = 0, best_any = 0;
  for (const row& r : rows) {
    std::printf("%7.2f %9.1f %9.3f %9.3f %9.3f %9.3f %8.1f %8.1f %8.1f\n", r.ghz, r.budget, r.even, r.fixed,
                r.dynamic, r.dynamic8, gain(r.even, r.fixed), gain(r.even, r.dynamic), gain(r.even, r.dynamic8));
    const bool on_step = std::abs(r.ghz * 10 - std::round(r.ghz * 10)) < 1e-6;
    best_any = std::max(best_any, gain(r.even, r.dynamic));
    if (on_step) best_step = std::max(best_step, gain(r.even, r.dynamic));
  }
  return {best_step, best_any};
}

void plot(const std::string& name, const std::string& title, const std::vector<row>& rows,
          const std::filesystem::path& data, const std::filesystem::path& plots) {
  const auto dat = data / ("power_sim_" + name + ".dat");
  std::ofstream out(dat);
  out << "# budget_W even static dynamic dynamic8\n";
  for (const row& r : rows)
    out << r.budget << ' ' << r.even << ' ' << r.fixed << ' ' << r.dynamic << ' ' << r.dynamic8 << '\n';
  out.close();
  const auto gp = data / ("power_sim_" + name + ".gp");
  std::ofstream script(gp);
  script << "set terminal pngcairo size 900,560 noenhanced\n"
         << "set output '" << (plots / ("power_sim_" + name + ".png")).string() << "'\n"
         << "set title '" << title << "'\nset xlabel 'power budget of all ranks [W]'\n"
         << "set ylabel 'execution time [s]'\nset grid\nset key right top\n"
         << "plot '" << dat.string() << "' using 1:2 with linespoints title 'even', '' using 1:3 with linespoints "
         << "title 'static', '' using 1:4 with linespoints title 'dynamic (one group)', '' using 1:5 with "
            "linespoints title 'dynamic (groups of 8)'\n";
  script.close();
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0 &&
      std::system(("gnuplot '" + gp.string() + "'").c_str()) == 0)
    std::printf("wrote %s\n", (plots / ("power_sim_" + name + ".png")).string().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t ranks = 16;
  std::filesystem::path data = ".", plots;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--ranks")
      ranks = std::stoul(argv[i + 1]);
    else if (flag == "--data")
      data = argv[i + 1];
    else if (flag == "--plots")
      plots = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s (allowed: --ranks, --data, --plots)\n", argv[i]);
      return 2;
    }
  }
  std::filesystem::create_directories(data);
  if (!plots.empty()) std::filesystem::create_directories(plots);
  const simulation_options options;
  const std::string n = std::to_string(ranks);

  const auto synthetic = sweep(synthetic_imbalance(ranks), options);
  const auto [synthetic_step, synthetic_any] = report("synthetic", synthetic);
  const auto btmz = sweep(btmz_like_imbalance(ranks), options);
  const auto [btmz_step, btmz_any] = report("BT-MZ-like", btmz);
  std::printf("\nbest dynamic gain over even, %zu ranks (at the table's steps / at any budget):\n", ranks);
  std::printf("  synthetic:  %5.1f %% / %5.1f %%   (seed 004: 13.3 %% one group, 14.1 %% groups of 8)\n",
              synthetic_step, synthetic_any);
  std::printf(
      "  BT-MZ-like: %5.1f %% / %5.1f %%   (seed 004: 21.3 %% one group, 19.8 %% groups of 8, 22.3 %% static)\n",
      btmz_step, btmz_any);

  std::printf("\nsynthetic pattern, best dynamic gain against the reshuffle period (iterations):\n");
  for (std::size_t period : {5, 10, 25, 50, 100, 200}) {
    double best = 0;
    for (double f = 1.3; f <= 1.95; f += 0.1) {
      const auto pattern = synthetic_imbalance(ranks, {.reshuffle_every = period});
      const double budget = static_cast<double>(ranks) * power_at(options.table, f);
      best = std::max(best, gain(simulate(pattern, budget, simulated_policy::even, options).seconds,
                                 simulate(pattern, budget, simulated_policy::dynamic, options).seconds));
    }
    std::printf("  every %3zu: %5.1f %%\n", period, best);
  }

  std::printf("\nGPU/CPU split inside one node (alternating GPU- and CPU-bound phases of 25 steps):\n");
  std::printf("%9s %9s %9s %8s\n", "budget W", "fixed", "shifted", "gain%");
  const auto gpu = gpu_board_model(), cpu = cpu_package_model();
  std::ofstream node_dat(data / "power_sim_node.dat");
  node_dat << "# budget_W fixed shifted\n";
  for (double b = gpu.min_power() + cpu.min_power(); b <= gpu.max_power() + cpu.max_power() + 1e-9; b += 10) {
    const auto r = simulate_node_shift(alternating_node_pattern(), b);
    std::printf("%9.1f %9.3f %9.3f %8.1f\n", b, r.fixed_seconds, r.shifted_seconds,
                gain(r.fixed_seconds, r.shifted_seconds));
    node_dat << b << ' ' << r.fixed_seconds << ' ' << r.shifted_seconds << '\n';
  }
  node_dat.close();

  if (!plots.empty()) {
    plot("synthetic", "synthetic imbalance (seed 004 Fig. 7), " + n + " ranks", synthetic, data, plots);
    plot("btmz", "BT-MZ-like static imbalance (seed 004 Fig. 12), " + n + " ranks", btmz, data, plots);
    const auto gp = data / "power_sim_node.gp";
    std::ofstream script(gp);
    script << "set terminal pngcairo size 900,560 noenhanced\nset output '"
           << (plots / "power_sim_node.png").string() << "'\n"
           << "set title 'one node: GPU/CPU budget split, fixed by peak power vs shifted by measured times'\n"
           << "set xlabel 'node power budget [W]'\nset ylabel 'execution time [s]'\nset grid\n"
           << "plot '" << (data / "power_sim_node.dat").string()
           << "' using 1:2 with linespoints title 'fixed split', '' using 1:3 with linespoints title 'shifted'\n";
    script.close();
    if (std::system(("gnuplot '" + gp.string() + "' 2>/dev/null").c_str()) == 0)
      std::printf("wrote %s\n", (plots / "power_sim_node.png").string().c_str());
  }
  return 0;
}

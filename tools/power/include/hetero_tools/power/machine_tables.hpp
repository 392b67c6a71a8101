/// @file
/// Frequency tables of particular machines, for the simulator, the tools' tests and the
/// benchmarks: the seed's node (Intel Xeon E5-2630L, seed 004 table 4) with a modelled P(f), that
/// CPU's package alone, and a modelled data-centre GPU. A program for a real machine builds its
/// own `hetero::power::frequency_table` (from a list, or from cpufreq with
/// `hetero::power::cpufreq_frequency_table`).
#ifndef HETERO_TOOLS_POWER_MACHINE_TABLES_HPP
#define HETERO_TOOLS_POWER_MACHINE_TABLES_HPP

#include <cmath>
#include <vector>

#include "hetero/power/frequency_table.hpp"

namespace hetero_tools::power {

using ::hetero::power::frequency_table;

/// Static power of the modelled Xeon node (W): what does not scale with the frequency.
inline constexpr double xeon_node_static_watts = 55.0;

/// The seed's node (Intel Xeon E5-2630L: 1.2 to 2.0 GHz in 0.1 GHz steps, seed 004 table 4)
/// with a modelled node power: 55 W that do not scale, plus 40 W of CPU dynamic power at
/// 2.0 GHz scaling as f * V(f)^2 with V from 0.90 V (1.2 GHz) to 1.05 V (2.0 GHz). The seed
/// measured P(f) but did not publish it; this model has the usual shape (static power
/// dominates, convex dynamic part).
inline frequency_table xeon_e5_2630l() {
  return frequency_table::evenly_spaced(1.2, 2.0, 0.1, [](double f) {
    const double volts = 0.90 + (f - 1.2) * (1.05 - 0.90) / (2.0 - 1.2);
    return xeon_node_static_watts + 40.0 * (f / 2.0) * (volts / 1.05) * (volts / 1.05);
  });
}

/// A modelled GPU for the node simulation: graphics clock 0.9 to 1.5 GHz by 0.1, board power
/// 100 W + 200 W * (f / 1.5 GHz)^3 (143 W to 300 W), the shape of a data-centre GPU's curve.
inline frequency_table gpu_board_model() {
  return frequency_table::evenly_spaced(0.9, 1.5, 0.1,
                                        [](double f) { return 100.0 + 200.0 * std::pow(f / 1.5, 3); });
}

/// The seed's CPU as a package alone (what RAPL counts; no node static power): 20 W plus the
/// dynamic part of `xeon_e5_2630l()` (38 W at 1.2 GHz to 60 W at 2.0 GHz).
inline frequency_table cpu_package_model() {
  const frequency_table node = xeon_e5_2630l();
  std::vector<double> watts;
  for (double p : node.powers()) watts.push_back(p - xeon_node_static_watts + 20.0);
  return frequency_table(node.frequencies(), watts);
}

}  // namespace hetero_tools::power

#endif  // HETERO_TOOLS_POWER_MACHINE_TABLES_HPP

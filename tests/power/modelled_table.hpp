// A frequency table shaped like a server CPU's, for the power tests: 1.2 to 2.0 GHz by 0.1 GHz,
// P(f) = 55 W that do not scale plus 40 W of dynamic power at 2.0 GHz scaling as f * V(f)^2
// (V from 0.90 V to 1.05 V). Static power dominates, the dynamic part is convex, and the
// powers are not exact in binary (which the allocator's rounding must cope with).
#ifndef HETERO_TESTS_POWER_MODELLED_TABLE_HPP
#define HETERO_TESTS_POWER_MODELLED_TABLE_HPP

#include <hetero/power/frequency_table.hpp>

namespace hetero::testing {

inline hetero::power::frequency_table modelled_cpu_table() {
  return hetero::power::frequency_table::evenly_spaced(1.2, 2.0, 0.1, [](double f) {
    const double volts = 0.90 + (f - 1.2) * (1.05 - 0.90) / (2.0 - 1.2);
    return 55.0 + 40.0 * (f / 2.0) * (volts / 1.05) * (volts / 1.05);
  });
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_POWER_MODELLED_TABLE_HPP

// Keeps the calling thread computing (spinning on the clock) for a given time: activity the
// power monitor must count as active.
#ifndef HETERO_TESTS_POWER_BUSY_HPP
#define HETERO_TESTS_POWER_BUSY_HPP

#include <hetero/core/timer.hpp>

namespace hetero::testing {

inline void busy_for(double seconds) {
  const double end = hetero::wall_seconds() + seconds;
  while (hetero::wall_seconds() < end) {
  }
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_POWER_BUSY_HPP

// Fresh random inputs for tests: every run draws a new seed, printed so a failure can be
// replayed with HETERO_TEST_SEED=<seed>. All ranks of a test share the seed.
#ifndef HETERO_TESTS_SUPPORT_RANDOM_HPP
#define HETERO_TESTS_SUPPORT_RANDOM_HPP

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace hetero::testing {

/// One seed per test process, the same on every rank of MPI_COMM_WORLD. The first call is
/// collective (catch_mpi.hpp makes it on every rank before any test runs).
inline std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    std::uint64_t s = 0;
    if (const char* given = std::getenv("HETERO_TEST_SEED")) {
      s = std::stoull(given);
    } else {
      s = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    }
    MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return s;
  }();
  return seed;
}

/// A generator seeded from the test seed and `stream` (use different streams for different
/// purposes); the seed is printed at the start of every test run (catch_mpi.hpp).
inline std::mt19937_64 rng(std::uint64_t stream = 0) {
  return std::mt19937_64(test_seed() ^ (0x9e3779b97f4a7c15ULL * (stream + 1)));
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_RANDOM_HPP

/// @file
/// Work patterns for the power simulator: how much each rank computes in each iteration. The
/// seed's synthetic code (work differing up to 2x between ranks, reshuffled periodically) and a
/// static imbalance built like NPB BT-MZ's (zones of geometrically growing size packed onto
/// processes), both deterministic.
#ifndef HETERO_TOOLS_POWER_IMBALANCE_PATTERNS_HPP
#define HETERO_TOOLS_POWER_IMBALANCE_PATTERNS_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero_tools::power {

/// The work of every rank in every iteration, in gigacycles (seconds at 1 GHz).
struct imbalance_pattern {
  std::string name;   ///< for tables and plots
  std::size_t ranks;  ///< ranks (nodes) simulated
  /// Fills `work[r]` with rank r's work in iteration `iteration`.
  std::function<void(std::size_t iteration, std::span<double> work)> work;
};

/// The seed's synthetic benchmark (seed 004 sec. 6.4.1).
struct synthetic_options {
  double max_ratio = 2.0;            ///< the busiest rank's work over the least busy one's
  double max_gigacycles = 0.096;     ///< the busiest rank's work per iteration: 48 ms at 2 GHz, the
                                     ///< seed's 12-frame period
  std::size_t reshuffle_every = 50;  ///< iterations between random reshuffles of the ranks' work
  std::uint64_t seed = 4;            ///< fixed, as in the seed's experiments
};

namespace detail {

// splitmix64: a fixed generator, so that patterns are the same with every standard library
// (std::shuffle and the std distributions are implementation-defined).
inline std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace detail

/// Work spread evenly from max / max_ratio to max over the ranks, dealt to them in a random
/// order that changes every `reshuffle_every` iterations.
inline imbalance_pattern synthetic_imbalance(std::size_t ranks, synthetic_options options = {}) {
  HETERO_EXPECTS(ranks >= 1, "synthetic imbalance over 0 ranks");
  HETERO_EXPECTS(options.max_ratio >= 1.0 && options.max_gigacycles > 0 && options.reshuffle_every >= 1,
                 "synthetic imbalance: max_ratio ", options.max_ratio, ", max_gigacycles ", options.max_gigacycles,
                 ", reshuffle_every ", options.reshuffle_every, "; need ratio >= 1, work > 0, period >= 1");
  std::vector<double> levels(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const double share = ranks > 1 ? static_cast<double>(r) / static_cast<double>(ranks - 1) : 1.0;
    levels[r] = options.max_gigacycles / options.max_ratio * (1.0 + (options.max_ratio - 1.0) * share);
  }
  auto work = [levels, options](std::size_t iteration, std::span<double> out) {
    std::vector<std::size_t> order(levels.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::uint64_t state = options.seed * 0x100000001b3ULL + iteration / options.reshuffle_every;
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[detail::splitmix64(state) % i]);
    for (std::size_t r = 0; r < out.size(); ++r) out[r] = levels[order[r]];
  };
  return {"synthetic", ranks, std::move(work)};
}

/// A static imbalance built like NPB BT-MZ class C on the seed's cluster (seed 004 sec. 6.5):
/// 16 x 16 zones whose sides grow geometrically (ratio 4.5 per axis, as NPB-MZ's zone_setup),
/// packed largest first onto the least loaded of `processes_per_rank` * ranks processes (the
/// seed ran 96 processes on 16 nodes); a rank's (node's) work is its slowest process's.
struct btmz_options {
  std::size_t zones_x = 16;             ///< zones along x (class C: 16)
  std::size_t zones_y = 16;             ///< zones along y (class C: 16)
  double ratio = 4.5;                   ///< largest over smallest zone side, per axis
  std::size_t processes_per_rank = 6;   ///< the seed's 6 cores per node
  double max_gigacycles = 0.168 * 2.0;  ///< the busiest rank's work: the seed's 42-frame period at 2 GHz
};

/// The BT-MZ-like static imbalance: the same work every iteration.
inline imbalance_pattern btmz_like_imbalance(std::size_t ranks, btmz_options options = {}) {
  HETERO_EXPECTS(ranks >= 1 && options.processes_per_rank >= 1 && options.zones_x >= 2 && options.zones_y >= 2 &&
                     options.ratio >= 1.0,
                 "BT-MZ-like imbalance: ", ranks, " ranks, ", options.processes_per_rank, " processes per rank, ",
                 options.zones_x, " x ", options.zones_y, " zones, ratio ", options.ratio,
                 "; need at least 1 rank and process, 2 x 2 zones, ratio >= 1");
  auto sides = [&](std::size_t n) {
    std::vector<double> s(n);
    const double growth = std::pow(options.ratio, 1.0 / static_cast<double>(n - 1));
    for (std::size_t i = 0; i < n; ++i) s[i] = std::pow(growth, static_cast<double>(i));
    return s;
  };
  std::vector<double> zones;
  for (double x : sides(options.zones_x))
    for (double y : sides(options.zones_y)) zones.push_back(x * y);
  std::sort(zones.begin(), zones.end(), std::greater<>());
  std::vector<double> process(ranks * options.processes_per_rank, 0.0);
  for (double z : zones) *std::min_element(process.begin(), process.end()) += z;
  std::vector<double> node(ranks, 0.0);
  for (std::size_t p = 0; p < process.size(); ++p)
    node[p / options.processes_per_rank] = std::max(node[p / options.processes_per_rank], process[p]);
  const double busiest = *std::max_element(node.begin(), node.end());
  for (double& w : node) w *= options.max_gigacycles / busiest;
  auto work = [node](std::size_t, std::span<double> out) { std::copy(node.begin(), node.end(), out.begin()); };
  return {"btmz", ranks, std::move(work)};
}

}  // namespace hetero_tools::power

#endif  // HETERO_TOOLS_POWER_IMBALANCE_PATTERNS_HPP

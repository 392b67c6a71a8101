/// @file
/// The dist module: distributed arrays in the global-view style of XcalableMP — index spaces
/// distributed over process grids (block, cyclic, block-cyclic, gen-block), arrays aligned to
/// them with shadows, owner-computes loops, reflect, gmove (collective and one-sided),
/// coarrays, and rebalancing from measured rates.
#ifndef HETERO_DIST_HPP
#define HETERO_DIST_HPP

#include "hetero/dist/coarray.hpp"
#include "hetero/dist/concepts.hpp"
#include "hetero/dist/distributed_array.hpp"
#include "hetero/dist/distribution.hpp"
#include "hetero/dist/global_accessor.hpp"
#include "hetero/dist/gmove.hpp"
#include "hetero/dist/index_space.hpp"
#include "hetero/dist/loop.hpp"
#include "hetero/dist/one_sided.hpp"
#include "hetero/dist/process_grid.hpp"
#include "hetero/dist/rebalance.hpp"
#include "hetero/dist/reflect.hpp"
#include "hetero/dist/section.hpp"
#include "hetero/dist/split_executor.hpp"
#include "hetero/dist/staging.hpp"

#endif  // HETERO_DIST_HPP

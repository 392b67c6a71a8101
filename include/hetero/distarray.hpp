/// @file
/// The distributed-array module: distributed arrays in the global-view style of XcalableMP — index spaces
/// distributed over process grids (block, cyclic, block-cyclic, gen-block), arrays aligned to
/// them with shadows, owner-computes loops, reflect, gmove (collective and one-sided),
/// coarrays, and rebalancing from measured rates.
#ifndef HETERO_DISTARRAY_HPP
#define HETERO_DISTARRAY_HPP

#include "hetero/distarray/coarray.hpp"
#include "hetero/distarray/concepts.hpp"
#include "hetero/distarray/distributed_array.hpp"
#include "hetero/distarray/distribution.hpp"
#include "hetero/distarray/global_accessor.hpp"
#include "hetero/distarray/gmove.hpp"
#include "hetero/distarray/index_space.hpp"
#include "hetero/distarray/loop.hpp"
#include "hetero/distarray/one_sided.hpp"
#include "hetero/distarray/process_grid.hpp"
#include "hetero/distarray/rebalance.hpp"
#include "hetero/distarray/reflect.hpp"
#include "hetero/distarray/section.hpp"
#include "hetero/distarray/split_executor.hpp"

#endif  // HETERO_DISTARRAY_HPP

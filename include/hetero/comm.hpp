/// @file
/// The comm module: `hetero::communicator` and its collectives (broadcast, scatter(v),
/// gather(v), reduce, allgather(v), allreduce, barrier and their non-blocking forms) on Kokkos
/// Views, contiguous ranges and values; the shared-memory small-message path; tuning tables (the
/// tuning run that writes them is tools/comm, `hetero_comm_tune`).
#ifndef HETERO_COMM_HPP
#define HETERO_COMM_HPP

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/buffer.hpp"
#include "hetero/comm/communicator.hpp"
#include "hetero/comm/options.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/comm/reduce_ops.hpp"
#include "hetero/comm/request.hpp"
#include "hetero/comm/tuning.hpp"

#endif  // HETERO_COMM_HPP

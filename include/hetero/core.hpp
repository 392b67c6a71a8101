/// @file
/// The core module: runtime, errors, checked MPI calls, configuration.
#ifndef HETERO_CORE_HPP
#define HETERO_CORE_HPP

#include "hetero/config.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/runtime.hpp"

#endif  // HETERO_CORE_HPP

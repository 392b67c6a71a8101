/// @file
/// The core module: runtime, errors, checked MPI calls, timers, the wait/phase observer,
/// configuration.
#ifndef HETERO_CORE_HPP
#define HETERO_CORE_HPP

#include "hetero/config.hpp"
#include "hetero/core/concepts.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/math.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/comm_ref.hpp"
#include "hetero/core/mpi/known_defects.hpp"
#include "hetero/core/mpi/staging.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/core/runtime.hpp"
#include "hetero/core/timer.hpp"
#include "hetero/core/trace.hpp"
#include "hetero/core/wait_timeout.hpp"

#endif  // HETERO_CORE_HPP

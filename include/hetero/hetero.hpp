/// @file
/// Everything hetero offers: `#include <hetero/hetero.hpp>`.
#ifndef HETERO_HETERO_HPP
#define HETERO_HETERO_HPP

#include "hetero/comm.hpp"
#include "hetero/core.hpp"
#include "hetero/distarray.hpp"
#include "hetero/exec.hpp"
#include "hetero/linalg.hpp"
#include "hetero/power.hpp"
#include "hetero/task.hpp"

#endif  // HETERO_HETERO_HPP

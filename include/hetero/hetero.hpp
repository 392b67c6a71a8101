/// @file
/// Every module of hetero but io: `#include <hetero/hetero.hpp>`. io needs parallel HDF5, so it is left out:
/// include `hetero/io.hpp` and link the CMake target `hetero::io` (docs/io.md).
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

/// @file
/// Everything hetero offers: `#include <hetero/hetero.hpp>`.
#ifndef HETERO_HETERO_HPP
#define HETERO_HETERO_HPP

#include "hetero/core.hpp"

#endif  // HETERO_HETERO_HPP

/// @file
/// The linalg module: distributed sparse matrices (balanced row blocks over a communicator, in a
/// Kokkos memory space), Matrix Market input, Poisson test matrices, and conjugate gradients in
/// three communication variants. Stands on the comm module.
#ifndef HETERO_LINALG_HPP
#define HETERO_LINALG_HPP

#include "hetero/linalg/cg.hpp"
#include "hetero/linalg/cg_options.hpp"
#include "hetero/linalg/csr_matrix.hpp"
#include "hetero/linalg/distributed_csr.hpp"
#include "hetero/linalg/matrix_market.hpp"
#include "hetero/linalg/matrix_market_rows.hpp"
#include "hetero/linalg/poisson.hpp"
#include "hetero/linalg/preconditioner.hpp"
#include "hetero/linalg/row_block.hpp"

#endif  // HETERO_LINALG_HPP

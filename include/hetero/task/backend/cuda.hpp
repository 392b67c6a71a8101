/// @file
/// CUDA-only part of the task module's data: how much a GPU can hold for task data (the
/// default cap of a device memory). Included only when `HETERO_HAS_CUDA()`.
#ifndef HETERO_TASK_BACKEND_CUDA_HPP
#define HETERO_TASK_BACKEND_CUDA_HPP

#include <cuda_runtime_api.h>

#include <cstddef>

#include "hetero/core/backend/cuda.hpp"

namespace hetero::detail {

/// What the current GPU can give to task data: 90 % of its free memory when the graph is made
/// (the rest stays for cuBLAS workspaces, Kokkos' scratch and the user's own allocations).
inline std::size_t cuda_task_data_capacity() {
  std::size_t free = 0, total = 0;
  HETERO_CUDA_CHECK(cudaMemGetInfo, &free, &total);
  return free / 10 * 9;
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_BACKEND_CUDA_HPP

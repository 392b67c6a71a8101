// core with CUDA: the runtime's device selection, the CUDA error checker, GPU-aware MPI queries.
#include <hetero/core.hpp>
#include <hetero/core/backend/cuda.hpp>

#include <cstdio>

#include "instantiate.hpp"

void cuda_check::core() {
  const hetero::runtime rt;
  std::printf("devices %d, device %d, CUDA-aware MPI: %s\n", rt.device_count(), rt.device_id(),
              hetero::to_string(hetero::mpi_gpu_support(hetero::gpu_kind::cuda)));
  HETERO_CUDA_CHECK(cudaDeviceSynchronize);
}

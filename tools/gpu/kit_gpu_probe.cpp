// kit_gpu_probe: says whether this node has a CUDA device, for the GPU kit's run.sh.
//   kit_gpu_probe          one line: the device's name, compute capability, memory and count;
//                          exit 0 with a device, 1 without (the CUDA runtime's reason on stderr)
//   kit_gpu_probe --arch   the architecture to expect machine code for, e.g. sm_90
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::fprintf(stderr, "kit_gpu_probe: no CUDA device (%s)\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "the driver reports 0 devices");
    return 1;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    std::fprintf(stderr, "kit_gpu_probe: cudaGetDeviceProperties failed\n");
    return 1;
  }
  if (argc > 1 && std::strcmp(argv[1], "--arch") == 0) {
    std::printf("sm_%d%d\n", p.major, p.minor);
    return 0;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf(
      "%d x %s, compute capability %d.%d, %.1f GiB, %d multiprocessors, driver CUDA %d.%d, runtime %d.%d\n", count,
      p.name, p.major, p.minor, static_cast<double>(p.totalGlobalMem) / (1 << 30), p.multiProcessorCount,
      driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  return 0;
}

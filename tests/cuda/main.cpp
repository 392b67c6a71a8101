// The CUDA check's program: links every module's device code (and cuBLAS, the CUDA runtime and
// the driver stub) into one executable. Building it is the test command's check; on a GPU node
// the GPU kit runs it (`--run`) as a smoke test: every instantiated path runs once, and only
// failures (an exception, a CUDA error, a crash) are caught; the GPU tests (tests/gpu) check
// the results.
#include <hetero/core/runtime.hpp>

#include <cstdio>
#include <string_view>

#include "instantiate.hpp"

int main(int argc, char** argv) {
  if (argc != 2 || std::string_view(argv[1]) != "--run") {
    std::printf("usage: %s --run (runs every module's device paths once; needs a GPU)\n", argv[0]);
    return 2;
  }
  const hetero::runtime rt(argc, argv);
  cuda_check::core();
  cuda_check::exec();
  cuda_check::dist();
  cuda_check::comm();
  cuda_check::linalg();
  cuda_check::task();
  cuda_check::power();
  if (rt.world_rank() == 0) std::printf("every device path ran\n");
  return 0;
}

// The CUDA check's program: links every module's device code (and cuBLAS, the CUDA runtime and
// the driver stub) into one executable. Building it is the check; it is never run here.
#include <cstdio>

#include "instantiate.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("usage: %s --run (instantiates every module's device paths; needs a GPU)\n", argv[0]);
    return 2;
  }
  cuda_check::core();
  cuda_check::exec();
  cuda_check::dist();
  cuda_check::comm();
  cuda_check::linalg();
  cuda_check::task();
  cuda_check::power();
  return 0;
}

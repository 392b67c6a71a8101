#!/usr/bin/env bash
# Adapts the Kokkos 3.4.01 source that Debian's trilinos 13.2 package carries to CUDA 13 and
# C++20, so that hetero.sh can build a CUDA Kokkos from Debian's packages alone.
#
#   cmake/kokkos/kokkos-3.4-cuda13.sh <extracted packages/kokkos folder> [sm_90|sm_80]
#
# It also teaches Kokkos 3.4 the Hopper architecture (H100, H200: compute capability 9.0), which
# it predates: the CMake option Kokkos_ARCH_HOPPER90, nvcc's sm_90 flag, the macros
# KOKKOS_ARCH_HOPPER and KOKKOS_ARCH_HOPPER90 in KokkosCore_config.h, and the 9.0 row of the
# block-size deduction's shared-memory table (without it every launch on a 9.0 device throws
# "Unknown device in cuda block size deduction"). The second argument is nvcc_wrapper's default
# architecture (default sm_90); the architecture a build uses is the Kokkos_ARCH_* option given
# to CMake, which passes its flag explicitly.
#
# Every change is guarded by CUDART_VERSION where it touches the CUDA API, so the adapted source
# still builds with older toolkits. Each edit checks that it found its text: a different Kokkos
# stops the script with the file and the text it expected, never a half-adapted tree.
set -euo pipefail

src=${1:?usage: $0 <kokkos source folder> [sm_90|sm_80]}
default_arch=${2:-sm_90}
case "$default_arch" in
  sm_90 | sm_80) ;;
  *)
    echo "kokkos-3.4-cuda13.sh: architecture '$default_arch' is not supported (allowed: sm_90 for Hopper, sm_80 for Ampere)" >&2
    exit 1
    ;;
esac
[ -f "$src/core/src/Kokkos_Core.hpp" ] || {
  echo "kokkos-3.4-cuda13.sh: $src is not a Kokkos source folder (no core/src/Kokkos_Core.hpp)" >&2
  exit 1
}
grep -q 'set(Kokkos_VERSION_MINOR 4)' "$src/CMakeLists.txt" || grep -q 'KOKKOS_VERSION_MINOR 4' "$src/CMakeLists.txt" || {
  echo "kokkos-3.4-cuda13.sh: $src is not Kokkos 3.4 (these edits are written for 3.4.01)" >&2
  exit 1
}

# edit <file> <perl substitution> <text the result must contain>
edit() {
  local file=$src/$1 expr=$2 expect=$3
  perl -0pi -e "$expr" "$file"
  grep -qF -- "$expect" "$file" || {
    echo "kokkos-3.4-cuda13.sh: the edit of $1 did not apply (expected to find: $expect)" >&2
    exit 1
  }
}

# 1. C++20 through nvcc: Kokkos 3.4's CMake check and nvcc_wrapper only know -std=c++14/17;
#    nvcc accepts -std=c++20 since CUDA 12.
edit cmake/kokkos_test_cxx_std.cmake \
  's/SET\(SUPPORTED_NVCC_FLAGS "-std=c\+\+14;-std=c\+\+17"\)/SET(SUPPORTED_NVCC_FLAGS "-std=c++14;-std=c++17;-std=c++20")/' \
  '-std=c++17;-std=c++20'
edit bin/nvcc_wrapper \
  's/^  --std=c\+\+17\|-std=c\+\+17\)$/  --std=c++17|-std=c++17|--std=c++20|-std=c++20)/m' \
  '--std=c++17|-std=c++17|--std=c++20|-std=c++20)'

# 2. nvcc_wrapper's default architecture: sm_35 is gone from CUDA 12 on and sm_70 from CUDA 13.
edit bin/nvcc_wrapper "s/^default_arch=\"sm_35\"\$/default_arch=\"$default_arch\"/m" "default_arch=\"$default_arch\""

# 3. half_t: CUDA 13's __half2* conversions no longer take half_t through its explicit operator,
#    and __half2double is gone.
edit core/src/Cuda/Kokkos_Cuda_Half.hpp \
  's/return __half2double\(val\);/return static_cast<double>(__half2float(__half(val)));/' \
  'static_cast<double>(__half2float(__half(val)))'
edit core/src/Cuda/Kokkos_Cuda_Half.hpp \
  's/return (__half2(?:float|short_rz|ushort_rz|int_rz|uint_rz|ll_rz|ull_rz))\(val\);/return $1(__half(val));/g' \
  'return __half2ull_rz(__half(val));'

# 4. CUDA 13 API changes: cudaMemPrefetchAsync and cudaMemAdvise take a cudaMemLocation (prefetch
#    also a flags argument); cudaGraphAddDependencies takes the edges' data (none here).
edit core/src/Cuda/Kokkos_CudaSpace.cpp \
  's/    CUDA_SAFE_CALL\(cudaMemPrefetchAsync\(ptr, bytes, space.cuda_device\(\),\n\s*space.cuda_stream\(\)\)\);/#if CUDART_VERSION >= 13000
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id = space.cuda_device();
    CUDA_SAFE_CALL(
        cudaMemPrefetchAsync(ptr, bytes, location, 0, space.cuda_stream()));
#else
    CUDA_SAFE_CALL(cudaMemPrefetchAsync(ptr, bytes, space.cuda_device(),
                                        space.cuda_stream()));
#endif/' \
  'cudaMemPrefetchAsync(ptr, bytes, location, 0, space.cuda_stream())'
edit core/src/Cuda/Kokkos_CudaSpace.cpp \
  's/      cudaMemAdvise\(ptr, arg_alloc_size, cudaMemAdviseSetPreferredLocation,\n\s*cudaCpuDeviceId\);/#if CUDART_VERSION >= 13000
      cudaMemAdvise(ptr, arg_alloc_size, cudaMemAdviseSetPreferredLocation,
                    cudaMemLocation{cudaMemLocationTypeHost, 0});
#else
      cudaMemAdvise(ptr, arg_alloc_size, cudaMemAdviseSetPreferredLocation,
                    cudaCpuDeviceId);
#endif/' \
  'cudaMemLocation{cudaMemLocationTypeHost, 0}'
edit core/src/Cuda/Kokkos_Cuda_Graph_Impl.hpp \
  's/    CUDA_SAFE_CALL\(\n\s*cudaGraphAddDependencies\(m_graph, &pred_cuda_node, &cuda_node, 1\)\);/#if CUDART_VERSION >= 13000
    CUDA_SAFE_CALL(cudaGraphAddDependencies(m_graph, &pred_cuda_node,
                                            &cuda_node, nullptr, 1));
#else
    CUDA_SAFE_CALL(
        cudaGraphAddDependencies(m_graph, &pred_cuda_node, &cuda_node, 1));
#endif/' \
  '&cuda_node, nullptr, 1));'

# 5. Hopper (compute capability 9.0), which Kokkos 3.4 predates. Kokkos::Cuda::initialize aborts
#    when the major of the architecture its kernels were compiled for differs from the device's,
#    so an sm_80 build cannot start on an H100; these edits give the sm_90 build its option,
#    flag, macros and occupancy table row (the names are those of Kokkos 4).
edit cmake/kokkos_arch.cmake \
  's/^(KOKKOS_ARCH_OPTION\(AMPERE86 .*\n)/$1KOKKOS_ARCH_OPTION(HOPPER90        GPU  "NVIDIA Hopper generation CC 9.0")\n/m' \
  'KOKKOS_ARCH_OPTION(HOPPER90'
edit cmake/kokkos_arch.cmake 's/^(CHECK_CUDA_ARCH\(AMPERE86  sm_86\)\n)/$1CHECK_CUDA_ARCH(HOPPER90  sm_90)\n/m' \
  'CHECK_CUDA_ARCH(HOPPER90  sm_90)'
edit cmake/kokkos_arch.cmake \
  's/^(  IF \(KOKKOS_ARCH_AMPERE80 OR KOKKOS_ARCH_AMPERE86\)\n    SET\(KOKKOS_ARCH_AMPERE ON\)\n  ENDIF\(\)\n)/$1\n  IF (KOKKOS_ARCH_HOPPER90)\n    SET(KOKKOS_ARCH_HOPPER ON)\n  ENDIF()\n/m' \
  'SET(KOKKOS_ARCH_HOPPER ON)'
edit cmake/KokkosCore_config.h.in \
  's/^(#cmakedefine KOKKOS_ARCH_AMPERE86\n)/$1#cmakedefine KOKKOS_ARCH_HOPPER\n#cmakedefine KOKKOS_ARCH_HOPPER90\n/m' \
  '#cmakedefine KOKKOS_ARCH_HOPPER90'
# The smallest shared-memory carve-out a 9.0 multiprocessor offers besides none is 8 KiB, as on 8.0.
edit core/src/Cuda/Kokkos_Cuda_BlockSize_Deduction.hpp 's/      case 86: return 8;/      case 86:\n      case 90: return 8;/' \
  '      case 90: return 8;'
edit cmake/compile_tests/cuda_compute_capability.cc \
  's/^(    case 86: std::cout << "Set -DKokkos_ARCH_AMPERE86=ON ." << std::endl; break;\n)/$1    case 90: std::cout << "Set -DKokkos_ARCH_HOPPER90=ON ." << std::endl; break;\n/m' \
  'Kokkos_ARCH_HOPPER90=ON'

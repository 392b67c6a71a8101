#!/usr/bin/env bash
# Adapts the Kokkos 3.4.01 source that Debian's trilinos 13.2 package carries to CUDA 13 and
# C++20, so that hetero.sh can build a CUDA Kokkos from Debian's packages alone.
#
#   cmake/kokkos/kokkos-3.4-cuda13.sh <extracted packages/kokkos folder>
#
# Every change is guarded by CUDART_VERSION where it touches the CUDA API, so the adapted source
# still builds with older toolkits. Each edit checks that it found its text: a different Kokkos
# stops the script with the file and the text it expected, never a half-adapted tree.
set -euo pipefail

src=${1:?usage: $0 <kokkos source folder>}
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

# 2. nvcc_wrapper's default architecture: sm_35 is gone from CUDA 12 on and sm_70 from CUDA 13;
#    Ampere (sm_80) is the newest architecture Kokkos 3.4 knows.
edit bin/nvcc_wrapper 's/^default_arch="sm_35"$/default_arch="sm_80"/m' 'default_arch="sm_80"'

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

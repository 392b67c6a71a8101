# Sourced by pack_kit.sh and (inside the kit) by run.sh: the shared libraries a GPU node brings
# itself, which the kit therefore does not carry.
#   node_library <soname>  prints "system" for the C library, the loader and the driver, "cuda"
#                          for CUDA's large libraries (cuBLAS, cuBLASLt, cuSOLVER, ...: the node's
#                          toolkit), nothing for a library the kit must carry (CUDA's runtime
#                          too: it must match the build's).
node_library() {
  case "$1" in
    linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | \
      libresolv.so.* | libutil.so.* | libcuda.so.* | libnvidia-*.so.*) echo system ;;
    libcublas.so.* | libcublasLt.so.* | libcusolver.so.* | libcusparse.so.* | libnvJitLink.so.* | \
      libcurand.so.* | libcufft.so.* | libnccl.so.*) echo cuda ;;
  esac
}

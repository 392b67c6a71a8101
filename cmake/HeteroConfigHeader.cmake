# Writes hetero/config.hpp: function-like feature macros, so that a misspelt macro fails to
# compile (`#if HETERO_HAS_CUDA()`), with values taken from the Kokkos this build found.

function(hetero_write_config_header path)
  set(backends CUDA HIP SYCL OPENMPTARGET OPENMP THREADS HPX SERIAL)
  foreach(b IN LISTS backends)
    if(b IN_LIST Kokkos_DEVICES)
      set(HETERO_CFG_${b} 1)
    else()
      set(HETERO_CFG_${b} 0)
    endif()
  endforeach()
  set(HETERO_CFG_KOKKOS_VERSION "${Kokkos_VERSION}")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/config.hpp.in" "${path}" @ONLY)
endfunction()

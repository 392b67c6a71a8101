# hetero_find_parallel_hdf5(): makes the imported target hetero::hdf5_parallel (parallel HDF5
# built on the MPI that hetero uses) and sets HETERO_HDF5_FOUND; when it cannot, sets
# HETERO_HDF5_REASON to what was found instead and what to install. Used by hetero's own build
# (the io module's tests, examples and benchmarks) and by heteroConfig.cmake for
# find_package(hetero COMPONENTS io). Expects MPI to be found already.
#
# Debian ships one HDF5 per MPI (libhdf5-mpich-dev, libhdf5-openmpi-dev) beside the serial one,
# and its h5pcc and FindHDF5's default point at Open MPI's: with MPICH the pkg-config module
# hdf5-mpich is the right one. Elsewhere FindHDF5 with HDF5_PREFER_PARALLEL (HDF5_ROOT chooses).
macro(hetero_find_parallel_hdf5)
  set(HETERO_HDF5_FOUND FALSE)
  set(HETERO_HDF5_REASON "")
  if(TARGET hetero::hdf5_parallel)
    set(HETERO_HDF5_FOUND TRUE)
  else()
    set(_hetero_mpi_is_mpich FALSE)
    if(MPI_CXX_LIBRARIES MATCHES "mpich" OR MPI_CXX_COMPILER MATCHES "mpich")
      set(_hetero_mpi_is_mpich TRUE)
    endif()
    if(_hetero_mpi_is_mpich AND NOT HDF5_ROOT)
      find_package(PkgConfig QUIET)
      if(PKG_CONFIG_FOUND)
        pkg_check_modules(HETERO_HDF5_MPICH QUIET IMPORTED_TARGET hdf5-mpich)
      endif()
    endif()
    if(HETERO_HDF5_MPICH_FOUND)
      add_library(hetero::hdf5_parallel INTERFACE IMPORTED)
      target_link_libraries(hetero::hdf5_parallel INTERFACE PkgConfig::HETERO_HDF5_MPICH)
      set(HETERO_HDF5_FOUND TRUE)
      set(HETERO_HDF5_VERSION "${HETERO_HDF5_MPICH_VERSION}")
    else()
      set(HDF5_PREFER_PARALLEL TRUE)
      find_package(HDF5 QUIET COMPONENTS C)
      if(NOT HDF5_FOUND)
        string(CONCAT HETERO_HDF5_REASON "no HDF5 was found (Debian: apt install libhdf5-mpich-dev; elsewhere set HDF5_ROOT "
                               "to a parallel HDF5 built with the MPI hetero uses)")
      elseif(NOT HDF5_IS_PARALLEL)
        string(CONCAT HETERO_HDF5_REASON
            "the HDF5 found (${HDF5_C_INCLUDE_DIRS}) is serial; hetero's io module writes collectively through "
            "MPI-IO and needs a parallel HDF5 built with the MPI hetero uses (Debian: apt install "
            "libhdf5-mpich-dev; elsewhere set HDF5_ROOT to a parallel build)")
      elseif(_hetero_mpi_is_mpich AND "${HDF5_C_LIBRARIES};${HDF5_C_INCLUDE_DIRS}" MATCHES "openmpi")
        string(CONCAT HETERO_HDF5_REASON
            "the parallel HDF5 found (${HDF5_C_INCLUDE_DIRS}) is built on Open MPI, but hetero uses MPICH; "
            "install the MPICH one (Debian: apt install libhdf5-mpich-dev) or set HDF5_ROOT")
      else()
        add_library(hetero::hdf5_parallel INTERFACE IMPORTED)
        target_link_libraries(hetero::hdf5_parallel INTERFACE HDF5::HDF5)
        set(HETERO_HDF5_FOUND TRUE)
        set(HETERO_HDF5_VERSION "${HDF5_VERSION}")
      endif()
    endif()
  endif()
endmacro()

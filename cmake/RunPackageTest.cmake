# Installs hetero from BUILD_DIR into a scratch prefix, then configures, builds and runs the
# consumer project in SOURCE_DIR against that install tree (find_package(hetero REQUIRED)), with
# the compiler CXX_COMPILER (nvcc_wrapper for a CUDA Kokkos). RUN=OFF builds without running
# (a GPU build on a machine without a GPU). MPI_CXX_COMPILER: the MPI wrapper hetero was configured
# with, handed on so that the consumer finds the same MPI.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/install")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${result}): ${command}")
  endif()
endfunction()

run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
# No build type: what is checked is that the package's targets configure, compile, link and run,
# not the consumer's speed; unoptimised, the whole test takes 24 s here against 39 s in Release.
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DCMAKE_CXX_EXTENSIONS=OFF
    "-DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}" "-DWITH_IO=${WITH_IO}")  # the MPI hetero was built with, not the default one
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
if(RUN)
  run("${MPIEXEC}" -n 2 "${WORK_DIR}/build/hetero_consumer")
  if(WITH_IO)
    execute_process(COMMAND "${MPIEXEC}" -n 2 "${WORK_DIR}/build/hetero_io_consumer" WORKING_DIRECTORY "${WORK_DIR}"
                    RESULT_VARIABLE result)
    if(NOT result EQUAL 0)
      message(FATAL_ERROR "failed (${result}): the io consumer")
    endif()
  endif()
else()
  message(STATUS "built ${WORK_DIR}/build/hetero_consumer; not run (RUN=${RUN})")
endif()

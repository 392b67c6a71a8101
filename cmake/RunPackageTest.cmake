# Installs hetero from BUILD_DIR into a scratch prefix, then configures, builds and runs the
# consumer project in SOURCE_DIR against that install tree (find_package(hetero REQUIRED)).
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
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_PREFIX_PATH=${prefix}")
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("${MPIEXEC}" -n 2 "${WORK_DIR}/build/hetero_consumer")

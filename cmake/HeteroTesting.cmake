# hetero_add_mpi_test: one test executable, registered once per MPI rank count.
#
#   hetero_add_mpi_test(NAME <name> SOURCES <src>... [RANKS 1 2 3] [TIMEOUT <seconds>]
#                       [LIBRARIES <lib>...] [LABELS <label>...] [ARGS <arg>...] [CUSTOM_MAIN])
#
# Registers `<name>.np<R>` for every R in RANKS (default: 1), run as
# `mpiexec -n R <name> ARGS`. Without CUSTOM_MAIN the executable gets hetero's test main
# (tests/support/main.cpp), which brings up hetero::runtime and combines the ranks' Catch2
# results; with CUSTOM_MAIN the sources provide main() (see tests/support/catch_mpi.hpp).

find_package(Catch2 3 REQUIRED)

set(HETERO_TEST_TIMEOUT 300 CACHE STRING "Default timeout of one MPI test run, in seconds")

add_library(hetero_test_main OBJECT "${PROJECT_SOURCE_DIR}/tests/support/main.cpp")
target_link_libraries(hetero_test_main PUBLIC hetero::hetero Catch2::Catch2 hetero_warnings)
target_include_directories(hetero_test_main PUBLIC "${PROJECT_SOURCE_DIR}/tests/support")

function(hetero_add_mpi_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "CUSTOM_MAIN" "NAME;TIMEOUT" "SOURCES;RANKS;LIBRARIES;LABELS;ARGS")
  if(NOT arg_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "hetero_add_mpi_test: NAME and SOURCES are required")
  endif()
  if(NOT arg_RANKS)
    set(arg_RANKS 1)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT ${HETERO_TEST_TIMEOUT})
  endif()

  add_executable(${arg_NAME} ${arg_SOURCES})
  target_link_libraries(${arg_NAME} PRIVATE hetero::hetero Catch2::Catch2 hetero_warnings ${arg_LIBRARIES})
  target_include_directories(${arg_NAME} PRIVATE "${PROJECT_SOURCE_DIR}/tests/support")
  if(NOT arg_CUSTOM_MAIN)
    target_link_libraries(${arg_NAME} PRIVATE hetero_test_main)
  endif()

  foreach(ranks IN LISTS arg_RANKS)
    set(test ${arg_NAME}.np${ranks})
    add_test(NAME ${test} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                                  $<TARGET_FILE:${arg_NAME}> ${MPIEXEC_POSTFLAGS} ${arg_ARGS})
    set_tests_properties(${test} PROPERTIES TIMEOUT ${arg_TIMEOUT} PROCESSORS ${ranks} LABELS "mpi;${arg_LABELS}")
  endforeach()
endfunction()

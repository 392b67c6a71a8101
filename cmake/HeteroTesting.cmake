# hetero_add_mpi_test: a test program (an executable of its own, or its files in a group's), registered
# once per MPI rank count.
#
#   hetero_add_mpi_test(NAME <name> SOURCES <src>... [RANKS 1 2 3] [TIMEOUT <seconds>]
#                       [LIBRARIES <lib>...] [LABELS <label>...] [ARGS <arg>...] [CUSTOM_MAIN]
#                       [GROUP <executable>] [NODES_PENDING <why>] [NODES_SKIP <tag>])
#
# Registers `<name>.np<R>` for every R in RANKS (default: 1), run as
# `mpiexec -n R <name> ARGS`. Without CUSTOM_MAIN the executable gets hetero's test main
# (tests/support/main.cpp), which brings up hetero::runtime and combines the ranks' Catch2
# results; with CUSTOM_MAIN the sources provide main() (see tests/support/catch_mpi.hpp).
#
# With GROUP, there is no executable <name>: the sources join the executable <executable>, which
# the first test of the group creates and which every test of the group shares (with all their
# LIBRARIES; all with CUSTOM_MAIN or all without), and each run selects its own test cases by
# their file's name: `mpiexec -n R <executable> ARGS -# "[#<src name>]~[.]"` (Catch2's file-name
# tags; hidden cases stay hidden). A group compiles its sources as one unity unit (or in units of
# HETERO_TEST_UNITY_BATCH files where that is above 1): the test programs of one folder
# instantiate the same templates of hetero, Kokkos and Catch2, and one unit compiles them once
# (tests/comm's gather and scatter tests under ASan + UBSan at -O0: 43.3 s and 34.6 s alone,
# 51.0 s as one unit; its 12 files 111 s as one unit, 167 s as units of 8 and 4). Each run is still
# its own process that runs only its file's cases. Per-target settings (compile definitions,
# dependencies) go on the group's target; a test that needs its own keeps its own executable.
# Sets HETERO_TEST_PROGRAM_<name> (the program and its arguments) for runs registered by hand.
#
# With HETERO_TEST_NODES, each R of 2 to 5 is registered once more on emulated nodes
# (tools/nodes/mpiexec_nodes.sh, docs/nodes.md) as `<name>.np<R>.nodes<layout>`: 2 ranks a node
# each (nodes1-1; only where R = 3 is not in RANKS, or in a folder that sets
# HETERO_NODE_RUNS_2_BESIDE_3), 3 ranks as 2 + 1 (nodes2-1; also as 3 nodes, nodes1-1-1, and as 1 + 2,
# nodes1-2, in a folder that sets HETERO_NODE_LAYOUTS_3 so, as tests/comm does), 4 ranks as two
# nodes of 2 (nodes2-2), 5 ranks as 2, 2 and 1 (nodes2-2-1); label
# `nodes`. NODES_PENDING registers them disabled (CTest lists them as not run), for a test that
# does not yet hold across nodes; <why> says what fails, for the reader. NODES_SKIP (a group's
# tests only) leaves the cases tagged [<tag>] out of those runs: cases whose subject does not
# depend on where the ranks sit and whose length would only repeat what the plain runs check
# (tests/linalg's [hard] solves: thousands of iterations of the same allreduce and halo). A file
# whose every case carries the tag would select none on the nodes (Catch2 then fails the run),
# and HETERO_TEST_PROGRAM_<name> keeps the plain spec: a run a folder registers by hand on
# nodes includes the tagged cases.

find_package(Catch2 3 REQUIRED)

set(HETERO_TEST_TIMEOUT 300 CACHE STRING "Default timeout of one MPI test run, in seconds")
set(HETERO_TEST_UNITY_BATCH 0 CACHE STRING
    "Source files per unity unit of a test group (hetero_add_mpi_test GROUP); 0: all in one, 1: each on its own")
if(NOT HETERO_TEST_UNITY_BATCH MATCHES "^[0-9]+$")
  message(FATAL_ERROR "HETERO_TEST_UNITY_BATCH is '${HETERO_TEST_UNITY_BATCH}': it must be a whole number "
                      "(0: a test group's files in one unity unit, 1: each file on its own, N: units of N files)")
endif()

add_library(hetero_test_main OBJECT "${PROJECT_SOURCE_DIR}/tests/support/main.cpp")
target_link_libraries(hetero_test_main PUBLIC hetero::hetero Catch2::Catch2 hetero_warnings)
target_include_directories(hetero_test_main PUBLIC "${PROJECT_SOURCE_DIR}/tests/support")
hetero_test_target(hetero_test_main)
# The main of the tests whose program initialises MPI with MPI_THREAD_FUNNELED itself
# (tests/support/funneled.hpp): LIBRARIES hetero_funneled_main with CUSTOM_MAIN.
add_library(hetero_funneled_main OBJECT "${PROJECT_SOURCE_DIR}/tests/support/funneled_main.cpp")
target_link_libraries(hetero_funneled_main PUBLIC hetero::hetero Catch2::Catch2 hetero_warnings)
target_include_directories(hetero_funneled_main PUBLIC "${PROJECT_SOURCE_DIR}/tests/support")
hetero_test_target(hetero_funneled_main)

function(hetero_add_mpi_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "CUSTOM_MAIN" "NAME;TIMEOUT;NODES_PENDING;NODES_SKIP;GROUP"
                        "SOURCES;RANKS;LIBRARIES;LABELS;ARGS")
  if(NOT arg_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "hetero_add_mpi_test: NAME and SOURCES are required")
  endif()
  if(NOT arg_RANKS)
    set(arg_RANKS 1)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT ${HETERO_TEST_TIMEOUT})
  endif()

  if(arg_NODES_SKIP AND NOT arg_GROUP)
    message(FATAL_ERROR "hetero_add_mpi_test: ${arg_NAME}: NODES_SKIP needs GROUP (it narrows the group's test spec)")
  endif()

  set(executable ${arg_NAME})
  set(args ${arg_ARGS})
  set(node_args ${arg_ARGS})
  if(arg_GROUP)
    set(executable ${arg_GROUP})
    set(spec "")
    set(node_spec "")
    foreach(source IN LISTS arg_SOURCES)
      get_filename_component(stem "${source}" NAME_WLE)
      string(APPEND spec "[#${stem}]~[.],")
      string(APPEND node_spec "[#${stem}]~[.]")
      if(arg_NODES_SKIP)
        string(APPEND node_spec "~[${arg_NODES_SKIP}]")
      endif()
      string(APPEND node_spec ",")
    endforeach()
    string(REGEX REPLACE ",$" "" spec "${spec}")
    string(REGEX REPLACE ",$" "" node_spec "${node_spec}")
    list(APPEND args "-#" "${spec}")
    list(APPEND node_args "-#" "${node_spec}")
  endif()
  if(arg_GROUP AND TARGET ${executable})
    get_property(custom_main TARGET ${executable} PROPERTY HETERO_CUSTOM_MAIN)
    if(NOT custom_main STREQUAL arg_CUSTOM_MAIN)
      message(FATAL_ERROR "hetero_add_mpi_test: ${arg_NAME} joins group ${arg_GROUP}, whose tests are "
                          "CUSTOM_MAIN=${custom_main}, with CUSTOM_MAIN=${arg_CUSTOM_MAIN}: a group's tests share one main")
    endif()
  else()
    add_executable(${executable})
    target_link_libraries(${executable} PRIVATE hetero::hetero Catch2::Catch2 hetero_warnings)
    target_include_directories(${executable} PRIVATE "${PROJECT_SOURCE_DIR}/tests/support")
    hetero_test_target(${executable})
    if(NOT arg_CUSTOM_MAIN)
      target_link_libraries(${executable} PRIVATE hetero_test_main)
    endif()
    if(arg_GROUP AND NOT HETERO_TEST_UNITY_BATCH EQUAL 1)
      set_target_properties(${executable} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${HETERO_TEST_UNITY_BATCH})
    endif()
    set_property(TARGET ${executable} PROPERTY HETERO_CUSTOM_MAIN ${arg_CUSTOM_MAIN})
  endif()
  target_sources(${executable} PRIVATE ${arg_SOURCES})
  if(arg_LIBRARIES)
    target_link_libraries(${executable} PRIVATE ${arg_LIBRARIES})
  endif()

  foreach(ranks IN LISTS arg_RANKS)
    set(test ${arg_NAME}.np${ranks})
    add_test(NAME ${test} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                                  $<TARGET_FILE:${executable}> ${MPIEXEC_POSTFLAGS} ${args})
    set_tests_properties(${test} PROPERTIES TIMEOUT ${arg_TIMEOUT} PROCESSORS ${ranks} LABELS "mpi;${arg_LABELS}"
                                            ENVIRONMENT "${HETERO_TEST_ENVIRONMENT}")
    # A test that also runs on 3 ranks gets no 2-rank node run outside a folder that asks for it
    # (HETERO_NODE_RUNS_2_BESIDE_3, cmake/HeteroNodeRuns.cmake).
    if(NOT (ranks EQUAL 2 AND "3" IN_LIST arg_RANKS) OR HETERO_NODE_RUNS_2_BESIDE_3)
      hetero_add_node_run(${test} ${ranks} "${arg_NODES_PENDING}" $<TARGET_FILE:${executable}> ${node_args})
    endif()
  endforeach()
  # The program and arguments of the test's runs, for runs a folder registers itself.
  set(HETERO_TEST_PROGRAM_${arg_NAME} $<TARGET_FILE:${executable}> ${args} PARENT_SCOPE)
endfunction()

# hetero_add_compile_failure(NAME <name> SOURCE <src> MESSAGE <regex>): `src` must not compile,
# and the compiler must say `regex` (a `hetero:` static_assert, so that a wrong space or type is
# a build error with a message that says what to do). Registered as test compile_fail.<name>
# (label compile_fail); the object library is built only by that test.
function(hetero_add_compile_failure)
  # MESSAGE: one regular expression the compiler's output must match; EXPECT: several, all of
  # which must match (the test then prints "all <n> expected messages found").
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SOURCE;MESSAGE" "EXPECT")
  add_library(${arg_NAME} OBJECT EXCLUDE_FROM_ALL ${arg_SOURCE})
  target_link_libraries(${arg_NAME} PRIVATE hetero::hetero)
  if(CMAKE_GENERATOR MATCHES "Ninja")
    # The compiler runs by itself (cmake/CompileFailure.cmake), so two such tests compile at once
    # (the CUDA stage's six: 89 s one at a time).
    set(command "-DNINJA=${CMAKE_MAKE_PROGRAM}" "-DBUILD_DIR=${PROJECT_BINARY_DIR}" -DTARGET=${arg_NAME})
    if(arg_EXPECT)
      string(REPLACE ";" "@HETERO_SEP@" expect "${arg_EXPECT}")
      list(APPEND command "-DEXPECT=${expect}")
    endif()
    list(APPEND command -P "${PROJECT_SOURCE_DIR}/cmake/CompileFailure.cmake")
    set(lock "")
  else()
    # Through the build tool, one build of the build folder at a time (its logs are not shared safely).
    set(command --build "${PROJECT_BINARY_DIR}" --target ${arg_NAME})
    set(lock RESOURCE_LOCK build_folder)
  endif()
  add_test(NAME compile_fail.${arg_NAME} COMMAND "${CMAKE_COMMAND}" ${command})
  # Passes on the message alone: a build that succeeds, or fails for another reason, fails.
  if(arg_EXPECT AND CMAKE_GENERATOR MATCHES "Ninja")
    list(LENGTH arg_EXPECT count)
    set(arg_MESSAGE "all ${count} expected messages found")
  elseif(arg_EXPECT)
    list(GET arg_EXPECT 0 arg_MESSAGE)  # the build tool's output is not checked message by message
  endif()
  set_tests_properties(compile_fail.${arg_NAME} PROPERTIES LABELS "compile_fail" PASS_REGULAR_EXPRESSION
                                                          "${arg_MESSAGE}" TIMEOUT 600 ${lock})
endfunction()

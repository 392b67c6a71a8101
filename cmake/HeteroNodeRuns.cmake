# Emulated nodes for the tests: MPI programs of 2 to 5 ranks run once more with their ranks on
# several "nodes" of this machine (tools/nodes/mpiexec_nodes.sh; docs/nodes.md), so that every
# path hetero takes when ranks span nodes runs in the test command. Included where tests are
# enabled, before the examples, benchmarks and tests register theirs.

option(HETERO_TEST_NODES "Also run the MPI tests and examples of 2 to 5 ranks on emulated nodes (docs/nodes.md)" ON)
set(HETERO_NODES_MPIEXEC "${PROJECT_SOURCE_DIR}/tools/nodes/mpiexec_nodes.sh")

# The layouts of 3 ranks: 2 + 1 (ranks 0 and 1 share a node, rank 2 has one of its own), so that
# the node-aware paths, a leader with a peer and a leader alone, run at 3 ranks too; every rank on
# a node of its own runs at 2 ranks (nodes1-1). A folder whose tests depend on how many nodes
# there are or where rank 0 sits sets this to add 3 nodes (1,1,1: three node leaders, a count
# that is not a power of two) and 1 + 2 (rank 0 alone): tests/comm adds both, for its rooted
# collectives and node leaders; tests/faults adds 1,1,1 for its communicator faults. The other folders
# ran 1 + 2 until 2026-12-02 and 1,1,1 until 2026-12-06, each about 150-200 s of the test command
# on 2 cores: cut for the command's time (docs/build.md). Across nodes they call comm's
# algorithms, which run on all three layouts in tests/comm; what is their own (a neighbour on
# another node, a node of one rank) runs in 2 + 1 and at 2 ranks.
set(HETERO_NODE_LAYOUTS_3 "2,1")
# The 2-rank run on 2 nodes of one rank (nodes1-1) of a test that also runs on 3 ranks: only in a
# folder that sets this ON (tests/comm, whose algorithms have a case where every rank leads its
# node). Elsewhere its 3-rank run on 2 + 1 nodes takes every node-aware path of the folder's own
# (a neighbour and a peer on another node, a node of one rank) and what it calls of comm's runs
# on every layout in tests/comm; the 2-rank node runs beside such 3-rank runs took about 100 s of
# the test command on 2 cores until 2026-12-07 (docs/build.md). A test that runs on 2 ranks and
# not on 3 keeps its nodes1-1 run.
set(HETERO_NODE_RUNS_2_BESIDE_3 OFF)
# Every layout of 3 ranks a folder may choose (hetero_runs_of looks for each).
set(HETERO_NODE_LAYOUTS_3_ANY "1,1,1|2,1|1,2")

# hetero_node_layouts(<ranks> <out>): the layouts of the extra runs of an MPI test with <ranks>
# ranks on emulated nodes, a list (empty for none) whose items give the ranks per node,
# comma-separated: 2 ranks as 2 nodes, 3 as HETERO_NODE_LAYOUTS_3 says (the caller's value), 4 as
# 2 + 2, 5 as 2 + 2 + 1.
function(hetero_node_layouts ranks out)
  set(table "" "" "1,1" "${HETERO_NODE_LAYOUTS_3}" "2,2" "2,2,1")
  set(layouts "")
  if(HETERO_TEST_NODES AND ranks LESS 6)
    list(GET table ${ranks} layouts)
  endif()
  string(REPLACE "|" ";" layouts "${layouts}")
  set(${out} "${layouts}" PARENT_SCOPE)
endfunction()

# hetero_add_node_run(<test> <ranks> <pending> <command>...): registers `<test>.nodes<layout>`
# for each layout of <ranks> ranks, <command> (a program and its arguments) on emulated nodes;
# copies <test>'s properties and adds label `nodes`.
function(hetero_add_node_run test ranks pending)
  hetero_node_layouts(${ranks} layouts)
  foreach(layout IN LISTS layouts)
    string(REPLACE "," "-" suffix "${layout}")
    set(run ${test}.nodes${suffix})
    add_test(NAME ${run} COMMAND ${HETERO_NODES_MPIEXEC} --nodes ${layout} -n ${ranks} ${ARGN})
    foreach(property TIMEOUT ENVIRONMENT FIXTURES_REQUIRED RESOURCE_LOCK)
      get_test_property(${test} ${property} value)
      if(value)
        set_tests_properties(${run} PROPERTIES ${property} "${value}")
      endif()
    endforeach()
    get_test_property(${test} LABELS labels)
    list(REMOVE_ITEM labels tsan)  # the thread checker's stage runs each threaded test once, on one node
    set_tests_properties(${run} PROPERTIES LABELS "${labels};nodes" PROCESSORS ${ranks} SKIP_RETURN_CODE 77)
    if(pending)
      set_tests_properties(${run} PROPERTIES DISABLED TRUE)
    endif()
  endforeach()
endfunction()

# hetero_runs_of(<out> <test>...): each <test> (`<name>.np<ranks>`) and its runs on emulated nodes
# where it has them, for properties set after registration (hetero_add_node_run copies only those
# set before).
function(hetero_runs_of out)
  set(runs)
  foreach(test IN LISTS ARGN)
    list(APPEND runs ${test})
    if(test MATCHES "[.]np([0-9]+)$")
      set(HETERO_NODE_LAYOUTS_3 "${HETERO_NODE_LAYOUTS_3_ANY}")  # whichever the folder chose
      hetero_node_layouts(${CMAKE_MATCH_1} layouts)
      foreach(layout IN LISTS layouts)
        string(REPLACE "," "-" suffix "${layout}")
        if(TEST ${test}.nodes${suffix})
          list(APPEND runs ${test}.nodes${suffix})
        endif()
      endforeach()
    endif()
  endforeach()
  set(${out} ${runs} PARENT_SCOPE)
endfunction()

# hetero_tolerate_mpich_leaks(<test>...): tests (`<name>.np<ranks>`, with their runs on emulated
# nodes) whose waits give up on purpose. What such a wait leaves to MPI stays pending for good
# (a collective or an MPI_Comm_idup a late rank never joins), and hetero never frees the
# communicator of a wait that gave up (detail::keep_communicator), so MPICH cannot free its own
# objects at MPI_Finalize. Under AddressSanitizer, LeakSanitizer is told to leave what libmpich
# allocated alone there; everything else still counts (what hetero keeps for MPI stays referenced,
# detail::keep_for_mpi).
function(hetero_tolerate_mpich_leaks)
  if(NOT "address" IN_LIST HETERO_SANITIZE)
    return()
  endif()
  set(suppressions "${PROJECT_BINARY_DIR}/tests/mpich_lsan.supp")
  file(WRITE "${suppressions}" "leak:libmpich.so\n")
  hetero_runs_of(runs ${ARGN})
  set_property(TEST ${runs} APPEND PROPERTY ENVIRONMENT "LSAN_OPTIONS=suppressions=${suppressions}")
endfunction()

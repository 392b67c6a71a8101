// The runtime inside an application that already has MPI and Kokkos up (the test main's
// runtime): a second runtime nests, owns nothing and reports what MPI says.
#include <hetero/core/runtime.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <vector>

using Catch::Matchers::ContainsSubstring;

TEST_CASE("a nested runtime owns nothing and leaves MPI and Kokkos up", "[core][runtime]") {
  {
    hetero::runtime inner;
    CHECK_FALSE(inner.owns_mpi());
    CHECK_FALSE(inner.owns_kokkos());
  }
  CHECK(hetero::detail::mpi_initialized());
  CHECK_FALSE(hetero::detail::mpi_finalized());
  CHECK(Kokkos::is_initialized());
  int sum = 0, one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(sum == size);
}

TEST_CASE("the runtime reports world and node-local ranks as MPI does", "[core][runtime]") {
  hetero::runtime rt;
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(rt.world_rank() == rank);
  CHECK(rt.world_size() == size);

  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  int local_rank = -1, local_size = -1;
  MPI_Comm_rank(shared, &local_rank);
  MPI_Comm_size(shared, &local_size);
  CHECK(rt.local_rank() == local_rank);
  CHECK(rt.local_size() == local_size);
  MPI_Comm_free(&shared);

  // Every node-local rank appears exactly once on the node.
  std::vector<int> locals(static_cast<std::size_t>(rt.local_size()), -1);
  int mine = rt.local_rank();
  MPI_Allgather(&mine, 1, MPI_INT, locals.data(), 1, MPI_INT, rt.local_comm());
  for (int i = 0; i < rt.local_size(); ++i) CHECK(locals[static_cast<std::size_t>(i)] == i);

  // Every rank of these tests runs on this one machine, whatever MPI's nodes (emulated nodes
  // have their own host names, one kernel): all share its cores, and the waits judge
  // oversubscription by them.
  CHECK(rt.machine_size() == size);
  CHECK(rt.machine_size() >= rt.local_size());
  CHECK(hetero::detail::make_wait_policy(MPI_COMM_WORLD).oversubscribed ==
        (size > hetero::detail::online_cores()));

  int provided = -1;
  MPI_Query_thread(&provided);
  CHECK(static_cast<int>(rt.mpi_thread_level()) == provided);
  CHECK(rt.host_threads() >= 1);
}

TEST_CASE("the device is the node-local rank modulo the device count", "[core][runtime]") {
  hetero::runtime rt;
  CHECK(rt.device_count() == hetero::detail::device_count());
  if (rt.device_count() == 0) {
    CHECK(rt.device_id() == -1);
  } else {
    CHECK(rt.device_id() == rt.local_rank() % rt.device_count());
  }
}

TEST_CASE("bad runtime options are refused with the value and what is allowed", "[core][runtime]") {
  hetero::runtime_options threads;
  threads.host_threads = -2;
  CHECK_THROWS_WITH(hetero::runtime(threads),
                    ContainsSubstring("host_threads is -2") && ContainsSubstring("0 (automatic) or a positive"));
  hetero::runtime_options device;
  device.device_id = -7;
  CHECK_THROWS_AS(hetero::runtime(device), hetero::invalid_argument);
  device.device_id = hetero::detail::device_count() + 3;
  CHECK_THROWS_WITH(hetero::runtime(device), ContainsSubstring("device(s)"));
  // A failed construction leaves the application's MPI and Kokkos as they were.
  CHECK(Kokkos::is_initialized());
  CHECK_FALSE(hetero::detail::mpi_finalized());
}

TEST_CASE("cores are shared among the ranks of a node", "[core][runtime]") {
  const int online = static_cast<int>(std::thread::hardware_concurrency());
  CHECK(hetero::detail::cores_per_rank(1) == hetero::detail::affinity_cores());
  if (hetero::detail::affinity_cores() == online) {
    CHECK(hetero::detail::cores_per_rank(2) == std::max(1, online / 2));
    CHECK(hetero::detail::cores_per_rank(10 * online) == 1);
  }
}

TEST_CASE("MPI_COMM_WORLD's handler returns request errors inside hetero's waits and is fatal elsewhere",
          "[core][runtime][errors]") {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler);
  CHECK(handler != MPI_ERRORS_ARE_FATAL);  // the runtime's own (the tests' main leaves the default to it)
  CHECK(handler == hetero::detail::own_world_handler());
  if (handler != MPI_ERRORS_ARE_FATAL && handler != MPI_ERRORS_RETURN) MPI_Errhandler_free(&handler);
  {
    const hetero::detail::request_errors_returned inside;
    CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER) == MPI_SUCCESS);  // returned, not aborted
  }
  // Outside a wait the previous handler (fatal) runs: tests/core/world_error_program.cpp.
}

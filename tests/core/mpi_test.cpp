#include <hetero/core/mpi.hpp>
#include <hetero/core/mpi/wait.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "random.hpp"
#include "world.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

TEST_CASE("a failing MPI call becomes an mpi_error that names the call", "[core][mpi]") {
  MPI_Comm comm = MPI_COMM_NULL;
  HETERO_MPI_CHECK(MPI_Comm_dup, MPI_COMM_WORLD, &comm);
  HETERO_MPI_CHECK(MPI_Comm_set_errhandler, comm, MPI_ERRORS_RETURN);
  int size = 0;
  HETERO_MPI_CHECK(MPI_Comm_size, comm, &size);
  int value = 7;
  try {
    HETERO_MPI_CHECK(MPI_Send, &value, 1, MPI_INT, size + 5, 0, comm);  // no such rank
    FAIL("MPI_Send to a rank outside the communicator did not fail");
  } catch (const hetero::mpi_error& e) {
    CHECK(e.call() == "MPI_Send");
    CHECK(e.code() != MPI_SUCCESS);
    int error_class = 0;
    MPI_Error_class(e.code(), &error_class);
    CHECK(error_class == MPI_ERR_RANK);
    CHECK_THAT(e.what(), StartsWith("MPI_Send failed: "));
    CHECK_THAT(e.what(), ContainsSubstring("MPI error code"));
  }
  CHECK_NOTHROW(hetero::check_mpi(MPI_SUCCESS, "MPI_Barrier"));
  CHECK_THROWS_WITH(hetero::check_mpi(MPI_ERR_COUNT, "MPI_Bcast"), StartsWith("MPI_Bcast failed: "));
  MPI_Comm_free(&comm);
}

TEST_CASE("counts handed to MPI are checked, never narrowed", "[core][mpi]") {
  using hetero::detail::mpi_count;
  CHECK(mpi_count(0, "count") == 0);
  CHECK(mpi_count(std::size_t{12345}, "count") == 12345);
  CHECK(mpi_count(std::int64_t{INT_MAX}, "count") == INT_MAX);
  CHECK_THROWS_AS(mpi_count(std::int64_t{INT_MAX} + 1, "count"), hetero::invalid_argument);
  CHECK_THROWS_WITH(mpi_count(std::size_t{1} << 40, "message size"),
                    ContainsSubstring("message size is 1099511627776") && ContainsSubstring("2147483647"));
  CHECK_THROWS_WITH(mpi_count(-3, "recv count"), ContainsSubstring("recv count is negative (-3)"));
}

TEST_CASE("thread levels are ordered and named", "[core][mpi]") {
  using hetero::thread_level;
  CHECK(static_cast<int>(thread_level::single) < static_cast<int>(thread_level::funneled));
  CHECK(static_cast<int>(thread_level::serialized) < static_cast<int>(thread_level::multiple));
  CHECK(std::string(hetero::to_string(thread_level::multiple)) == "multiple");
  CHECK(std::string(hetero::to_string(thread_level::funneled)) == "funneled");
}

TEST_CASE("MPI is asked at run time whether it takes device pointers", "[core][mpi]") {
  const auto cuda = hetero::mpi_gpu_support(hetero::gpu_kind::cuda);
#if defined(MPIX_GPU_SUPPORT_CUDA)
  // MPICH answers; this build (Debian's MPICH) is not GPU-aware, ENVIRONMENT.md.
  int flag = -1;
  MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &flag);
  CHECK(cuda == (flag ? hetero::gpu_support::yes : hetero::gpu_support::no));
#else
  CHECK(cuda != hetero::gpu_support::yes);
#endif
  CHECK(std::string(hetero::to_string(hetero::gpu_support::unknown)) == "unknown");
}

using hetero::testing::world_rank;
using hetero::testing::world_size;

TEST_CASE("a step agreed by every rank names the lowest rank whose step failed", "[core][mpi]") {
  auto rng = hetero::testing::rng(71);  // the same draws on every rank
  const int size = world_size(), me = world_rank();
  const hetero::detail::wait_policy policy = hetero::detail::make_wait_policy(MPI_COMM_WORLD);
  for (int round = 0; round < 8; ++round) {
    std::vector<bool> fails(static_cast<std::size_t>(size));
    for (auto&& f : fails) f = std::bernoulli_distribution(0.4)(rng);
    const auto first = std::find(fails.begin(), fails.end(), true);
    const int expected = first == fails.end() ? -1 : static_cast<int>(first - fails.begin());
    bool ran = false;
    const auto agreed = hetero::detail::agree_on_step(MPI_COMM_WORLD, policy, "test step", [&] {
      ran = true;
      if (fails[static_cast<std::size_t>(me)]) throw std::runtime_error("this rank's step");
    });
    CHECK(ran);
    CHECK(agreed.failed_rank == expected);
    CHECK(static_cast<bool>(agreed.failure) == fails[static_cast<std::size_t>(me)]);
    CHECK_FALSE(agreed.arguments_differ);
  }
  // Arguments that differ on one rank are seen on every rank, whatever the steps did.
  const int odd = std::uniform_int_distribution<int>(0, size - 1)(rng);
  const std::uint64_t hash = rng();
  const auto agreed = hetero::detail::agree_on_step(MPI_COMM_WORLD, policy, "test step", [] {},
                                                    {me == odd ? hash + 1 : hash, "test arguments"});
  CHECK(agreed.arguments_differ == (size > 1));
  CHECK(agreed.failed_rank == -1);
  const auto set_up = [&] {
    hetero::detail::agreed_setup_step(MPI_COMM_WORLD, policy, "test set-up", [] {},
                                      {me == odd ? hash + 1 : hash, "test arguments"});
  };
  if (size > 1) {
    CHECK_THROWS_WITH(set_up(), ContainsSubstring("the ranks passed different test arguments"));
  } else {
    CHECK_NOTHROW(set_up());  // one rank: nothing to differ from
  }
}

TEST_CASE("a waited sum over the ranks is the serial sum modulo 2^64", "[core][mpi]") {
  auto rng = hetero::testing::rng(73);  // every rank draws every rank's values
  const int size = world_size(), me = world_rank();
  std::vector<std::array<std::uint64_t, 3>> values(static_cast<std::size_t>(size));
  std::array<std::uint64_t, 3> serial{};
  for (auto& v : values)
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i] = rng();  // sums past 2^64 wrap, as unsigned arithmetic does
      serial[i] += v[i];
    }
  const auto sum = hetero::detail::allreduce_sum<3>(values[static_cast<std::size_t>(me)], MPI_COMM_WORLD,
                                                    hetero::detail::make_wait_policy(MPI_COMM_WORLD), "test sum");
  CHECK(sum == serial);
}

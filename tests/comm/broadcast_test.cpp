// broadcast and ibroadcast against MPI_Bcast for every algorithm, buffer path, root and random
// size (0 included); bad roots and mismatched counts.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <tuple>
#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

TEMPLATE_TEST_CASE("broadcast equals MPI_Bcast for every algorithm, root and buffer path", "[comm][broadcast]",
                   int, double, pair_value) {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(11);
    for (comm_algorithm a : algorithms_of(collective::broadcast)) {
      for (int trial = 0; trial < 3; ++trial) {
        const std::size_t n = random_count(gen, sizeof(TestType));
        const int from = static_cast<int>(gen() % static_cast<unsigned>(comm.size()));
        const auto stream = 100 + static_cast<std::uint64_t>(trial);
        // Every rank starts with its own values; the root's must arrive everywhere.
        std::vector<TestType> got = values_of<TestType>(stream, comm.rank(), n), expected = got;
        MPI_Request r;
        MPI_Ibcast(expected.data(), static_cast<int>(n), detail::mpi_type<TestType>(), from, MPI_COMM_WORLD, &r);
        wait_reference(r);
        INFO("algorithm " << to_string(a) << ", n = " << n << ", root " << from);
        if (!runnable(comm, collective::broadcast, a, n * sizeof(TestType))) {
          if (n > 0)
            CHECK_THROWS_AS(comm.broadcast(send_recv_buf(got), root(from), force_algorithm(a)), invalid_argument);
          continue;
        }
        comm.broadcast(send_recv_buf(got), root(from), force_algorithm(a));
        check_equal(as_span(got), as_span(expected), "broadcast");
      }
    }
  }
}

using execution_spaces = std::tuple<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;

TEMPLATE_LIST_TEST_CASE("broadcast of Views and of single values", "[comm][broadcast]", execution_spaces) {
  communicator& comm = default_comm();
  const int last = comm.size() - 1;
  Kokkos::View<long*, typename TestType::memory_space> v("v", 1000);
  Kokkos::deep_copy(v, comm.rank() == last ? 42L : -1L);
  comm.broadcast(send_recv_buf(v), root(last));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < h.extent(0); ++i) wrong += h(i) != 42L;
  CHECK(wrong == 0);
  double value = comm.rank() == 0 ? 2.5 : 0.0;
  comm.broadcast(send_recv_buf(value));
  CHECK(value == 2.5);
}

TEST_CASE("ibroadcasts started together complete whatever the order of the waits", "[comm][broadcast]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    std::vector<int> small(7, comm.rank()), large(30000, comm.rank());
    auto first = comm.ibroadcast(send_recv_buf(small), root(comm.size() - 1));
    auto second = comm.ibroadcast(send_recv_buf(large), root(0));
    while (!second.test()) std::this_thread::yield();
    // Not necessarily done yet: a shared-memory request progresses in its own test or wait.
    first.wait();
    CHECK(first.done());
    CHECK(small == std::vector<int>(7, comm.size() - 1));
    CHECK(large == std::vector<int>(30000, 0));
  }
}

TEST_CASE("broadcast rejects bad roots and finds mismatched counts", "[comm][broadcast][errors]") {
  communicator& comm = default_comm();
  std::vector<int> v(4);
  CHECK_THROWS_WITH(comm.broadcast(send_recv_buf(v), root(comm.size())),
                    ContainsSubstring("root " + std::to_string(comm.size()) + " is outside the communicator of " +
                                      std::to_string(comm.size()) + " rank(s) (allowed: 0 to " +
                                      std::to_string(comm.size() - 1) + ")"));
  CHECK_THROWS_WITH(comm.broadcast(send_recv_buf(v), root(-1)), ContainsSubstring("root -1 is outside"));
  if (comm.size() > 1 && comm.has_shared_memory()) {
    // The receivers see the root's header and raise; the root, which reads nothing, returns and
    // hears of it at its next call on the communicator, before that call moves any data.
    std::vector<int> mine(comm.rank() == 0 ? 4 : 5);
    if (comm.rank() == 0) {
      CHECK_NOTHROW(comm.broadcast(send_recv_buf(mine)));
      CHECK_THROWS_WITH(
          comm.allreduce(send_buf(1), op(ops::sum{})),
          ContainsSubstring("rank 1 raised hetero::error in this communicator's previous broadcast"));
    } else {
      CHECK_THROWS_WITH(
          comm.broadcast(send_recv_buf(mine)),
          ContainsSubstring("rank 0 published a broadcast of 16 bytes from/to root 0 where this rank"));
    }
    CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());  // still usable
  }
}

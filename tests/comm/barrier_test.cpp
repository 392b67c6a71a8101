// barrier and ibarrier: no rank leaves before the last one arrived, for every algorithm.
#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <thread>
#include <vector>

#include "comm_test_support.hpp"

using namespace hetero;
using namespace hetero::testing;

namespace {

// Seconds on the node's monotonic clock (the same clock in every process of a node).
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Rank r arrives r * 10 ms late; every rank must leave after the last arrival.
template <class Barrier>
void check_orders(communicator& comm, Barrier&& barrier) {
  std::this_thread::sleep_for(std::chrono::milliseconds(10 * comm.rank()));
  const double arrived = now();
  barrier();
  const double left = now();
  std::vector<double> arrivals(static_cast<std::size_t>(comm.size())), departures = arrivals;
  MPI_Request r[2];
  MPI_Iallgather(&arrived, 1, MPI_DOUBLE, arrivals.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD, &r[0]);
  polite_wait(r[0]);
  MPI_Iallgather(&left, 1, MPI_DOUBLE, departures.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD, &r[1]);
  polite_wait(r[1]);
  double last_arrival = 0, first_departure = 1e300;
  for (double a : arrivals) last_arrival = std::max(last_arrival, a);
  for (double d : departures) first_departure = std::min(first_departure, d);
  CHECK(first_departure >= last_arrival);
}

}  // namespace

TEST_CASE("barrier holds every rank until the last arrives, for every algorithm", "[comm][barrier]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (comm_algorithm a : algorithms_of(collective::barrier)) {
      INFO("algorithm " << to_string(a));
      if (!runnable(comm, collective::barrier, a, 0)) {
        CHECK_THROWS_AS(comm.barrier(force_algorithm(a)), invalid_argument);
        continue;
      }
      check_orders(comm, [&] { comm.barrier(force_algorithm(a)); });
      for (int i = 0; i < 50; ++i) comm.barrier(force_algorithm(a));  // back to back: slots are reused safely
    }
    check_orders(comm, [&] {
      auto request = comm.ibarrier();
      request.wait();
    });
  }
}

TEST_CASE("a mix of blocking and non-blocking collectives on shared memory stays consistent", "[comm][shm]") {
  communicator& comm = default_comm();
  auto gen = rng(61);
  const int p = comm.size();
  std::vector<std::vector<int>> buffers(64);
  std::vector<unsigned> kinds(64);
  std::vector<collective_request> pending;
  for (int step = 0; step < 64; ++step) {
    const auto k = static_cast<std::size_t>(step);
    buffers[k].assign(1 + gen() % 100, comm.rank() + step);
    kinds[k] = static_cast<unsigned>(gen() % 5);
    switch (kinds[k]) {
      case 0: pending.push_back(comm.iallreduce(send_recv_buf(buffers[k]), op(ops::sum{}))); break;
      case 1: pending.push_back(comm.ibroadcast(send_recv_buf(buffers[k]), root(step % p))); break;
      case 2: comm.allreduce(send_recv_buf(buffers[k]), op(ops::sum{})); break;
      case 3: comm.barrier(); break;
      default: pending.push_back(comm.ibarrier());
    }
    if (gen() % 4 == 0 && !pending.empty()) pending[gen() % pending.size()].test();
  }
  for (auto& r : pending) r.wait();
  // Every broadcast delivered the root's value, every sum the sum.
  for (int step = 0; step < 64; ++step) {
    const auto k = static_cast<std::size_t>(step);
    const std::vector<int>& b = buffers[k];
    if (kinds[k] == 0 || kinds[k] == 2)
      CHECK(b == std::vector<int>(b.size(), p * (p - 1) / 2 + p * step));
    else if (kinds[k] == 1)
      CHECK(b == std::vector<int>(b.size(), step % p + step));
  }
}

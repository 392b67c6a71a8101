// Errors only one rank sees: a rank that is not the root rejects its own arguments (a send
// buffer too small for its send_count, a View that is not contiguous, a receive buffer too
// small), and a user's reduction operation that throws on one rank, in the blocking and the
// non-blocking forms. The cases named "shm" run on a node's window where the ranks share one;
// across nodes every rank agrees by message first, so every rank hears of the rejection. With the default argument
// checks (`consistent`) the ranks that depend on the rejecting rank raise `invalid_argument` naming it at once
// instead of waiting for the timeout (1 s, set by this folder's main), a thrown operation reaches its caller and
// the others get a `hetero::error`, and the communicator stays usable.
#include <hetero/comm.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "faults_support.hpp"
#include "random.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;

namespace {

// Fresh random values of `n` elements in [-1, 1), other on every rank.
std::vector<double> fresh_values(std::size_t n) {
  static auto gen = hetero::testing::rng(11 + static_cast<std::uint64_t>(faults::world_rank()));
  std::vector<double> v(n);
  std::generate(v.begin(), v.end(), [] { return std::uniform_real_distribution<double>(-1, 1)(gen); });
  return v;
}

// What one rank saw (faults::attempt), telling a user's own exception ("domain_error") and an
// exception of type hetero::error itself ("error") apart from "other".
faults::outcome attempt(const std::function<void()>& f) {
  std::string kind;
  auto o = faults::attempt([&] {
    try {
      f();
    } catch (const std::domain_error&) {
      kind = "domain_error";
      throw;
    } catch (const hetero::error& e) {
      if (typeid(e) == typeid(hetero::error)) kind = "error";
      throw;
    }
  });
  if (!kind.empty()) o.kind = kind;
  return o;
}

// Checks an outcome's kind and a fragment of its message.
void expect(const faults::outcome& o, const std::string& kind, const std::string& fragment = {}) {
  INFO("rank " << faults::world_rank() << ": " << o.kind << ": " << o.text);
  CHECK(o.kind == kind);
  if (!fragment.empty()) CHECK_THAT(o.text, ContainsSubstring(fragment));
}

// The message the others raise when rank `bad` (not the root) rejected its arguments.
std::string rejected(const std::string& collective, int bad) {
  return collective + ": rank " + std::to_string(bad) + " rejected its arguments: ";
}

// A communicator that raised an argument error is still in step: the next collective works.
void check_usable(communicator& comm) { CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size()); }

// a + b, except on rank `bad_rank`, where it throws (a user's operation with state).
struct throwing_sum {
  int bad_rank;
  int my_rank;
  double operator()(double a, double b) const {
    if (my_rank == bad_rank) throw std::domain_error("throwing_sum: refused on rank " + std::to_string(my_rank));
    return a + b;
  }
};

// More elements than the shared-memory window takes (64 KiB per rank by default).
constexpr std::size_t above_window = 12000;

}  // namespace

TEST_CASE("a rank that is not the root rejects its arguments: the root raises at once, naming it",
          "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), bad = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(1, 64));
  const std::string count_error = "send_buf holds " + std::to_string(n) + " element(s)";

  SECTION("gather on shared memory: its send_count exceeds its send_buf") {
    communicator comm;
    const auto mine = fresh_values(n);
    const auto o = attempt([&] { (void)comm.gather(send_buf(mine), send_count(me == bad ? n + 1 : n), root(0)); });
    faults::report("non-root rejects (send_count > send_buf)", "comm gather (shm), root 0", o);
    if (me == bad)
      expect(o, "invalid_argument", "gather: " + count_error);
    else if (me == 0 || !comm.has_shared_memory())  // across nodes every rank agrees first
      expect(o, "invalid_argument", rejected("gather", bad) + count_error);
    else
      expect(o, "none");
    check_usable(comm);
  }
  SECTION("gather above the window (MPI's call and linear)") {
    for (const comm_algorithm a : {comm_algorithm::mpi, comm_algorithm::linear}) {
      INFO("algorithm " << to_string(a));
      communicator comm;
      const auto mine = fresh_values(above_window);
      const auto o = attempt([&] {
        (void)comm.gather(send_buf(mine), send_count(me == bad ? above_window + 1 : above_window), root(0),
                          force_algorithm(a));
      });
      faults::report("non-root rejects (send_count > send_buf)",
                     std::string("comm gather (") + std::string(to_string(a)) + "), root 0", o);
      const std::string big = "send_buf holds " + std::to_string(above_window) + " element(s)";
      if (me == bad)
        expect(o, "invalid_argument", "gather: " + big);
      else
        expect(o, "invalid_argument", rejected("gather", bad) + big);
      check_usable(comm);
    }
  }
  SECTION("reduce on shared memory: its send_buf is not contiguous") {
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> matrix("matrix", n, 2);
    const auto column = Kokkos::subview(matrix, Kokkos::ALL, 0);  // stride 2
    Kokkos::View<double*, Kokkos::HostSpace> packed("packed", n);
    communicator comm;
    const auto o = attempt([&] {
      if (me == bad)
        (void)comm.reduce(send_buf(column), op(ops::sum{}), root(0));
      else
        (void)comm.reduce(send_buf(packed), op(ops::sum{}), root(0));
    });
    faults::report("non-root rejects (View not contiguous)", "comm reduce (shm), root 0", o);
    if (me == bad)
      expect(o, "invalid_argument", "contiguous");
    else if (me == 0 || !comm.has_shared_memory())
      expect(o, "invalid_argument", rejected("reduce", bad) + "send_buf");
    else
      expect(o, "none");
    check_usable(comm);
  }
  SECTION("reduce with a user operation, on shared memory and above the window") {
    for (const std::size_t count : {n, above_window}) {
      INFO("count " << count);
      communicator comm;
      const auto mine = fresh_values(count);
      std::vector<double> out(me == bad ? count - 1 : count);
      const auto o = attempt([&] {
        comm.reduce(send_buf(mine), recv_buf(out), op([](double a, double b) { return a + b; }), root(bad));
      });
      // The root rejects here (its recv_buf is too small): every other rank hears it.
      faults::report("root rejects (recv_buf too small), user op",
                     count == n ? "comm reduce (shm), root late" : "comm reduce (above window), root late", o);
      if (me == bad)
        expect(o, "invalid_argument", "recv_buf holds " + std::to_string(count - 1));
      else
        expect(o, "invalid_argument",
               "reduce: rank " + std::to_string(bad) + " (the root) rejected its arguments");
      check_usable(comm);

      const Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> matrix("matrix", count, 2);
      const auto column = Kokkos::subview(matrix, Kokkos::ALL, 0);
      std::vector<double> sum(count);
      const auto o2 = attempt([&] {
        const auto plus = op([](double a, double b) { return a + b; });
        if (me == bad)
          (void)comm.reduce(send_buf(column), plus, root(0));
        else
          comm.reduce(send_buf(mine), recv_buf(sum), plus, root(0));
      });
      faults::report("non-root rejects (View not contiguous), user op",
                     count == n ? "comm reduce (shm), root 0" : "comm reduce (above window), root 0", o2);
      if (me == bad)
        expect(o2, "invalid_argument", "contiguous");
      else if (me == 0 || count != n || !comm.has_shared_memory())
        expect(o2, "invalid_argument", rejected("reduce", bad) + "send_buf");
      else  // shm: a rank that is not the root reads only the root's slot, and settles
        expect(o2, "error", "reduce: rank 0 raised an error during the reduction");
      check_usable(comm);
    }
  }
}

TEST_CASE("a rank rejects its receive buffer in allreduce: every other rank raises, naming it", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), bad = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(2, 64));
  for (const std::size_t count : {n, above_window}) {
    for (const bool user_op : {false, true}) {
      INFO("count " << count << (user_op ? ", user operation" : ", ops::sum"));
      communicator comm;
      const auto mine = fresh_values(count);
      std::vector<double> out(me == bad ? count / 2 : count);
      const auto o = attempt([&] {
        if (user_op)
          comm.allreduce(send_buf(mine), recv_buf(out), op([](double a, double b) { return a + b; }));
        else
          comm.allreduce(send_buf(mine), recv_buf(out), op(ops::sum{}));
      });
      faults::report(std::string("one rank rejects (recv_buf too small)") + (user_op ? ", user op" : ""),
                     count == n ? "comm allreduce (shm)" : "comm allreduce (mpi, above window)", o);
      const std::string why = "recv_buf holds " + std::to_string(count / 2) + " element(s)";
      if (me == bad)
        expect(o, "invalid_argument", "allreduce: " + why);
      else
        expect(o, "invalid_argument", rejected("allreduce", bad) + why);
      check_usable(comm);
    }
  }
}

TEST_CASE("a user's reduction operation that throws on one rank, blocking and non-blocking", "[faults][comm]") {
  const int p = faults::world_size(), me = faults::world_rank(), bad = p - 1;
  if (p < 2) return;
  const auto n = static_cast<std::size_t>(faults::shared_random(1, 64));
  const auto mine = fresh_values(n);
  std::vector<double> expected(n);
  MPI_Allreduce(mine.data(), expected.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  // Either the operation threw on `bad` (then it gets its own exception and every other rank a
  // hetero::error naming it), or MPI never called it there and every rank has the sum.
  const auto check_outcome = [&](const faults::outcome& o, const std::vector<double>& out, bool must_throw) {
    int threw = o.kind == "domain_error" ? 1 : 0, any = 0;
    MPI_Allreduce(&threw, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (must_throw) CHECK(any == 1);
    if (any == 1 && me == bad) expect(o, "domain_error", "throwing_sum: refused on rank " + std::to_string(bad));
    if (any == 1 && me != bad)
      expect(o, "error", "rank " + std::to_string(bad) + " raised an error during the reduction");
    if (any == 0) {
      expect(o, "none");
      // Each sum has p terms in [-1, 1); MPI may add them in another order.
      const double margin = 4 * p * std::numeric_limits<double>::epsilon();
      for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == Catch::Approx(expected[i]).epsilon(0).margin(margin));
    }
  };

  // Shared memory only where the ranks share a node (across nodes there is no window).
  const bool one_node = communicator().has_shared_memory();
  if (!one_node)
    faults::report("user op throws on late", "comm allreduce (shm), ranks on several nodes",
                   {"skipped", "no shared-memory window", {}, 0});
  for (const comm_algorithm a : {comm_algorithm::shm, comm_algorithm::mpi}) {
    if (a == comm_algorithm::shm && !one_node) continue;
    const std::string where = a == comm_algorithm::shm ? " (shm)" : " (mpi)";
    communicator comm;
    std::vector<double> out(n);
    const auto thrower = op(throwing_sum{bad, me}, ops::commutative);
    auto o = attempt([&] { comm.allreduce(send_buf(mine), recv_buf(out), thrower, force_algorithm(a)); });
    faults::report("user op throws on late", "comm allreduce" + where, o);
    check_outcome(o, out, a == comm_algorithm::shm);
    check_usable(comm);

    o = attempt([&] {
      auto request = comm.iallreduce(send_buf(mine), recv_buf(out), thrower, force_algorithm(a));
      request.wait();
    });
    faults::report("user op throws on late", "comm iallreduce + wait" + where, o);
    check_outcome(o, out, a == comm_algorithm::shm);
    check_usable(comm);

    o = attempt([&] {
      auto request = comm.iallreduce(send_buf(mine), recv_buf(out), thrower, force_algorithm(a));
      while (!request.test()) {
      }
    });
    faults::report("user op throws on late", "comm iallreduce + test" + where, o);
    check_outcome(o, out, a == comm_algorithm::shm);
    check_usable(comm);

    // Two requests, waited for in opposite orders on neighbouring ranks, with a blocking
    // collective between: each request's outcome reaches every rank alike.
    std::vector<double> out2(n);
    faults::outcome first, second;
    {
      auto one = comm.iallreduce(send_buf(mine), recv_buf(out), thrower, force_algorithm(a));
      auto two = comm.iallreduce(send_buf(mine), recv_buf(out2), thrower, force_algorithm(a));
      const auto started = attempt([&] { check_usable(comm); });
      CHECK(started.kind == "none");
      if (me % 2 == 0) {
        first = attempt([&] { one.wait(); });
        second = attempt([&] { two.wait(); });
      } else {
        second = attempt([&] { two.wait(); });
        first = attempt([&] { one.wait(); });
      }
    }
    faults::report("user op throws on late, 2 requests", "comm iallreduce x2, waited in other orders" + where,
                   second);
    check_outcome(first, out, a == comm_algorithm::shm);
    check_outcome(second, out2, a == comm_algorithm::shm);
    check_usable(comm);

    // The root folds: let the operation throw there.
    std::vector<double> at_root(n);
    o = attempt([&] {
      auto request = comm.ireduce(send_buf(mine), recv_buf(at_root), thrower, root(bad), force_algorithm(a));
      request.wait();
    });
    faults::report("user op throws on late (the root)", "comm ireduce + wait" + where, o);
    {
      int threw = o.kind == "domain_error" ? 1 : 0, any = 0;
      MPI_Allreduce(&threw, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (a == comm_algorithm::shm) CHECK(any == 1);
      if (any == 1 && me == bad) expect(o, "domain_error", "throwing_sum: refused on rank");
      if (any == 1 && me != bad)
        expect(o, "error", "rank " + std::to_string(bad) + " raised an error during the reduction");
      if (any == 0) expect(o, "none");
    }
    check_usable(comm);
  }
}

// Argument errors that only one rank can see (the root's buffers and counts lists), counts that
// differ between ranks, and a user's reduction operation that throws: with the default
// argument_check::consistent every rank raises instead of waiting, and the next collective on
// the same communicator works (checked element by element against MPI's own call).
#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

namespace {

communicator_options with_checks(argument_check checks, bool shared_memory = true,
                                 device_buffer_path path = device_buffer_path::automatic) {
  communicator_options o = options_with(path, shared_memory, staged_chunk_bytes());
  o.argument_checks = checks;
  return o;
}

// The default checks on every route of the root's verdict: the root's shared-memory slot, a
// message (no shared memory), and chunks staged through host buffers (256 bytes per rank).
std::vector<comm_case>& consistent_cases() {
  static std::unique_ptr<std::vector<comm_case>> cases;
  return until_finalize(cases, [] {
    std::vector<comm_case> c;
    c.push_back({"consistent, shared memory", communicator(with_checks(argument_check::consistent))});
    c.push_back({"consistent, no shared memory", communicator(with_checks(argument_check::consistent, false))});
    c.push_back({"consistent, staged",
                 communicator(with_checks(argument_check::consistent, true, device_buffer_path::staged))});
    return c;
  });
}

// `call` must raise invalid_argument on every rank: on rank `culprit` (the root unless
// `rooted` is false) with its own message `own`, on the others naming it and carrying `reason`
// (its message without its prefix).
template <class Call>
void check_root_rejection(const communicator& comm, int culprit, std::string_view name, Call&& call,
                          const std::string& own, const std::string& reason, bool rooted = true) {
  try {
    call();
    FAIL("no error was raised on rank " << comm.rank());
  } catch (const invalid_argument& e) {
    const std::string what = e.what();
    INFO("rank " << comm.rank() << ": " << what);
    if (comm.rank() == culprit) {
      CHECK(what.find(own) != std::string::npos);
    } else {
      CHECK(what.find(std::string(name) + ": rank " + std::to_string(culprit) + (rooted ? " (the root)" : "") +
                      " rejected its arguments: ") != std::string::npos);
      CHECK(what.find(reason) != std::string::npos);
    }
  }
}

std::string count_text(std::size_t held, std::size_t needed) {
  return "holds " + std::to_string(held) + " element(s) but " + std::to_string(needed) + " are needed";
}

void gather_round(communicator& comm, int to, comm_algorithm a, std::size_t n, std::uint64_t stream) {
  const auto p = static_cast<std::size_t>(comm.size());
  const bool at_root = comm.rank() == to;
  const auto mine = values_of<double>(stream, comm.rank(), n);
  std::vector<double> small(p * n - 1), all(p * n, -1.0), expected(at_root ? p * n : 0);
  check_root_rejection(
      comm, to, "gather",
      [&] { comm.gather(send_buf(mine), recv_buf(at_root ? small : all), root(to), force_algorithm(a)); },
      "gather: recv_buf " + count_text(p * n - 1, p * n), "recv_buf " + count_text(p * n - 1, p * n));
  MPI_Request r;
  MPI_Igather(mine.data(), static_cast<int>(n), MPI_DOUBLE, expected.data(), static_cast<int>(n), MPI_DOUBLE, to,
              MPI_COMM_WORLD, &r);
  polite_wait(r);
  comm.gather(send_buf(mine), recv_buf(all), root(to), force_algorithm(a));
  if (at_root) check_equal(as_span(all), as_span(expected), "gather after a rejected gather");
}

void gatherv_round(communicator& comm, int to, comm_algorithm a, std::uint64_t stream) {
  const auto p = static_cast<std::size_t>(comm.size());
  const bool at_root = comm.rank() == to;
  const v_layout l = random_layout(stream, comm.size(), sizeof(double));
  const auto me = static_cast<std::size_t>(comm.rank());
  const auto mine = values_of<double>(stream, comm.rank(), static_cast<std::size_t>(l.counts[me]));
  std::vector<int> too_many(l.counts);
  too_many.push_back(1);
  std::vector<double> all(l.extent + 1, -1.0), expected(at_root ? l.extent + 1 : 0, -1.0);
  const std::string why = "recv_counts holds " + std::to_string(p + 1) + " value(s); one per rank (" +
                          std::to_string(p) + ") is needed";
  check_root_rejection(
      comm, to, "gatherv",
      [&] {
        comm.gather(send_buf(mine), recv_buf(all), recv_counts(at_root ? too_many : l.counts),
                    recv_displs(l.displs), root(to), force_algorithm(a));
      },
      "gatherv: " + why, why);
  MPI_Request r;
  MPI_Igatherv(mine.data(), l.counts[me], MPI_DOUBLE, expected.data(), l.counts.data(), l.displs.data(),
               MPI_DOUBLE, to, MPI_COMM_WORLD, &r);
  polite_wait(r);
  comm.gather(send_buf(mine), recv_buf(all), recv_counts(l.counts), recv_displs(l.displs), root(to),
              force_algorithm(a));
  if (at_root) check_equal(as_span(all), as_span(expected), "gatherv after a rejected gatherv");
}

void scatter_round(communicator& comm, int to, comm_algorithm a, std::size_t n, std::uint64_t stream) {
  const auto p = static_cast<std::size_t>(comm.size());
  const bool at_root = comm.rank() == to;
  const auto all = values_of<double>(stream, to, p * n);  // the root's data, drawn alike everywhere
  const std::vector<double> small(p * n - 1);
  std::vector<double> mine(n, -1.0), expected(n);
  check_root_rejection(
      comm, to, "scatter",
      [&] { comm.scatter(send_buf(at_root ? small : all), recv_buf(mine), root(to), force_algorithm(a)); },
      "scatter: send_buf " + count_text(p * n - 1, p * n), "send_buf " + count_text(p * n - 1, p * n));
  MPI_Request r;
  MPI_Iscatter(all.data(), static_cast<int>(n), MPI_DOUBLE, expected.data(), static_cast<int>(n), MPI_DOUBLE, to,
               MPI_COMM_WORLD, &r);
  polite_wait(r);
  comm.scatter(send_buf(all), recv_buf(mine), root(to), force_algorithm(a));
  check_equal(as_span(mine), as_span(expected), "scatter after a rejected scatter");
}

void scatterv_round(communicator& comm, int to, comm_algorithm a, std::uint64_t stream) {
  const auto p = static_cast<std::size_t>(comm.size());
  const bool at_root = comm.rank() == to;
  const v_layout l = random_layout(stream, comm.size(), sizeof(double));
  const auto me = static_cast<std::size_t>(comm.rank());
  const auto all = values_of<double>(stream, to, l.extent);
  std::vector<int> too_many(l.counts);
  too_many.push_back(1);
  std::vector<double> mine(static_cast<std::size_t>(l.counts[me]), -1.0), expected(mine.size());
  const std::string why = "send_counts holds " + std::to_string(p + 1) + " value(s); one per rank (" +
                          std::to_string(p) + ") is needed";
  check_root_rejection(
      comm, to, "scatterv",
      [&] {
        comm.scatter(send_buf(all), send_counts(at_root ? too_many : l.counts), send_displs(l.displs),
                     recv_buf(mine), root(to), force_algorithm(a));
      },
      "scatterv: " + why, why);
  MPI_Request r;
  MPI_Iscatterv(all.data(), l.counts.data(), l.displs.data(), MPI_DOUBLE, expected.data(), l.counts[me],
                MPI_DOUBLE, to, MPI_COMM_WORLD, &r);
  polite_wait(r);
  comm.scatter(send_buf(all), send_counts(l.counts), send_displs(l.displs), recv_buf(mine), root(to),
               force_algorithm(a));
  check_equal(as_span(mine), as_span(expected), "scatterv after a rejected scatterv");
}

void reduce_round(communicator& comm, int to, comm_algorithm a, std::size_t n, std::uint64_t stream) {
  const bool at_root = comm.rank() == to;
  const auto mine = values_of<double>(stream, comm.rank(), n);
  std::vector<double> small(n - 1), out(n, -1.0), expected(n);
  check_root_rejection(
      comm, to, "reduce",
      [&] {
        comm.reduce(send_buf(mine), recv_buf(at_root ? small : out), op(ops::sum{}), root(to), force_algorithm(a));
      },
      "reduce: recv_buf " + count_text(n - 1, n), "recv_buf " + count_text(n - 1, n));
  MPI_Request r;
  MPI_Ireduce(mine.data(), expected.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, to, MPI_COMM_WORLD, &r);
  polite_wait(r);
  comm.reduce(send_buf(mine), recv_buf(out), op(ops::sum{}), root(to), force_algorithm(a));
  if (at_root) check_equal(as_span(out), as_span(expected), "reduce after a rejected reduce");
}

void broadcast_round(communicator& comm, int to, comm_algorithm a, std::size_t n, std::uint64_t stream) {
  const bool at_root = comm.rank() == to;
  // The root passes a column of a matrix: not contiguous. The others' Views are.
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> matrix("matrix", n, 2);
  Kokkos::View<double*, Kokkos::HostSpace> data("data", n);
  try {
    if (at_root)
      comm.broadcast(send_recv_buf(Kokkos::subview(matrix, Kokkos::ALL, 1)), root(to), force_algorithm(a));
    else
      comm.broadcast(send_recv_buf(data), root(to), force_algorithm(a));
    FAIL("no error was raised on rank " << comm.rank());
  } catch (const invalid_argument& e) {
    const std::string what = e.what();
    INFO("rank " << comm.rank() << ": " << what);
    CHECK(what.find("is not contiguous") != std::string::npos);
    if (!at_root)
      CHECK(what.find("broadcast: rank " + std::to_string(to) +
                      " (the root) rejected its arguments: send_recv_buf") != std::string::npos);
  }
  std::vector<double> values = at_root ? values_of<double>(stream, to, n) : std::vector<double>(n, -1.0);
  std::vector<double> expected = values;
  MPI_Request r;
  MPI_Ibcast(expected.data(), static_cast<int>(n), MPI_DOUBLE, to, MPI_COMM_WORLD, &r);
  polite_wait(r);
  comm.broadcast(send_recv_buf(values), root(to), force_algorithm(a));
  check_equal(as_span(values), as_span(expected), "broadcast after a rejected broadcast");
}

// The algorithms of `c` that can run on `comm` for `bytes` per rank.
std::vector<comm_algorithm> runnable_algorithms(const communicator& comm, collective c, std::size_t bytes,
                                                bool regroups_exactly = true) {
  std::vector<comm_algorithm> out;
  for (comm_algorithm a : algorithms_of(c))
    if (runnable(comm, c, a, bytes, true, regroups_exactly)) out.push_back(a);
  return out;
}

}  // namespace

TEST_CASE("the default argument checks are consistent", "[comm][arguments]") {
  CHECK(communicator_options{}.argument_checks == argument_check::consistent);
  CHECK(default_comm().options().argument_checks == argument_check::consistent);
}

TEST_CASE("a root-only argument error raises on every rank, for every rooted collective, root and algorithm",
          "[comm][arguments][errors]") {
  auto gen = rng(1601);
  for (auto& [name, comm] : consistent_cases()) {
    INFO("communicator: " << name);
    for (int to = 0; to < comm.size(); ++to) {
      INFO("root " << to);
      // Small blocks (the shared-memory path) and blocks past the window (MPI's call or ours).
      for (const std::size_t n : {std::size_t{1} + gen() % 40, std::size_t{9000} + gen() % 100}) {
        const auto stream = gen();
        INFO("n = " << n);
        for (comm_algorithm a :
             runnable_algorithms(comm, collective::gather, n * 8 * static_cast<std::size_t>(comm.size()))) {
          INFO("gather, algorithm " << to_string(a));
          gather_round(comm, to, a, n, stream);
        }
        for (comm_algorithm a :
             runnable_algorithms(comm, collective::scatter, n * 8 * static_cast<std::size_t>(comm.size()))) {
          INFO("scatter, algorithm " << to_string(a));
          scatter_round(comm, to, a, n, stream);
        }
        for (comm_algorithm a : runnable_algorithms(comm, collective::reduce, n * 8)) {
          INFO("reduce, algorithm " << to_string(a));
          reduce_round(comm, to, a, n, stream);
        }
        for (comm_algorithm a : runnable_algorithms(comm, collective::broadcast, n * 8)) {
          INFO("broadcast, algorithm " << to_string(a));
          broadcast_round(comm, to, a, n, stream);
        }
      }
      const auto stream = gen();
      for (comm_algorithm a : runnable_algorithms(comm, collective::gatherv, 0)) {
        INFO("gatherv, algorithm " << to_string(a));
        gatherv_round(comm, to, a, stream);
      }
      for (comm_algorithm a : runnable_algorithms(comm, collective::scatterv, 0)) {
        INFO("scatterv, algorithm " << to_string(a));
        scatterv_round(comm, to, a, stream);
      }
    }
  }
}

TEST_CASE("a root-only error of gatherv whose counts are gathered first raises on every rank",
          "[comm][arguments][errors]") {
  for (auto& [name, comm] : consistent_cases()) {
    INFO("communicator: " << name);
    const auto p = static_cast<std::size_t>(comm.size());
    for (int to = 0; to < comm.size(); ++to) {
      const std::vector<double> mine(static_cast<std::size_t>(comm.rank() + 1), comm.rank());
      const std::size_t total = p * (p + 1) / 2;
      std::vector<double> small(total - 1), all(total);
      check_root_rejection(
          comm, to, "gatherv",
          [&] { comm.gatherv(send_buf(mine), recv_buf(comm.rank() == to ? small : all), root(to)); },
          "gatherv: recv_buf " + count_text(total - 1, total), "recv_buf " + count_text(total - 1, total));
      const std::vector<double> got = comm.gatherv(send_buf(mine), root(to));
      std::vector<double> expected;
      for (std::size_t r = 0; comm.rank() == to && r < p; ++r) expected.insert(expected.end(), r + 1, double(r));
      CHECK(got == expected);
    }
  }
}

TEST_CASE("one rank's argument error in allreduce or allgather raises on every rank on the shared-memory path",
          "[comm][arguments][errors]") {
  communicator& comm = consistent_cases().front().comm;
  const auto p = static_cast<std::size_t>(comm.size());
  auto gen = rng(1603);
  for (int bad = 0; bad < comm.size(); ++bad) {
    INFO("rank " << bad << " rejects its arguments");
    const std::size_t n = 1 + gen() % 40;
    const auto x = values_of<double>(gen(), comm.rank(), n);
    std::vector<double> small(n - 1), out(n, -1.0), expected(n);
    check_root_rejection(
        comm, bad, "allreduce",
        [&] { comm.allreduce(send_buf(x), recv_buf(comm.rank() == bad ? small : out), op(ops::sum{})); },
        "allreduce: recv_buf " + count_text(n - 1, n), "recv_buf " + count_text(n - 1, n), false);
    MPI_Request r;
    MPI_Iallreduce(x.data(), expected.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    polite_wait(r);
    comm.allreduce(send_buf(x), recv_buf(out), op(ops::sum{}));
    check_equal(as_span(out), as_span(expected), "allreduce after a rejected allreduce");

    std::vector<double> all_small(p * n - 1), all(p * n, -1.0), all_expected(p * n);
    check_root_rejection(
        comm, bad, "allgather",
        [&] { comm.allgather(send_buf(x), recv_buf(comm.rank() == bad ? all_small : all)); },
        "allgather: recv_buf " + count_text(p * n - 1, p * n), "recv_buf " + count_text(p * n - 1, p * n), false);
    MPI_Iallgather(x.data(), static_cast<int>(n), MPI_DOUBLE, all_expected.data(), static_cast<int>(n), MPI_DOUBLE,
                   MPI_COMM_WORLD, &r);
    polite_wait(r);
    comm.allgather(send_buf(x), recv_buf(all));
    check_equal(as_span(all), as_span(all_expected), "allgather after a rejected allgather");
  }
  // Above the window (MPI's call) the ranks that did not reject would wait for the one that did,
  // so only an error of every rank is tried there: it raises everywhere and leaves the op
  // numbers in step for the shared-memory calls that follow.
  const std::size_t big = 20000;
  const std::vector<double> y(big, 1.0);
  std::vector<double> too_small(big - 1);
  CHECK_THROWS_WITH(comm.allreduce(send_buf(y), recv_buf(too_small), op(ops::sum{})),
                    ContainsSubstring("allreduce: recv_buf " + count_text(big - 1, big)));
  CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());
}

TEST_CASE("counts that differ from the root's raise on every rank on the shared-memory path",
          "[comm][arguments][errors]") {
  communicator& comm = consistent_cases().front().comm;
  if (comm.size() < 2) return;
  for (int to = 0; to < comm.size(); ++to) {
    const std::size_t n = comm.rank() == to ? 5 : 4;  // the root's count differs from every other rank's
    const std::vector<int> mine(n, comm.rank());
    std::vector<int> all(5 * static_cast<std::size_t>(comm.size()));
    CHECK_THROWS_WITH(comm.gather(send_buf(mine), recv_buf(all), root(to)),
                      ContainsSubstring("the ranks passed different counts"));
    std::vector<int> out(5);
    CHECK_THROWS_WITH(comm.reduce(send_buf(mine), recv_buf(out), op(ops::sum{}), root(to)),
                      ContainsSubstring("the ranks passed different counts"));
    CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());  // still usable
  }
  // MPI's path finds them with full checks (one small allreduce first), on every rank.
  communicator full(with_checks(argument_check::full));
  const std::vector<int> uneven(static_cast<std::size_t>(3 + full.rank()));
  std::vector<int> all(8 * static_cast<std::size_t>(full.size()));
  CHECK_THROWS_WITH(full.gather(send_buf(uneven), recv_buf(all), force_algorithm(comm_algorithm::mpi)),
                    ContainsSubstring("the ranks passed different counts (from 3 to"));
  CHECK(full.allreduce(send_buf(1), op(ops::sum{})) == full.size());
}

// Before, the root of a shared-memory broadcast or scatter whose other ranks raised (another
// count) returned normally and went on alone; now its next call raises, naming a rank that
// raised, before it moves data, and the communicator stays usable.
TEST_CASE("the root of a broadcast or scatter whose other ranks raised raises at its next call",
          "[comm][arguments][errors]") {
  communicator& comm = consistent_cases().front().comm;
  if (comm.size() < 2 || !comm.has_shared_memory()) SKIP("needs 2 ranks or more on one node");
  const auto p = static_cast<std::size_t>(comm.size());
  const auto root_hears = [&](int to, const char* what, auto&& call) {
    INFO(what << ", root " << to);
    if (comm.rank() == to) {
      CHECK_NOTHROW(call());
      CHECK_THROWS_WITH(comm.barrier(), ContainsSubstring("raised hetero::error in this communicator's previous " +
                                                          std::string(what)));
    } else {
      CHECK_THROWS_AS(call(), invalid_argument);
    }
    CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());  // still usable, every rank
  };
  for (int to = 0; to < comm.size(); ++to) {
    const std::size_t n = comm.rank() == to ? 4 : 5;  // the root's count differs from every other rank's
    std::vector<int> v(n);
    root_hears(to, "broadcast", [&] { comm.broadcast(send_recv_buf(v), root(to)); });
    root_hears(to, "broadcast", [&] { comm.ibroadcast(send_recv_buf(v), root(to)).wait(); });
    std::vector<int> all(n * p), mine(n);
    root_hears(to, "scatter", [&] { comm.scatter(send_buf(all), recv_buf(mine), root(to)); });
    std::vector<int> counts(p, 4);
    std::vector<int> block(comm.rank() == to ? 4 : 3);
    root_hears(to, "scatterv",
               [&] { comm.scatterv(send_buf(all), send_counts(counts), recv_buf(block), root(to)); });
  }
  // Ranks that agree: no one raises, and the root's next call does not wait for a late reader.
  std::vector<int> v(4, comm.rank());
  comm.broadcast(send_recv_buf(v), root(0));
  CHECK(v == std::vector<int>(4, 0));
  CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());
}

namespace {

// a + b, except on rank `bad_rank`, where it throws (a user's operation with state).
struct throwing_sum {
  int bad_rank;
  int my_rank;
  double operator()(double a, double b) const {
    if (my_rank == bad_rank) throw std::domain_error("throwing_sum: refused on rank " + std::to_string(my_rank));
    return a + b;
  }
};

// Runs `call` (a reduction with throwing_sum) and checks the outcome on every rank: either no
// rank's operation threw and every rank has MPI's result, or `bad` got its own exception back
// and every other rank a hetero::error naming it. Returns whether the operation threw.
template <class Call>
bool check_user_exception(const communicator& comm, int bad, Call&& call) {
  int threw = 0, failed = 0;
  try {
    call();
  } catch (const std::domain_error& e) {
    threw = 1;
    CHECK(comm.rank() == bad);
    CHECK_THAT(e.what(), ContainsSubstring("throwing_sum: refused on rank"));
  } catch (const hetero::error& e) {
    failed = 1;
    CHECK_THAT(e.what(),
               ContainsSubstring("rank " + std::to_string(bad) + " raised an error during the reduction"));
  }
  int outcome[2] = {threw, failed}, any[2] = {0, 0};
  MPI_Request r;
  MPI_Iallreduce(outcome, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r);
  polite_wait(r);
  if (any[0] == 1) CHECK(threw + failed == 1);  // the operation threw somewhere: every rank raised
  if (any[0] == 0) CHECK(failed == 0);
  return any[0] == 1;
}

}  // namespace

TEST_CASE("a user's reduction operation that throws raises on every rank; the communicator stays usable",
          "[comm][arguments][errors]") {
  for (auto& [name, comm] : consistent_cases()) {
    INFO("communicator: " << name);
    const int p = comm.size();
    auto gen = rng(1602);
    for (int bad = 0; bad < p; ++bad) {
      for (comm_algorithm a : runnable_algorithms(comm, collective::allreduce, 8 * 16, false)) {  // a user's sum
        INFO("allreduce, algorithm " << to_string(a) << ", throwing on rank " << bad);
        const std::size_t n = 1 + gen() % 16;
        const auto x = values_of<double>(gen(), comm.rank(), n);
        std::vector<double> out(n), expected(n);
        MPI_Request r;
        MPI_Iallreduce(x.data(), expected.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        polite_wait(r);
        const bool threw = check_user_exception(comm, bad, [&] {
          comm.allreduce(send_buf(x), recv_buf(out), op(throwing_sum{bad, comm.rank()}, ops::commutative),
                         force_algorithm(a));
          check_equal(as_span(out), as_span(expected), "allreduce whose operation did not throw");
        });
        // Every rank folds on the shared-memory path: the operation must have thrown there.
        if (p > 1 && a == comm_algorithm::shm) CHECK(threw);
        if (p == 1) CHECK_FALSE(threw);                           // one operand: the operation is never called
        CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == p);  // still usable
      }
      for (int to = 0; to < p; ++to) {
        for (comm_algorithm a : runnable_algorithms(comm, collective::reduce, 8 * 16)) {
          INFO("reduce to " << to << ", algorithm " << to_string(a) << ", throwing on rank " << bad);
          const std::size_t n = 1 + gen() % 16;
          const auto x = values_of<double>(gen(), comm.rank(), n);
          std::vector<double> out(n), expected(n);
          MPI_Request r;
          MPI_Ireduce(x.data(), expected.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, to, MPI_COMM_WORLD, &r);
          polite_wait(r);
          const bool threw = check_user_exception(comm, bad, [&] {
            comm.reduce(send_buf(x), recv_buf(out), op(throwing_sum{bad, comm.rank()}, ops::commutative), root(to),
                        force_algorithm(a));
            if (comm.rank() == to)
              check_equal(as_span(out), as_span(expected), "reduce whose operation did not throw");
          });
          // The root folds every vector on the shared-memory path.
          if (p > 1 && a == comm_algorithm::shm && bad == to) CHECK(threw);
          CHECK(comm.reduce(send_buf(1), op(ops::sum{}), root(to)) == (comm.rank() == to ? p : 0));
        }
      }
    }
  }
}

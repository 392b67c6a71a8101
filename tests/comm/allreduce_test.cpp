// allreduce and iallreduce against a serial fold of every rank's inputs (never MPI's own result:
// MPI can be wrong), for every algorithm, buffer path, random sizes (0 included), in place and not.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "comm_test_support.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace hetero;
using namespace hetero::testing;

namespace {

// The inputs of rank `rank`: values_of's, except for products on more than 4 ranks, whose
// result must stay exact in any order of the ranks. There int inputs lie in [-m, m] with
// m^ranks <= 2^30 (no signed overflow), complex ones have both parts in [-m, m] with
// (m sqrt 2)^ranks <= 2^52 (every partial product exact in double). values_of's inputs (int
// 0-99, complex parts up to 100) hold that up to 4 ranks; tools/nodes/scale.sh runs this test on
// 16 and 32, where a complex product of 16 ranks' inputs reached 1e34 and its rounding
// depended on the order.
template <class T, class Op>
std::vector<T> inputs_of(std::uint64_t stream, int rank, int ranks, std::size_t n) {
  constexpr bool int_product = std::is_same_v<T, int> && std::is_same_v<Op, ops::prod>;
  constexpr bool complex_product = std::is_same_v<T, std::complex<double>> && std::is_same_v<Op, ops::prod>;
  if constexpr (int_product || complex_product) {
    if (ranks > 4) {
      const double limit = int_product ? 0x1p30 : 0x1p52;
      const double widest = std::pow(limit, 1.0 / ranks) / (complex_product ? std::sqrt(2.0) : 1.0);
      const auto m = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(widest)));
      auto gen = rng(stream * 1000 + static_cast<std::uint64_t>(rank));
      const auto part = [&] {
        return static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(2 * m + 1)) - m;
      };
      std::vector<T> v(n);
      for (auto& x : v) {
        if constexpr (complex_product)
          x = T(static_cast<double>(part()), static_cast<double>(part()));
        else
          x = static_cast<T>(part());
      }
      return v;
    }
  }
  return values_of<T>(stream, rank, n);
}

// Ours against a serial fold of every rank's inputs (never against MPI alone: MPI can be wrong),
// every algorithm, in place and not, blocking and not (iallreduce runs on shm or MPI's call).
template <class T, class Op>
void check_builtin(communicator& comm, std::uint64_t stream) {
  auto gen = rng(stream);
  for (comm_algorithm a : algorithms_of(collective::allreduce)) {
    for (int trial = 0; trial < 2; ++trial) {
      const std::size_t n = random_count(gen, sizeof(T));
      const bool in_place = gen() % 2 == 0;
      const bool nonblocking = a == comm_algorithm::automatic || a == comm_algorithm::mpi ? gen() % 2 == 0 : false;
      const std::uint64_t values = stream * 31 + static_cast<std::uint64_t>(trial);
      const auto inputs = [&](int r) { return inputs_of<T, Op>(values, r, comm.size(), n); };
      const auto mine = inputs(comm.rank());
      const auto expected = serial_fold_of(inputs, comm.size(), Op{});
      std::vector<T> got(n);
      INFO("algorithm " << to_string(a) << ", n = " << n << (in_place ? ", in place" : "")
                        << (nonblocking ? ", iallreduce" : ""));
      const auto run = [&] {
        if (in_place) {
          got = mine;
          if (nonblocking)
            comm.iallreduce(send_recv_buf(got), op(Op{}), force_algorithm(a)).wait();
          else
            comm.allreduce(send_recv_buf(got), op(Op{}), force_algorithm(a));
        } else if (nonblocking) {
          comm.iallreduce(send_buf(mine), recv_buf(got), op(Op{}), force_algorithm(a)).wait();
        } else {
          comm.allreduce(send_buf(mine), recv_buf(got), op(Op{}), force_algorithm(a));
        }
      };
      if (!runnable(comm, collective::allreduce, a, n * sizeof(T), true, std::is_integral_v<T>)) {
        if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
        continue;
      }
      run();
      check_equal(as_span(got), as_span(expected), "allreduce");
    }
  }
}

// A user functor, against a serial fold in rank order of every rank's inputs.
template <class T, class F, class Tag>
void check_against_serial(communicator& comm, std::uint64_t stream, bool commutative) {
  auto gen = rng(stream);
  for (comm_algorithm a : algorithms_of(collective::allreduce)) {
    const std::size_t n = random_count(gen, sizeof(T));
    const auto expected = serial_fold<T>(stream, comm.size(), n, F{});
    const auto mine = values_of<T>(stream, comm.rank(), n);
    std::vector<T> got(n);
    INFO("algorithm " << to_string(a) << ", n = " << n << (commutative ? "" : ", not commutative"));
    const auto run = [&] { comm.allreduce(send_buf(mine), recv_buf(got), op(F{}, Tag{}), force_algorithm(a)); };
    if (!runnable(comm, collective::allreduce, a, n * sizeof(T), commutative, false)) {
      if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
      continue;
    }
    run();
    check_equal(as_span(got), as_span(expected), "allreduce with a user functor");
  }
}

}  // namespace

TEMPLATE_TEST_CASE("allreduce equals a serial fold for every algorithm and buffer path", "[comm][allreduce]", int,
                   double, float, long long, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t) {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    check_builtin<TestType, ops::sum>(comm, 1);
    check_builtin<TestType, ops::max>(comm, 2);
    check_builtin<TestType, ops::min>(comm, 3);
  }
}

TEST_CASE("allreduce of products and of complex numbers equals a serial fold", "[comm][allreduce]") {
  communicator& comm = default_comm();
  check_builtin<int, ops::prod>(comm, 4);
  check_builtin<std::uint64_t, ops::prod>(comm, 10);
  check_builtin<std::complex<double>, ops::sum>(comm, 5);
  check_builtin<std::complex<double>, ops::prod>(comm, 6);
}

// MPICH 4.0.2 compares unsigned integers as signed in MPI_MIN/MPI_MAX: on MPI's path (forced, or
// chosen from 64 KiB up), every form must still give the unsigned order.
TEMPLATE_TEST_CASE("allreduce and iallreduce of unsigned integers on MPI's path keep the unsigned order",
                   "[comm][allreduce]", std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t) {
  communicator& comm = default_comm();
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{65537}}) {
    for (int form = 0; form < 4; ++form) {
      const bool use_max = form % 2 == 1, in_place = form >= 2;
      const std::uint64_t stream = 20 + n + static_cast<std::uint64_t>(form);
      const auto mine = values_of<TestType>(stream, comm.rank(), n);
      const auto expected = use_max ? serial_fold<TestType>(stream, comm.size(), n, ops::max{})
                                    : serial_fold<TestType>(stream, comm.size(), n, ops::min{});
      for (comm_algorithm a : {comm_algorithm::mpi, comm_algorithm::automatic}) {
        INFO("n = " << n << (use_max ? ", max" : ", min") << (in_place ? ", in place" : "") << ", "
                    << to_string(a));
        std::vector<TestType> got = mine, igot = mine;
        if (in_place) {
          if (use_max) {
            comm.allreduce(send_recv_buf(got), op(ops::max{}), force_algorithm(a));
            comm.iallreduce(send_recv_buf(igot), op(ops::max{}), force_algorithm(a)).wait();
          } else {
            comm.allreduce(send_recv_buf(got), op(ops::min{}), force_algorithm(a));
            comm.iallreduce(send_recv_buf(igot), op(ops::min{}), force_algorithm(a)).wait();
          }
        } else if (use_max) {
          got = comm.allreduce(send_buf(mine), op(ops::max{}), force_algorithm(a));
          comm.iallreduce(send_buf(mine), recv_buf(igot), op(ops::max{}), force_algorithm(a)).wait();
        } else {
          got = comm.allreduce(send_buf(mine), op(ops::min{}), force_algorithm(a));
          comm.iallreduce(send_buf(mine), recv_buf(igot), op(ops::min{}), force_algorithm(a)).wait();
        }
        check_equal(as_span(got), as_span(expected), "allreduce");
        check_equal(as_span(igot), as_span(expected), "iallreduce");
      }
    }
  }
}

TEST_CASE("allreduce with user functors keeps rank order", "[comm][allreduce]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    check_against_serial<pair_value, pair_max, ops::commutative_t>(comm, 7, true);
    check_against_serial<matrix2, matrix_product, ops::non_commutative_t>(comm, 8, false);
  }
}

// ops::prod on a class whose * does not commute: taken as commutative on every type before, it
// gave M1 M0 for M0 M1 on the ring, and MPI's call was told it may reorder. Numbers and complex
// numbers still reorder; a class only when tagged.
TEST_CASE("ops::prod of 2x2 matrices keeps rank order for every algorithm", "[comm][allreduce]") {
  using hetero::detail::commutative_for;
  using hetero::detail::reduction;
  STATIC_REQUIRE_FALSE(commutative_for<reduction<ops::prod, true>, matrix2>);
  STATIC_REQUIRE_FALSE(commutative_for<reduction<ops::sum, true>, const matrix2>);
  STATIC_REQUIRE(commutative_for<reduction<ops::prod, true, true>, matrix2>);  // op(ops::prod{}, ops::commutative)
  STATIC_REQUIRE_FALSE(commutative_for<reduction<ops::prod, false, true>, double>);  // ops::non_commutative
  STATIC_REQUIRE(commutative_for<reduction<ops::prod, true>, std::complex<double>>);
  STATIC_REQUIRE(commutative_for<reduction<ops::sum, true>, Kokkos::complex<float>>);
  STATIC_REQUIRE(commutative_for<reduction<ops::sum, true>, const std::int32_t>);
  auto gen = rng(36);
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (comm_algorithm a : algorithms_of(collective::allreduce)) {
      const std::size_t n = random_count(gen, sizeof(matrix2));
      const std::uint64_t stream = gen();
      const auto expected = serial_fold<matrix2>(stream, comm.size(), n, matrix_product{});
      const auto mine = values_of<matrix2>(stream, comm.rank(), n);
      std::vector<matrix2> got(n);
      INFO("algorithm " << to_string(a) << ", n = " << n);
      const auto run = [&] { comm.allreduce(send_buf(mine), recv_buf(got), op(ops::prod{}), force_algorithm(a)); };
      if (!runnable(comm, collective::allreduce, a, n * sizeof(matrix2), false, false)) {
        if (n > 0) CHECK_THROWS_AS(run(), invalid_argument);
        continue;
      }
      run();
      check_equal(as_span(got), as_span(expected), "allreduce of ops::prod on 2x2 matrices");
    }
  }
}

namespace {

// Elements of 24 and 20 bytes: sizes that divide neither the agreement's slot by message (1088
// bytes) nor a node window's (8256), where a few of them travel inline with the agreement.
struct triple {
  double x, y, z;
  friend bool operator==(const triple&, const triple&) = default;
  KOKKOS_INLINE_FUNCTION friend triple operator+(const triple& a, const triple& b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
  }
};
struct five_floats {
  float v[5];
  friend bool operator==(const five_floats&, const five_floats&) = default;
  KOKKOS_INLINE_FUNCTION friend five_floats operator+(const five_floats& a, const five_floats& b) {
    five_floats c{};
    for (int i = 0; i < 5; ++i) c.v[i] = a.v[i] + b.v[i];
    return c;
  }
};

template <class T>
std::vector<T> odd_sized_values(std::uint64_t stream, int rank, std::size_t n) {
  auto gen = rng(stream * 1000 + static_cast<std::uint64_t>(rank));
  const auto small = [&] { return static_cast<double>(static_cast<int>(gen() % 2001) - 1000); };  // exact sums
  std::vector<T> v(n);
  for (auto& e : v) {
    if constexpr (std::is_same_v<T, triple>) {
      e = {small(), small(), small()};
    } else {
      for (float& f : e.v) f = static_cast<float>(small());
    }
  }
  return v;
}

template <class T>
void check_odd_sized(communicator& comm, std::uint64_t stream) {
  const int p = comm.size();
  for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{40}, std::size_t{500}}) {
    const auto mine = odd_sized_values<T>(stream + n, comm.rank(), n);
    const auto expected = serial_fold_of([&](int r) { return odd_sized_values<T>(stream + n, r, n); }, p,
                                         [](const T& a, const T& b) { return a + b; });
    INFO("n = " << n << ", " << sizeof(T) << "-byte elements");
    const std::vector<T> got = comm.allreduce(send_buf(mine), op(ops::sum{}));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] == expected[i] ? 0 : 1;
    CHECK(wrong == 0);
    std::vector<T> at_root(n);
    comm.reduce(send_buf(mine), recv_buf(at_root), op(ops::sum{}), root(p - 1));
    wrong = 0;
    for (std::size_t i = 0; comm.rank() == p - 1 && i < n; ++i) wrong += at_root[i] == expected[i] ? 0 : 1;
    CHECK(wrong == 0);
  }
}

// Ordered by its value alone: equal values with different ranks are not the same element.
struct ranked_value {
  double value;
  std::int64_t rank;
  KOKKOS_INLINE_FUNCTION friend bool operator<(const ranked_value& a, const ranked_value& b) {
    return a.value < b.value;
  }
};

}  // namespace

TEST_CASE("min and max of elements equal by their order but not the same keep rank order on every rank",
          "[comm][allreduce]") {
  // ops::min keeps a of two equal operands: the lowest rank's element, on every rank. Taken as
  // commutative, MPI's call and the reordering algorithms gave other ranks' elements on some ranks.
  auto gen = rng(33);
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (std::size_t n : {std::size_t{1}, std::size_t{64}, std::size_t{12000}}) {  // 12000: 188 KiB, MPI's call
      const double v = static_cast<double>(gen() % 1000);
      std::vector<ranked_value> mine(n, ranked_value{v, comm.rank()});
      for (int use_max = 0; use_max < 2; ++use_max) {
        INFO("n = " << n << (use_max ? ", max" : ", min"));
        const std::vector<ranked_value> got = use_max ? comm.allreduce(send_buf(mine), op(ops::max{}))
                                                      : comm.allreduce(send_buf(mine), op(ops::min{}));
        std::size_t other = 0;
        for (const auto& e : got) other += e.rank == 0 && e.value == v ? 0 : 1;
        CHECK(other == 0);
        std::vector<ranked_value> at_root(n);
        if (use_max)
          comm.reduce(send_buf(mine), recv_buf(at_root), op(ops::max{}), root(comm.size() - 1));
        else
          comm.reduce(send_buf(mine), recv_buf(at_root), op(ops::min{}), root(comm.size() - 1));
        other = 0;
        for (std::size_t i = 0; comm.rank() == comm.size() - 1 && i < n; ++i)
          other += at_root[i].rank == 0 ? 0 : 1;
        CHECK(other == 0);
      }
    }
  }
}

// Two enumerators that compare equal are the same value: min and max may take them in any
// order. Before, only arithmetic types could, and ring or recursive_halving forced on an enum
// was refused as not commutative.
namespace {
enum class level : std::int32_t { low = -3, mid = 0, high = 7 };
}  // namespace

TEST_CASE("min and max of enumerations take their operands in any order", "[comm][allreduce]") {
  STATIC_REQUIRE(hetero::detail::commutative_for<hetero::detail::reduction<ops::min, true>, level>);
  STATIC_REQUIRE(hetero::detail::commutative_for<hetero::detail::reduction<ops::max, true>, const level>);
  STATIC_REQUIRE(
      hetero::detail::commutative_for<hetero::detail::reduction<ops::max, true>, Kokkos::Experimental::half_t>);
  STATIC_REQUIRE_FALSE(hetero::detail::commutative_for<hetero::detail::reduction<ops::min, true>, ranked_value>);
  // op(ops::min{}, ops::commutative): the user says any of the equal ones will do.
  STATIC_REQUIRE(hetero::detail::commutative_for<hetero::detail::reduction<ops::min, true, true>, ranked_value>);
  STATIC_REQUIRE_FALSE(hetero::detail::commutative_for<hetero::detail::reduction<ops::max, false, true>, level>);
  auto gen = rng(35);
  constexpr level levels[] = {level::low, level::mid, level::high};
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    for (comm_algorithm a : algorithms_of(collective::allreduce)) {
      const std::size_t n = 1 + gen() % 64;
      const std::uint64_t salt = gen();
      const auto inputs = [&](int r) {
        std::vector<level> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = levels[(salt + static_cast<std::uint64_t>(r) * 7 + i * 5) % 3];
        return v;
      };
      std::vector<level> expected = inputs(0);  // a serial fold, in rank order
      for (int r = 1; r < comm.size(); ++r) {
        const auto x = inputs(r);
        for (std::size_t i = 0; i < n; ++i) expected[i] = std::min(expected[i], x[i]);
      }
      if (!runnable(comm, collective::allreduce, a, n * sizeof(level), true, false)) continue;
      INFO("algorithm " << to_string(a) << ", n = " << n);
      const auto mine = inputs(comm.rank());
      std::vector<level> got(n);
      comm.allreduce(send_buf(mine), recv_buf(got), op(ops::min{}), force_algorithm(a));
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += got[i] == expected[i] ? 0 : 1;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("allreduce and reduce of elements whose size does not divide the agreement's slot",
          "[comm][allreduce]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    check_odd_sized<triple>(comm, 30);
    check_odd_sized<five_floats>(comm, 31);
  }
}

using execution_spaces = std::tuple<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;

TEMPLATE_LIST_TEST_CASE("allreduce on Views of every execution space, and its result forms", "[comm][allreduce]",
                        execution_spaces) {
  using space = typename TestType::memory_space;
  communicator& comm = default_comm();
  const int p = comm.size();
  for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{5000}}) {
    Kokkos::View<double*, space> x("x", n), y("y", n);
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<TestType>(0, n),
        KOKKOS_LAMBDA(std::size_t i) { x(i) = static_cast<double>(i + 1); });
    Kokkos::fence();
    comm.allreduce(send_buf(x), recv_buf(y), op(ops::sum{}));
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
      wrong += h(i) != static_cast<double>((i + 1) * static_cast<std::size_t>(p));
    CHECK(wrong == 0);
    auto z = comm.allreduce(send_buf(x), op(ops::max{}));
    static_assert(std::is_same_v<decltype(z), Kokkos::View<double*, space>>);
    CHECK(z.extent(0) == n);
  }
  const double total = comm.allreduce(send_buf(1.5), op(ops::sum{}));
  CHECK(total == 1.5 * p);
  const std::vector<int> ranks{comm.rank(), -comm.rank()};
  const std::vector<int> largest = comm.allreduce(send_buf(ranks), op(ops::max{}));
  CHECK(largest == std::vector<int>{p - 1, 0});
}

TEST_CASE("iallreduce completes in order, by test() or wait(), several at once", "[comm][allreduce]") {
  for (auto& [name, comm] : comm_cases()) {
    INFO("communicator: " << name);
    auto gen = rng(9);
    constexpr int outstanding = 5;
    std::vector<std::vector<double>> in(outstanding), out(outstanding), expected(outstanding);
    std::vector<collective_request> requests;
    for (int k = 0; k < outstanding; ++k) {
      const std::size_t n = random_count(gen, sizeof(double));
      in[k] = values_of<double>(100 + static_cast<std::uint64_t>(k), comm.rank(), n);
      out[k].assign(n, 0.0);
      expected[k] = serial_fold<double>(100 + static_cast<std::uint64_t>(k), comm.size(), n, ops::sum{});
      requests.push_back(comm.iallreduce(send_buf(in[k]), recv_buf(out[k]), op(ops::sum{})));
    }
    // Wait for the last first: the earlier ones must complete on the way.
    requests.back().wait();
    while (!requests[1].test()) std::this_thread::yield();
    for (auto& r : requests) r.wait();
    for (int k = 0; k < outstanding; ++k) check_equal(as_span(out[k]), as_span(expected[k]), "iallreduce");
    // In place, and a blocking collective while one is outstanding.
    std::vector<int> v{comm.rank(), 1};
    auto request = comm.iallreduce(send_recv_buf(v), op(ops::sum{}));
    const int size = comm.allreduce(send_buf(1), op(ops::sum{}));
    request.wait();
    CHECK(size == comm.size());
    CHECK(v == std::vector<int>{comm.size() * (comm.size() - 1) / 2, comm.size()});
  }
}

TEST_CASE("allreduce rejects bad arguments with a message", "[comm][allreduce][errors]") {
  communicator& comm = default_comm();
  std::vector<double> x(5), small(3);
  CHECK_THROWS_WITH(comm.allreduce(send_buf(x), recv_buf(small), op(ops::sum{})),
                    ContainsSubstring("recv_buf holds 3 element(s) but 5 are needed"));
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> matrix("matrix", 4, 4);
  auto column = Kokkos::subview(matrix, Kokkos::ALL, 1);
  CHECK_THROWS_WITH(comm.allreduce(send_recv_buf(column), op(ops::sum{})), ContainsSubstring("is not contiguous"));
  std::vector<matrix2> m(4);
  CHECK_THROWS_WITH(comm.allreduce(send_recv_buf(m), op(matrix_product{}), force_algorithm(comm_algorithm::ring)),
                    ContainsSubstring("not commutative"));
  CHECK_THROWS_WITH(comm.allreduce(send_recv_buf(x), op(ops::sum{}), force_algorithm(comm_algorithm::binomial)),
                    ContainsSubstring("allreduce has no binomial algorithm"));
  // Dissemination groups the operands per rank: a double sum would differ in its last bits
  // between ranks, so it runs integer built-in operations only.
  const auto dissemination = force_algorithm(comm_algorithm::dissemination);
  CHECK_THROWS_WITH(comm.allreduce(send_recv_buf(x), op(ops::sum{}), dissemination),
                    ContainsSubstring("algorithm dissemination cannot run here: each rank groups the operands"));
  CHECK_THROWS_WITH(comm.allreduce(send_recv_buf(x), op(ops::min{}), dissemination),
                    ContainsSubstring("different bits"));
  std::vector<long> counts(5, comm.rank() + 1);
  comm.allreduce(send_recv_buf(counts), op(ops::sum{}), dissemination);
  CHECK(counts[4] == static_cast<long>(comm.size()) * (comm.size() + 1) / 2);
}

TEST_CASE("allreduce finds counts that differ between ranks", "[comm][allreduce][errors]") {
  communicator_options verify;
  verify.verify_arguments = true;
  communicator checked(MPI_COMM_WORLD, verify);
  std::vector<double> x(static_cast<std::size_t>(4 + checked.rank()));
  if (checked.size() > 1) {
    // Every rank learns of the mismatch, on every path.
    CHECK_THROWS_WITH(checked.allreduce(send_recv_buf(x), op(ops::sum{}), force_algorithm(comm_algorithm::mpi)),
                      ContainsSubstring("the ranks passed different counts (from 4 to"));
    // The shared-memory path finds it without verification (every rank reads every header).
    communicator& comm = default_comm();
    if (comm.has_shared_memory())
      CHECK_THROWS_WITH(comm.allreduce(send_recv_buf(x), op(ops::sum{})),
                        ContainsSubstring("the ranks passed different counts"));
    // ... and the communicator stays usable afterwards.
    CHECK(comm.allreduce(send_buf(1), op(ops::sum{})) == comm.size());
  }
  // A local error on one rank reaches every rank.
  std::vector<double> y(4), too_small(checked.rank() == 0 ? 2 : 4);
  if (checked.rank() == 0)
    CHECK_THROWS_WITH(checked.allreduce(send_buf(y), recv_buf(too_small), op(ops::sum{})),
                      ContainsSubstring("recv_buf holds 2 element(s) but 4 are needed"));
  else
    CHECK_THROWS_WITH(checked.allreduce(send_buf(y), recv_buf(too_small), op(ops::sum{})),
                      ContainsSubstring("rank 0 rejected its arguments"));
}

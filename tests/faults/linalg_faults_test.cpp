// Fault injection into linalg's halo products: a rank that skips a product, or sleeps past the
// timeout (1 s, set by this folder's main) before it. The ranks whose rows read its entries get
// a deadlock_error naming it, and their matrix refuses its next product; the ranks it sent to
// gave up with their receives cancelled, so its entries never land in their vectors, freed as
// the error left (AddressSanitizer would see it); and a new matrix on a new communicator
// multiplies right in every element.
#include <hetero/comm.hpp>
#include <hetero/linalg.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "faults_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using matrix = hetero::distributed_csr<Kokkos::DefaultHostExecutionSpace>;

// The periodic 1-D Laplacian with random off-diagonal weights (every rank draws the same): each
// rank's rows read an entry of the ranks before and after it.
hetero::csr_matrix<double> ring(std::int64_t n) {
  std::vector<hetero::matrix_entry<double>> entries;
  for (std::int64_t i = 0; i < n; ++i) {
    const double w = static_cast<double>(faults::shared_random(1, 1000)) / 1000.0;
    entries.push_back({i, i, 4.0});
    entries.push_back({i, (i + 1) % n, -w});
    entries.push_back({(i + 1) % n, i, -w});
  }
  return {n, n, 0, n, std::move(entries)};
}

// y = A x on `comm`, with x drawn fresh (the same on every rank), checked in every element
// against a serial product of the whole matrix (the same sums in the same order: equal bits).
void check_product(const hetero::csr_matrix<double>& source, const hetero::communicator& comm) {
  const matrix a(source, comm);
  const auto n = static_cast<std::size_t>(source.global_rows());
  std::vector<double> x(n), expected(n);
  for (double& v : x) v = static_cast<double>(faults::shared_random(-1000000, 1000000)) / 1e6;
  source.rows(0, source.global_rows()).multiply(x, expected);
  auto xh = a.make_halo_vector();
  auto y = a.make_vector();
  for (std::size_t i = 0; i < a.local_rows(); ++i) xh(i) = x[static_cast<std::size_t>(a.rows().begin) + i];
  a.multiply_halo(xh, y);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < a.local_rows(); ++i)
    wrong += y(i) != expected[static_cast<std::size_t>(a.rows().begin) + i];
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("linalg: a rank that skips a halo product, or sleeps past the timeout before it", "[faults][linalg]") {
  const int p = faults::world_size(), me = faults::world_rank(), late = p - 1;
  if (p < 2) return;
  const std::int64_t n = 8 * p + faults::shared_random(0, 40);
  const auto source = ring(n);
  // Rank r's rows read the last row of rank r - 1 and the first of rank r + 1 (periodic).
  const bool reads_late = me != late && (me == (late + 1) % p || me == (late + p - 1) % p);
  const bool skip = GENERATE(true, false);
  CAPTURE(skip);
  {
    const hetero::communicator comm;
    const matrix a(source, comm);
    const auto y = a.make_vector();
    const auto product = [&] {
      const auto x = a.make_halo_vector();  // freed as an error leaves: a late entry must not land there
      Kokkos::deep_copy(x, 1.0);
      a.multiply_halo(x, y);
    };
    product();  // the plan is built and works
    const auto o = faults::attempt([&] {
      if (skip && me == late) return;
      if (!skip && me == late) faults::oversleep();
      product();
    });
    faults::report(skip ? "skip" : "slow rank", "linalg spmv halo", o);
    if (reads_late) {
      INFO(o.text);
      CHECK(o.kind == "deadlock_error");  // not REQUIRE: the other ranks go on to the next collective
      CHECK_THAT(o.text, ContainsSubstring("spmv halo") && ContainsSubstring(faults::limit_text()) &&
                             ContainsSubstring("HETERO_WAIT_TIMEOUT"));
      CHECK(o.missing == std::vector<int>{late});
      // The matrix refuses its next product at once, on this rank alone (the late rank's ghosts
      // of the abandoned exchange would match it).
      CHECK_THROWS_WITH(product(), ContainsSubstring("the matrix's halo exchange is out of step since an earlier "
                                                     "spmv halo gave up"));
    } else {
      CHECK(o.kind == "none");  // the late rank: its neighbours sent before they gave up
    }
  }  // the matrix, its vectors and the communicator are gone; the slow rank's sends came after
  check_product(source, hetero::communicator());
}

// Every name 0.1 spelled otherwise still compiles, with a deprecation warning that names the
// new spelling (docs/conventions.md); this test builds it with -Werror=deprecated-declarations
// and checks each message (tests/compile_fail/CMakeLists.txt).
#include <hetero/hetero.hpp>

void old_spellings(const hetero::communicator& comm, hetero::power::monitor& m, hetero::power::actuator& cpu) {
  // A timeout as a number of seconds.
  hetero::task_options options;
  options.no_progress_timeout = 5.0;
  // The communicator first, or the options before it.
  const hetero::distributed_csr<Kokkos::DefaultHostExecutionSpace> a(comm, hetero::poisson_3d(4));
  const hetero::matrix_market_rows rows(comm, "a.mtx");
  const hetero::coarray<double, 1, Kokkos::HostSpace> c({4}, hetero::coarray_options{}, comm);
  const hetero::power::controller control(comm, m, cpu, {.budget_watts = 100});
  // British spellings.
  (void)a.neighbours();
  (void)hetero::power::normalised({1.0, 0.5});
  // The access modes named like events.
  static_assert(hetero::access_mode::in == hetero::access_mode::read);
  // A mirrored array's clauses named like events.
  hetero::mirrored_array<double*> x("x", 8), y("y", 8), z("z", 8), w("w", 8);
  hetero::parallel_for("old", 8,
                       hetero::access(hetero::in(x), hetero::out(y), hetero::inout(z), hetero::replicated_in(w)),
                       [](std::int64_t, auto, auto, auto, auto) {});
}

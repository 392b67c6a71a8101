// Must not compile: a cg_solver made from a temporary matrix would keep a dangling reference.
#include <hetero/linalg.hpp>

void solve_on_a_temporary(const hetero::communicator& comm) {
  hetero::cg_solver<Kokkos::DefaultHostExecutionSpace> cg(
      hetero::distributed_csr<Kokkos::DefaultHostExecutionSpace>(hetero::poisson_3d(8), comm));
  (void)cg;
}

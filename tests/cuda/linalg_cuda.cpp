// linalg on Kokkos::Cuda: the CSR matrix and its halo plan in CudaSpace (halo packed by a device
// kernel and staged through host buffers), the SpMV and vector kernels, CG in all three
// variants, with each preconditioner.
#include <hetero/linalg.hpp>

#include "instantiate.hpp"

void cuda_check::linalg() {
  const hetero::communicator comm;
  const hetero::distributed_csr<device> a(hetero::poisson_3d(16), comm);
  static_assert(std::is_same_v<hetero::distributed_csr<device>::vector_type::memory_space, device_memory>);
  auto b = a.make_vector("b"), x = a.make_halo_vector("x"), y = a.make_vector("y");
  Kokkos::deep_copy(b, 1.0);
  a.multiply_halo(x, y);
  for (const auto variant :
       {hetero::cg_variant::allgather, hetero::cg_variant::halo, hetero::cg_variant::pipelined}) {
    hetero::cg_solver<device> cg(a, {.variant = variant, .tolerance = 1e-10});
    Kokkos::deep_copy(x, 0.0);
    const hetero::cg_result r = cg.solve(b, x);
    (void)r;
    for (const auto pc : {hetero::cg_preconditioner::jacobi, hetero::cg_preconditioner::chebyshev,
                          hetero::cg_preconditioner::block_ic0}) {
      hetero::cg_solver<device> preconditioned(a, {.variant = variant, .preconditioner = pc, .tolerance = 1e-10});
      Kokkos::deep_copy(x, 0.0);
      (void)preconditioned.solve(b, x);
    }
  }
}

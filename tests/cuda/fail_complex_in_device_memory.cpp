// Must not compile: std::complex has host-only operators, so it cannot be reduced in device memory.
#include <hetero/comm.hpp>

#include <complex>

void complex_on_device(hetero::communicator& comm,
                       const Kokkos::View<std::complex<double>*, Kokkos::CudaSpace>& x) {
  comm.allreduce(hetero::send_recv_buf(x), hetero::op(hetero::ops::sum{}));
}

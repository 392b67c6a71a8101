// comm on CudaSpace views: every collective, blocking and non-blocking, with each way device
// buffers can travel (MPI's choice when GPU-aware, staged through pinned host buffers, direct),
// reductions combined by device kernels (built-in operations, Kokkos::complex, a user's
// KOKKOS_LAMBDA), and the tuned algorithms that run on the device path.
#include <hetero/comm.hpp>

#include <Kokkos_Complex.hpp>

#include <cstddef>
#include <vector>

#include "instantiate.hpp"

namespace {

template <class T>
using device_vector = Kokkos::View<T*, cuda_check::device_memory>;

template <class T>
void collectives(hetero::communicator& comm) {
  using namespace hetero;
  const auto p = static_cast<std::size_t>(comm.size());
  device_vector<T> x("x", 64), y("y", 64), all("all", 64 * p);
  const std::vector<int> counts(p, 64), displs = [&] {
    std::vector<int> d(p);
    for (std::size_t r = 0; r < p; ++r) d[r] = static_cast<int>(64 * r);
    return d;
  }();
  comm.allreduce(send_buf(x), recv_buf(y), op(ops::sum{}));
  comm.reduce(send_buf(x), recv_buf(y), op(ops::sum{}), root(0));
  comm.broadcast(send_recv_buf(x), root(0));
  comm.gather(send_buf(x), recv_buf(all), root(0));
  comm.gatherv(send_buf(x), recv_buf(all), recv_counts(counts), recv_displs(displs), root(0));
  comm.scatter(send_buf(all), recv_buf(x), root(0));
  comm.scatterv(send_buf(all), send_counts(counts), send_displs(displs), recv_buf(x), root(0));
  comm.allgather(send_buf(x), recv_buf(all));
  comm.allgatherv(send_buf(x), recv_buf(all), recv_counts(counts), recv_displs(displs));
  std::vector<collective_request> pending;
  pending.push_back(comm.iallreduce(send_buf(x), recv_buf(y), op(ops::sum{})));
  pending.push_back(comm.ireduce(send_buf(x), recv_buf(y), op(ops::sum{}), root(0)));
  pending.push_back(comm.ibroadcast(send_recv_buf(x), root(0)));
  pending.push_back(comm.igather(send_buf(x), recv_buf(all), root(0)));
  pending.push_back(comm.igatherv(send_buf(x), recv_buf(all), recv_counts(counts), recv_displs(displs), root(0)));
  pending.push_back(comm.iscatter(send_buf(all), recv_buf(x), root(0)));
  pending.push_back(comm.iscatterv(send_buf(all), send_counts(counts), send_displs(displs), recv_buf(x), root(0)));
  pending.push_back(comm.iallgather(send_buf(x), recv_buf(all)));
  pending.push_back(comm.iallgatherv(send_buf(x), recv_buf(all), recv_counts(counts), recv_displs(displs)));
  for (auto& r : pending) r.wait();
}

template <class T>
void reductions(hetero::communicator& comm) {
  using namespace hetero;
  device_vector<T> x("x", 64), y("y", 64);
  comm.allreduce(send_buf(x), recv_buf(y), op(ops::max{}));
  comm.allreduce(send_buf(x), recv_buf(y), op(ops::min{}));
  comm.allreduce(send_buf(x), recv_buf(y), op(ops::prod{}));
  // A user's operation on device buffers runs in device kernels: a KOKKOS_LAMBDA.
  comm.allreduce(send_buf(x), recv_buf(y), op(KOKKOS_LAMBDA(T a, T b) { return a > b ? a - b : b - a; }));
  comm.allreduce(send_buf(x), recv_buf(y),
                 op(
                     KOKKOS_LAMBDA(T a, T b) { return a + b; }, ops::commutative));
  comm.reduce(send_buf(x), recv_buf(y), op(KOKKOS_LAMBDA(T a, T b) { return a * b; }), root(comm.size() - 1));
}

}  // namespace

void cuda_check::comm() {
  for (const auto path : {hetero::device_buffer_path::automatic, hetero::device_buffer_path::staged,
                          hetero::device_buffer_path::direct}) {
    // direct hands device pointers to MPI: refused (by name) where MPI is not CUDA-aware.
    if (path == hetero::device_buffer_path::direct &&
        hetero::mpi_gpu_support(hetero::gpu_kind::cuda) != hetero::gpu_support::yes)
      continue;
    hetero::communicator_options options;
    options.device_path = path;
    hetero::communicator comm(MPI_COMM_WORLD, options);
    collectives<double>(comm);
    collectives<int>(comm);
    collectives<Kokkos::complex<double>>(comm);
    reductions<double>(comm);
    reductions<long>(comm);
    comm.barrier();
  }
}

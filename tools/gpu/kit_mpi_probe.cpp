// kit_mpi_probe: starts MPI from the GPU kit's libraries alone and checks one allreduce, for
// run.sh's library check (no GPU needed). Prints each rank's node-local rank.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, local_rank = 0, local_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  long sum = 0, mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const long expected = static_cast<long>(size) * (size + 1) / 2;
  std::printf("kit_mpi_probe: rank %d of %d, node-local %d of %d, allreduce %ld (expected %ld)\n", rank, size,
              local_rank, local_size, sum, expected);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return sum == expected ? 0 : 1;
}

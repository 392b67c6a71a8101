// Outside hetero's waits, an MPI error on MPI_COMM_WORLD still ends the job as MPI's default
// handler would (the runtime's handler on MPI_COMM_WORLD passes it on): registered as a test
// that passes when MPI reports the invalid rank fatally and fails if the call returns.
#include <hetero/core/runtime.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  int value = 0;
  MPI_Send(&value, 1, MPI_INT, rt.world_size() + 7, 0, MPI_COMM_WORLD);  // no such rank
  std::printf("MPI_Send to a rank that does not exist returned\n");
  return 0;
}

// Built against the install tree: brings up hetero's runtime, runs one parallel reduction per
// rank and one allreduce, and checks both against closed forms.
#include <hetero/hetero.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const long n = 100000;
  long local = 0;
  Kokkos::parallel_reduce(
      "consumer_sum", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n),
      [](long i, long& s) { s += i; }, local);
  long total = 0;
  HETERO_MPI_CHECK(MPI_Allreduce, &local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const long expected = static_cast<long>(rt.world_size()) * (n * (n - 1) / 2);
  if (rt.world_rank() == 0)
    std::printf("hetero %s consumer on %d ranks: sum %ld (expected %ld)\n", HETERO_VERSION_STRING, rt.world_size(),
                total, expected);
  return total == expected ? 0 : 1;
}

// Built against the install tree through find_package(hetero COMPONENTS io): writes a cyclic
// array of i * i to an HDF5 file, reads it back in blocks, and checks every element.
#include <hetero/hetero.hpp>
#include <hetero/io.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const std::int64_t n = 10007;
  hetero::process_grid<1> ranks;
  hetero::distributed_array<double, 1> cyclic(
      hetero::index_space<1>({n}, ranks, {hetero::distribution::cyclic()}));
  const auto out_view = cyclic.global_view();
  hetero::for_each_owned(
      "square", cyclic.space(), cyclic.space().box(),
      KOKKOS_LAMBDA(std::int64_t i) { out_view(i) = static_cast<double>(i) * static_cast<double>(i); });
  {
    hetero::h5file out("consumer.h5", hetero::file_mode::create);
    out.write("squares", cyclic);
  }
  hetero::distributed_array<double, 1> block(hetero::block_space(n));
  hetero::h5file("consumer.h5", hetero::file_mode::read).read("squares", block);
  const auto in_view = block.global_view();
  long wrong = 0;
  hetero::reduce_owned(
      "check", block.space(), block.space().box(),
      KOKKOS_LAMBDA(std::int64_t i, long& bad) {
        bad += in_view(i) == static_cast<double>(i) * static_cast<double>(i) ? 0 : 1;
      },
      wrong);
  wrong = block.comm().allreduce(hetero::send_buf(wrong), hetero::op(hetero::ops::sum{}));
  if (rt.world_rank() == 0)
    std::printf("hetero io consumer on %d ranks: %ld of %lld elements wrong\n", rt.world_size(), wrong,
                static_cast<long long>(n));
  return wrong == 0 ? 0 : 1;
}

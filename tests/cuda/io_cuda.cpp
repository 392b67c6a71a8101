// io with arrays in CudaSpace: h5file's write and read (whole and a section) of device arrays,
// staged through host copies, an asynchronous write, and a checkpoint of one. Compiled by the
// CUDA stage (an object library); the GPU kit runs these paths with every value checked
// (tests/gpu/io_gpu_test.cpp).
#include <hetero/io.hpp>

#include <array>
#include <cstdint>

#include "instantiate.hpp"

namespace {

template <int Rank>
void files_of_rank(hetero::h5file& file) {
  std::array<std::int64_t, Rank> extents{};
  extents.fill(16);
  hetero::index_space<Rank> space(extents, hetero::process_grid<Rank>());
  hetero::distributed_array<double, Rank, cuda_check::device_memory> u(
      space, {.shadow = hetero::shadow_width<Rank>::uniform(1)});
  file.write("u", u);
  file.read("u", u);
  hetero::index_box<Rank> all{{}, extents};
  file.read("u", u, all);
}

}  // namespace

void io_cuda_paths() {
  hetero::h5file file("cuda.h5", hetero::file_mode::create);
  files_of_rank<1>(file);
  files_of_rank<2>(file);
  files_of_rank<3>(file);
  hetero::checkpoint saved("cuda_run");
  hetero::distributed_array<float, 1, cuda_check::device_memory> v(hetero::block_space(100));
  auto next = saved.begin(0);
  next.write("v", v);
  next.commit();
  if (auto last = saved.restore()) last->read("v", v);
  hetero::h5file out("cuda_async.h5", hetero::file_mode::create);
  out.write_async("v", v).wait();
}

// A file written by one job and read by others on other rank counts and layouts:
//   write <file>  (4 ranks) a 2-D double array cyclic x block-cyclic(3) on a 2 x 2 grid, a
//                 3-D int32 array cyclic on 4 x 1 x 1, a 1-D complex array cyclic, values drawn
//                 from a fresh salt kept in the file; and "small", a 2 x 3 int32 array of
//                 10 * row + column that the io.h5dump test reads back with h5dump.
//   read <file>   (1, 2, 3, 5 ranks) each array read into random other distributions and
//                 grids, whole and a random section, every element checked.
// Exits non-zero on any difference.
#include <hetero/io.hpp>

#include <complex>
#include <cstdio>
#include <random>
#include <string>

#include "io_support.hpp"

namespace {

using dist_test::uniform;

template <class T, int R>
using host_array = hetero::distributed_array<T, R, Kokkos::HostSpace>;

template <class T, int R>
void write_one(hetero::h5file& out, const char* name, const std::array<std::int64_t, R>& extents,
               const std::array<int, R>& grid, const std::array<hetero::distribution, R>& formats,
               std::uint64_t salt) {
  host_array<T, R> a(hetero::index_space<R>(extents, hetero::process_grid<R>(grid), formats));
  io_test::fill(a, salt);
  out.write(name, a);
}

// Reads `name` into three random layouts and one random section; returns the wrong elements.
template <class T, int R>
std::int64_t read_one(hetero::h5file& in, const char* name, std::mt19937_64& rng, std::uint64_t salt) {
  const auto stored = in.extents(name);
  std::array<std::int64_t, R> extents{};
  for (int d = 0; d < R; ++d) extents[d] = stored[static_cast<std::size_t>(d)];
  std::int64_t wrong = 0;
  auto random_array = [&](const std::array<std::int64_t, R>& e) {
    const auto grid = dist_test::random_grid<R>(rng, dist_test::world_size());
    std::array<hetero::distribution, R> formats{};
    for (int d = 0; d < R; ++d) formats[d] = dist_test::random_distribution(rng, e[d], grid[d]);
    return host_array<T, R>(hetero::index_space<R>(e, hetero::process_grid<R>(grid), formats));
  };
  for (int layout = 0; layout < 3; ++layout) {
    auto a = random_array(extents);
    in.read(name, a);
    wrong += io_test::wrong_elements(a, salt);
  }
  hetero::index_box<R> box;
  std::array<std::int64_t, R> section{};
  for (int d = 0; d < R; ++d) {
    box.begin[d] = uniform(rng, 0, extents[d] - 1);
    box.end[d] = uniform(rng, box.begin[d] + 1, extents[d]);
    section[d] = box.extent(d);
  }
  auto part = random_array(section);
  in.read(name, part, box);
  wrong += io_test::wrong_elements(part, salt, box.begin);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime runtime(argc, argv);
  const int rank = dist_test::world_rank(), size = dist_test::world_size();
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s write|read <file>\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1], path = argv[2];
  if (mode == "write") {
    if (size != 4) {
      std::fprintf(stderr, "write runs on 4 ranks, not %d\n", size);
      return 2;
    }
    std::uint64_t salt = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    MPI_Bcast(&salt, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    hetero::h5file out(path, hetero::file_mode::create);
    using hetero::distribution;
    write_one<double, 2>(out, "field", {37, 23}, {2, 2}, {distribution::cyclic(), distribution::block_cyclic(3)},
                         salt);
    write_one<std::int32_t, 3>(out, "cube", {9, 10, 11}, {4, 1, 1},
                               {distribution::cyclic(), distribution::block(), distribution::block()}, salt);
    write_one<std::complex<double>, 1>(out, "wave", {1000}, {4}, {distribution::cyclic()}, salt);
    host_array<std::int32_t, 2> small(hetero::index_space<2>({2, 3}, hetero::process_grid<2>({2, 2}),
                                                             {distribution::cyclic(), distribution::cyclic()}));
    dist_test::for_each_owned_slot(small, small.local_with_shadow(), [](const auto& g, std::int32_t& e) {
      e = static_cast<std::int32_t>(10 * g[0] + g[1]);
    });
    out.write("small", small);
    out.set("salt", salt);
    out.close();
    if (rank == 0)
      std::printf("wrote %s on 4 ranks (salt %llu)\n", path.c_str(), static_cast<unsigned long long>(salt));
    return 0;
  }
  if (mode == "read") {
    hetero::h5file in(path, hetero::file_mode::read);
    const auto salt = in.get<std::uint64_t>("salt");
    std::mt19937_64 rng(salt ^ static_cast<std::uint64_t>(size));
    std::int64_t wrong = read_one<double, 2>(in, "field", rng, salt);
    wrong += read_one<std::int32_t, 3>(in, "cube", rng, salt);
    wrong += read_one<std::complex<double>, 1>(in, "wave", rng, salt);
    std::int64_t all = 0;
    MPI_Allreduce(&wrong, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf(
          "read the 4-rank file on %d rank(s), 3 arrays x (3 layouts + 1 section): %lld element(s) wrong\n", size,
          static_cast<long long>(all));
    return all == 0 ? 0 : 1;
  }
  std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
  return 2;
}

// Helpers of the io module's tests: a scratch folder shared by the ranks, values of global
// indices for every element type the module writes, and a serial read of a whole dataset on
// one rank (the reference: HDF5's own sequential driver, no MPI-IO, no hetero).
#ifndef HETERO_TESTS_IO_SUPPORT_HPP
#define HETERO_TESTS_IO_SUPPORT_HPP

#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <hetero/io.hpp>

#include <array>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "../distarray/distarray_support.hpp"

namespace io_test {

/// A folder all ranks share, new for this run, removed by the destructor.
class scratch {
 public:
  explicit scratch(const std::string& what) {
    char name[512] = {};
    if (hetero::testing::world_rank() == 0) {
      const auto base = std::filesystem::temp_directory_path() / ("hetero-" + what + "-XXXXXX");
      std::string pattern = base.string();
      if (mkdtemp(pattern.data()) == nullptr) pattern.clear();
      pattern.copy(name, sizeof(name) - 1);
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    m_path = name;
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ignored;
    if (hetero::testing::world_rank() == 0 && !m_path.empty()) std::filesystem::remove_all(m_path, ignored);
  }
  [[nodiscard]] std::string file(const std::string& name) const { return m_path + "/" + name; }
  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

/// The value of global index `g` in an array salted `salt`, for every io element type.
template <class T, std::size_t R>
T value_at(const std::array<std::int64_t, R>& g, std::uint64_t salt) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using part = typename T::value_type;
    return T(dist_test::value_at<part>(g, salt), dist_test::value_at<part>(g, salt ^ 0x5555));
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> && sizeof(T) == 8) {
    std::uint64_t h = dist_test::mix(salt);
    for (auto i : g) h = dist_test::mix(h ^ static_cast<std::uint64_t>(i));
    return h;  // the full range, high bit included
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 8) {
    std::uint64_t h = dist_test::mix(salt ^ 7);
    for (auto i : g) h = dist_test::mix(h ^ static_cast<std::uint64_t>(i));
    return static_cast<T>(h);  // negative values too
  } else {
    return dist_test::value_at<T>(g, salt);
  }
}

/// A random space of `extents` on a random grid of all ranks, each axis of a random distribution;
/// where `shadow` is given, random shadows of 0-2 on the axes whose distribution allows them.
template <int R, class Rng>
hetero::index_space<R> random_space(Rng& rng, const std::array<std::int64_t, R>& extents,
                                    hetero::shadow_width<R>* shadow) {
  const auto shape = dist_test::random_grid<R>(rng, dist_test::world_size());
  std::array<hetero::distribution, R> formats{};
  for (int d = 0; d < R; ++d) {
    const bool halo = shadow && extents[d] >= 2 * shape[d] && dist_test::uniform(rng, 0, 1) == 1;
    formats[d] = dist_test::random_distribution(rng, extents[d], shape[d], halo, halo ? 2 : 0);
    if (halo) {
      shadow->lower[d] = dist_test::uniform(rng, 0, 2);
      shadow->upper[d] = dist_test::uniform(rng, 0, 2);
    }
  }
  return hetero::index_space<R>(extents, dist_test::grid_of<R>(shape), formats);
}

/// Fills this rank's block of `a` (host memory) with value_at(global index, salt).
template <class A>
void fill(const A& a, std::uint64_t salt) {
  using T = typename A::value_type;
  dist_test::for_each_owned_slot(a, a.local_with_shadow(), [&](const auto& g, T& e) { e = value_at<T>(g, salt); });
}

/// This rank's elements of `a` that differ from value_at(global index + origin, salt).
template <class A, std::size_t R = A::rank>
std::int64_t wrong_elements(const A& a, std::uint64_t salt, const std::array<std::int64_t, R>& origin = {}) {
  using T = typename A::value_type;
  std::int64_t wrong = 0;
  dist_test::for_each_owned_slot(a, a.local_with_shadow(), [&](const auto& g, const T& e) {
    auto at = g;
    for (std::size_t d = 0; d < R; ++d) at[d] += origin[d];
    wrong += e == value_at<T>(at, salt) ? 0 : 1;
  });
  return wrong;
}

/// The two arrays of the checkpoint tests: a 2-D field of `rows` x 31 doubles (rows
/// distributed by `rows_kind`) and 1001 int64 counts.
using field = hetero::distributed_array<double, 2, Kokkos::HostSpace>;
using counts = hetero::distributed_array<std::int64_t, 1, Kokkos::HostSpace>;
inline field make_field(hetero::distribution rows_kind, std::int64_t rows = 40) {
  return field(hetero::index_space<2>({rows, 31}, hetero::process_grid<2>({0, 1}),
                                      {rows_kind, hetero::distribution::block()}),
               {.label = "u"});
}
inline counts make_counts(hetero::distribution kind) {
  return counts(hetero::index_space<1>({1001}, hetero::process_grid<1>(), {kind}), {.label = "counts"});
}

/// Commits checkpoint `step` of `saved`: the field ("u", cyclic rows) and the counts (block-cyclic)
/// salted `salt`, and the scalars "salt" and "residual" = 1 / (step + 1).
template <class Checkpoint>
void commit_checkpoint(Checkpoint& saved, std::int64_t step, std::uint64_t salt, std::int64_t rows = 40) {
  auto u = make_field(hetero::distribution::cyclic(), rows);
  auto c = make_counts(hetero::distribution::block_cyclic(7));
  fill(u, salt);
  fill(c, salt);
  auto next = saved.begin(step);
  next.write("u", u);
  next.write("counts", c);
  next.set("salt", salt);
  next.set("residual", 1.0 / static_cast<double>(step + 1));
  next.commit();
}

/// The whole dataset `name` of `path` in row-major order, read by this rank alone through
/// HDF5's sequential driver as h5py or h5dump would; empty when it cannot be read.
template <class T>
std::vector<T> serial_read(const std::string& path, const std::string& name, hid_t memory_type,
                           std::vector<hsize_t>& dims) {
  std::vector<T> data;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return data;
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(dataset);
  dims.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::size_t count = 1;
  for (auto d : dims) count *= d;
  data.resize(count);
  if (H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0) data.clear();
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);
  return data;
}

/// Dataset `name` of `path` read serially by this rank (serial_read): its elements, in global
/// row-major order over `extents`, that differ from value_at(global index, salt), and a
/// mismatch for a shape other than `extents` or a file that cannot be read.
template <class T, std::size_t R>
dist_test::mismatches file_mismatches(const std::string& path, const std::string& name,
                                      const std::array<std::int64_t, R>& extents, std::uint64_t salt) {
  std::vector<hsize_t> dims;
  const auto type = hetero::detail::h5_type_of<T>();
  const auto data = serial_read<T>(path, name, type.get(), dims);
  dist_test::mismatches wrong;
  wrong.expect(dims.size() == R, "the dataset has ", dims.size(), " dimensions, not ", R);
  for (std::size_t d = 0; d < R && d < dims.size(); ++d)
    wrong.expect(dims[d] == static_cast<hsize_t>(extents[d]), "axis ", d, " has ", dims[d], " indices, not ",
                 extents[d]);
  std::size_t at = 0;
  dist_test::for_each_index<static_cast<int>(R)>(extents, [&](const auto& g) {
    wrong.expect(at < data.size() && data[at] == value_at<T>(g, salt), "file element ", at);
    ++at;
  });
  return wrong;
}

}  // namespace io_test

#endif  // HETERO_TESTS_IO_SUPPORT_HPP

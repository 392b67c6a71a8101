// io with arrays in GPU memory (CudaSpace), which h5file and checkpoint stage through host
// copies: random 1-D, 2-D and 3-D arrays of every distribution with random shadows, written
// from device memory and checked in the file by a serial read on rank 0 (HDF5's sequential
// driver, as h5py would); read back into device arrays of other distributions and grids, every
// element checked against its value by global index and every shadow element left as it was;
// sections; a checkpoint of device arrays restored into another layout; an asynchronous write
// whose device array changes on the GPU as soon as write_async returns.
#include <hetero/io.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <type_traits>

#include "gpu_support.hpp"
#include "io_support.hpp"

namespace {

using dist_test::uniform;
using dist_test::world_rank;
using io_test::random_space;

template <class T, int R>
using device_array = hetero::distributed_array<T, R, gpu_test::device_memory>;

/// A value no element of an array filled by value_at takes (value_at's floating-point values lie
/// in [0, 1); an integer one matches it with probability 2^-64 per element).
template <class T>
constexpr T sentinel = static_cast<T>(-3);

/// Fills this rank's block of the device array `a` (not its shadows) with io_test::value_at
/// (global index, salt): every io element type's whole range.
template <class T, int R>
void fill(const device_array<T, R>& a, std::uint64_t salt) {
  auto storage = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local_with_shadow());
  dist_test::for_each_owned_slot(a, storage, [&](const auto& g, T& e) { e = io_test::value_at<T>(g, salt); });
  Kokkos::deep_copy(a.local_with_shadow(), storage);
}

/// This rank's elements of the device array `a` that differ from value_at(global + origin, salt),
/// and its shadow elements that are not `sentinel` any more (a read must leave them alone).
template <class T, int R>
std::pair<std::int64_t, std::int64_t> wrong_and_touched(
    const device_array<T, R>& a, std::uint64_t salt,
    std::type_identity_t<std::array<std::int64_t, R>> origin = {}) {
  auto storage = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local_with_shadow());
  std::int64_t wrong = 0, owned = 0;
  dist_test::for_each_owned_slot(a, storage, [&](const auto& g, T& e) {
    auto at = g;
    for (int d = 0; d < R; ++d) at[d] += origin[d];
    wrong += e == io_test::value_at<T>(at, salt) ? 0 : 1;
    e = sentinel<T>;  // counted with the shadows below
    ++owned;
  });
  std::int64_t kept = 0;
  for (std::size_t i = 0; i < storage.span(); ++i) kept += storage.data()[i] == sentinel<T> ? 1 : 0;
  return {wrong, static_cast<std::int64_t>(storage.span()) - kept};
}

template <class T, int R>
void device_round_trip(std::uint64_t stream) {
  auto rng = hetero::testing::rng(stream);
  const io_test::scratch dir("io-gpu");
  for (int trial = 0; trial < 4; ++trial) {
    std::array<std::int64_t, R> extents{};
    for (int d = 0; d < R; ++d) extents[d] = uniform(rng, 1, R == 1 ? 20000 : (R == 2 ? 150 : 30));
    hetero::shadow_width<R> shadow;
    const auto from = random_space<R>(rng, extents, &shadow);
    const auto salt = rng();
    device_array<T, R> a(from, {.shadow = shadow, .label = "written"});
    Kokkos::deep_copy(a.local_with_shadow(), sentinel<T>);  // shadows that must not reach the file
    fill(a, salt);
    const auto path = dir.file("trial" + std::to_string(trial) + ".h5");
    {
      hetero::h5file out(path, hetero::file_mode::create);
      out.write("a", a);
    }
    if (world_rank() == 0) {
      const auto wrong = io_test::file_mismatches<T>(path, "a", extents, salt);
      DIST_CHECK_NO_MISMATCH(wrong);
    }
    // Into device memory of another distribution, grid and shadows: the staged read.
    hetero::shadow_width<R> other_shadow;
    device_array<T, R> b(random_space<R>(rng, extents, &other_shadow), {.shadow = other_shadow, .label = "read"});
    Kokkos::deep_copy(b.local_with_shadow(), sentinel<T>);
    hetero::h5file in(path, hetero::file_mode::read);
    in.read("a", b);
    const auto [wrong, touched] = wrong_and_touched(b, salt);
    CHECK(wrong == 0);
    CHECK(touched == 0);
    // A random section into a device array of the section's shape.
    hetero::index_box<R> box;
    std::array<std::int64_t, R> section_extents{};
    for (int d = 0; d < R; ++d) {
      box.begin[d] = uniform(rng, 0, extents[d] - 1);
      box.end[d] = uniform(rng, box.begin[d] + 1, extents[d]);
      section_extents[d] = box.extent(d);
    }
    device_array<T, R> c(random_space<R>(rng, section_extents, nullptr), {.label = "section"});
    Kokkos::deep_copy(c.local_with_shadow(), sentinel<T>);
    in.read("a", c, box);
    CHECK(wrong_and_touched(c, salt, box.begin).first == 0);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("a device array of any distribution is written and read into any other", "[io][gpu]", double,
                   float, std::int64_t) {
  device_round_trip<TestType, 1>(61);
  device_round_trip<TestType, 2>(62);
  device_round_trip<TestType, 3>(63);
}

TEST_CASE("a checkpoint of device arrays restores into another layout", "[io][gpu]") {
  const io_test::scratch dir("io-gpu-checkpoint");
  auto rng = hetero::testing::rng(64);
  hetero::checkpoint saved(dir.file("run"));
  std::uint64_t salt = 0;
  for (std::int64_t step = 0; step < 2; ++step) {
    salt = rng();
    device_array<double, 2> u(
        hetero::index_space<2>({97, 33}, hetero::process_grid<2>({0, 1}),
                               {hetero::distribution::cyclic(), hetero::distribution::block()}));
    device_array<std::int64_t, 1> counts(
        hetero::index_space<1>({1001}, hetero::process_grid<1>(), {hetero::distribution::block_cyclic(7)}));
    fill(u, salt);
    fill(counts, salt);
    auto next = saved.begin(step);
    next.write("u", u);
    next.write("counts", counts);
    next.set("salt", salt);
    next.commit();
  }
  auto last = saved.restore();
  REQUIRE(last.has_value());
  CHECK(last->get<std::uint64_t>("salt") == salt);
  device_array<double, 2> u(hetero::index_space<2>(
      {97, 33}, hetero::process_grid<2>({1, 0}), {hetero::distribution::block(), hetero::distribution::cyclic()}));
  device_array<std::int64_t, 1> counts(
      hetero::index_space<1>({1001}, hetero::process_grid<1>(), {hetero::distribution::cyclic()}));
  Kokkos::deep_copy(u.local_with_shadow(), sentinel<double>);
  Kokkos::deep_copy(counts.local_with_shadow(), sentinel<std::int64_t>);
  last->read("u", u);
  last->read("counts", counts);
  CHECK(wrong_and_touched(u, salt).first == 0);
  CHECK(wrong_and_touched(counts, salt).first == 0);
}

TEST_CASE("an asynchronous write of a device array keeps the values it had when it started", "[io][gpu]") {
  const io_test::scratch dir("io-gpu-async");
  auto rng = hetero::testing::rng(65);
  const auto salt = rng();
  device_array<double, 1> a(
      hetero::index_space<1>({1 << 20}, hetero::process_grid<1>(), {hetero::distribution::block_cyclic(1000)}));
  fill(a, salt);
  hetero::h5file out(dir.file("async.h5"), hetero::file_mode::create);
  auto saved = out.write_async("a", a);
  // The GPU overwrites the array while the I/O thread writes its copy.
  Kokkos::deep_copy(gpu_test::device(), a.local_with_shadow(), -1.0);
  saved.wait();
  out.close();
  device_array<double, 1> b(hetero::block_space(1 << 20));
  hetero::h5file in(dir.file("async.h5"), hetero::file_mode::read);
  in.read("a", b);
  CHECK(wrong_and_touched(b, salt).first == 0);
}

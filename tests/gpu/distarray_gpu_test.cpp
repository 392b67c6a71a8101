// distarray on a GPU, on 1 and 2 ranks sharing it: arrays in CudaSpace and CudaUVMSpace of 1-3
// dimensions on random distributions and grids. Every element is checked on the host against
// the values the serial definition gives: shadows after blocking and asynchronous reflects
// (through host buffers and directly), gmove between device and host arrays of other layouts
// and sections, one-sided gmove into device and host Views, coarray get/put in device memory,
// and owner loops and reductions running on the GPU.
#include <hetero/distarray.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <tuple>

#include "distarray_support.hpp"
#include "gpu_support.hpp"
#include "reflect_check.hpp"

namespace {

using dist_test::for_each_index;
using dist_test::uniform;
using dist_test::value_at;
using gpu_memories = std::tuple<gpu_test::device_memory, gpu_test::managed_memory>;

template <int R, class Rng>
hetero::index_space<R> random_space(Rng& rng, std::int64_t smallest, std::int64_t spread, bool contiguous,
                                    std::int64_t min_block = 0) {
  const auto shape = dist_test::random_grid<R>(rng, dist_test::world_size());
  std::array<std::int64_t, R> extents{};
  std::array<hetero::distribution, R> formats{};
  for (int d = 0; d < R; ++d) {
    extents[d] = uniform(rng, smallest * shape[d], smallest * shape[d] + spread);
    formats[d] = dist_test::random_distribution(rng, extents[d], shape[d], contiguous, min_block);
  }
  return hetero::index_space<R>(extents, hetero::process_grid<R>(shape), formats);
}

// Staged or automatic (direct is refused where MPI is not CUDA-aware, as with MPICH here).
hetero::device_buffer_path random_path(std::mt19937_64& rng) {
  return uniform(rng, 0, 1) == 0 ? hetero::device_buffer_path::staged : hetero::device_buffer_path::automatic;
}

template <class Memory, int R>
void random_reflects(std::uint64_t stream, int trials) {
  auto rng = hetero::testing::rng(stream);
  for (int trial = 0; trial < trials; ++trial) {
    const auto space = random_space<R>(rng, 2, R == 1 ? 5000 : R == 2 ? 200 : 30, true, 2);
    hetero::shadow_width<R> shadow;
    hetero::reflect_options<R> options;
    for (int d = 0; d < R; ++d) {
      shadow.lower[d] = uniform(rng, 0, 2);
      shadow.upper[d] = uniform(rng, 0, 2);
      options.periodic[d] = uniform(rng, 0, 1) == 1;
    }
    options.corners = uniform(rng, 0, 1) == 1;
    const auto path = random_path(rng);
    const bool async = uniform(rng, 0, 1) == 1;
    INFO("trial " << trial << ": extents " << hetero::detail::format_array(space.extents()) << ", path "
                  << hetero::to_string(path) << (async ? ", reflect_async" : ", reflect") << ", corners "
                  << options.corners);
    hetero::distributed_array<double, R, Memory> a(space, {.shadow = shadow, .device_path = path});
    const double sentinel = -7.25;
    Kokkos::deep_copy(a.local_with_shadow(), sentinel);
    dist_test::fill(a, 31 + static_cast<std::uint64_t>(trial));
    if (async) {
      auto handle = hetero::reflect_async(a, options);
      handle.wait();
    } else {
      hetero::reflect(a, options);
    }
    dist_test::check_reflected(a, options, 31 + static_cast<std::uint64_t>(trial), sentinel);
  }
}

// Every owned element of `dst` after dst[dst_section] = src[src_section]: mapped position by
// position inside the section, its own fill outside.
template <class T, int R, class Memory, class Spec>
void check_moved(const hetero::distributed_array<T, R, Memory>& dst, const Spec& dst_section,
                 const Spec& src_section, std::uint64_t dst_salt, std::uint64_t src_salt) {
  dist_test::mismatches wrong;
  dist_test::for_each_owned_element(dst, [&](const auto& g, const T& value) {
    std::array<std::int64_t, R> from{};
    bool inside = true;
    for (int d = 0; d < R && inside; ++d) {
      const auto& s = dst_section[d];
      inside = g[d] >= s.begin && g[d] < s.end && (g[d] - s.begin) % s.step == 0;
      from[d] = src_section[d].begin + (g[d] - s.begin) / s.step * src_section[d].step;
    }
    const T expected = inside ? value_at<T>(from, src_salt) : value_at<T>(g, dst_salt);
    wrong.expect(value == expected, "owned element ", hetero::detail::format_array(g));
  });
  DIST_CHECK_NO_MISMATCH(wrong);
}

// Sections of equal counts in two index spaces of the same extents: begin, end and step random.
template <int R, class Rng>
std::pair<hetero::section_spec<R>, hetero::section_spec<R>> random_sections(Rng& rng,
                                                                            const std::array<std::int64_t, R>& e) {
  hetero::section_spec<R> a{}, b{};
  for (int d = 0; d < R; ++d) {
    const std::int64_t count = uniform(rng, 0, e[d] / 3);
    const std::int64_t step_a = uniform(rng, 1, 3), step_b = uniform(rng, 1, 3);
    const std::int64_t begin_a = uniform(rng, 0, e[d] - 1 - (count > 0 ? (count - 1) * step_a : 0));
    const std::int64_t begin_b = uniform(rng, 0, e[d] - 1 - (count > 0 ? (count - 1) * step_b : 0));
    a[d] = {begin_a, begin_a + (count > 0 ? (count - 1) * step_a + 1 : 0), step_a};
    b[d] = {begin_b, begin_b + (count > 0 ? (count - 1) * step_b + 1 : 0), step_b};
  }
  return {a, b};
}

// The global index of position (i, j) of a 2-D section.
std::array<std::int64_t, 2> global_of(const hetero::section_spec<2>& s, std::int64_t i, std::int64_t j) {
  return {s[0].begin + i * s[0].step, s[1].begin + j * s[1].step};
}

// Whether global index g lies in section s; `k` gets its position there.
bool position_in(const hetero::section_spec<2>& s, const std::array<std::int64_t, 2>& g,
                 std::array<std::int64_t, 2>& k) {
  bool inside = true;
  for (int d = 0; d < 2; ++d) {
    inside = inside && g[d] >= s[d].begin && g[d] < s[d].end && (g[d] - s[d].begin) % s[d].step == 0;
    k[d] = (g[d] - s[d].begin) / s[d].step;
  }
  return inside;
}

template <class Memory, int R>
void random_gmoves(std::uint64_t stream, int trials) {
  auto rng = hetero::testing::rng(stream);
  for (int trial = 0; trial < trials; ++trial) {
    const auto src_space = random_space<R>(rng, 1, R == 1 ? 3000 : R == 2 ? 120 : 20, false);
    // The same extents, another distribution and grid.
    const auto extents = src_space.extents();
    const auto shape = dist_test::random_grid<R>(rng, dist_test::world_size());
    std::array<hetero::distribution, R> formats{};
    for (int d = 0; d < R; ++d) formats[d] = dist_test::random_distribution(rng, extents[d], shape[d]);
    const hetero::index_space<R> dst_space(extents, hetero::process_grid<R>(shape), formats);
    const int direction = static_cast<int>(uniform(rng, 0, 2));  // device->host, host->device, device->device
    const bool whole = uniform(rng, 0, 2) == 0;
    const bool async = uniform(rng, 0, 1) == 1;
    const auto [src_section, dst_section] =
        whole ? std::pair<hetero::section_spec<R>, hetero::section_spec<R>>{} : random_sections<R>(rng, extents);
    const hetero::section_spec<R> src_spec = whole ? [&] {
      hetero::section_spec<R> s{};
      for (int d = 0; d < R; ++d) s[d] = {0, extents[d], 1};
      return s;
    }()
                                                   : src_section;
    const hetero::section_spec<R> dst_spec = whole ? src_spec : dst_section;
    const auto path = random_path(rng);
    INFO("trial " << trial << ": extents " << hetero::detail::format_array(extents) << ", direction " << direction
                  << " (0 device->host, 1 host->device, 2 device->device), "
                  << (whole ? "whole arrays" : "sections") << ", path " << hetero::to_string(path)
                  << (async ? ", gmove_async" : ", gmove"));
    const std::uint64_t src_salt = 500 + static_cast<std::uint64_t>(trial), dst_salt = src_salt + 1000;
    auto run = [&](const auto& dst, const auto& src) {
      dist_test::fill(src, src_salt);
      dist_test::fill(dst, dst_salt);
      if (async) {
        auto handle = hetero::gmove_async(dst.section(dst_spec), src.section(src_spec));
        handle.wait();
      } else {
        hetero::gmove(dst.section(dst_spec), src.section(src_spec));
      }
      check_moved(dst, dst_spec, src_spec, dst_salt, src_salt);
    };
    using device_array = hetero::distributed_array<double, R, Memory>;
    using host_array = hetero::distributed_array<double, R, Kokkos::HostSpace>;
    if (direction == 0) {
      run(host_array(dst_space), device_array(src_space, {.device_path = path}));
    } else if (direction == 1) {
      run(device_array(dst_space, {.device_path = path}), host_array(src_space));
    } else {
      run(device_array(dst_space, {.device_path = path}), device_array(src_space, {.device_path = path}));
    }
  }
}

// gmove_get of a section of a one-sided device array into a local View (device or host memory)
// on every rank, then gmove_put of new values back.
template <class Memory, class LocalMemory>
void one_sided_moves(std::uint64_t stream, int trials) {
  auto rng = hetero::testing::rng(stream);
  for (int trial = 0; trial < trials; ++trial) {
    const auto space = random_space<2>(rng, 1, 60, false);
    const auto e = space.extents();
    const auto [section, unused] = random_sections<2>(rng, e);
    (void)unused;
    const auto path = random_path(rng);
    INFO("trial " << trial << ": extents " << hetero::detail::format_array(e) << ", path "
                  << hetero::to_string(path));
    hetero::distributed_array<double, 2, Memory> a(space, {.device_path = path, .one_sided = true});
    dist_test::fill(a, 700);
    a.sync_all();
    Kokkos::View<double**, Kokkos::LayoutRight, LocalMemory> local(
        "local", static_cast<std::size_t>(section[0].count()), static_cast<std::size_t>(section[1].count()));
    hetero::gmove_get(hetero::section(local, hetero::section_spec<2>{}), a.section(section));
    a.sync_all();
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, local);
    dist_test::mismatches wrong;
    for (std::int64_t i = 0; i < section[0].count(); ++i)
      for (std::int64_t j = 0; j < section[1].count(); ++j)
        wrong.expect(got(i, j) == value_at<double>(global_of(section, i, j), 700), "got element (", i, ", ", j,
                     ")");
    DIST_CHECK_NO_MISMATCH(wrong);
    // Rank 0 puts its section of new values; the others put nothing (an empty section).
    const int me = dist_test::world_rank();
    const auto values = Kokkos::create_mirror_view(local);
    for (std::int64_t i = 0; i < section[0].count(); ++i)
      for (std::int64_t j = 0; j < section[1].count(); ++j)
        values(i, j) = value_at<double>(std::array<std::int64_t, 2>{i, j}, 701);
    Kokkos::deep_copy(local, values);
    hetero::section_spec<2> none{hetero::slice{0, 0, 1}, hetero::slice{0, 0, 1}};
    if (me == 0) {
      hetero::gmove_put(a.section(section), hetero::section(local, hetero::section_spec<2>{}));
    } else {
      hetero::gmove_put(a.section(none), hetero::section(local, none));
    }
    a.sync_all();
    dist_test::mismatches put_wrong;
    dist_test::for_each_owned_element(a, [&](const auto& g, const double& v) {
      std::array<std::int64_t, 2> k{};
      const bool inside = position_in(section, g, k);
      put_wrong.expect(v == (inside ? value_at<double>(k, 701) : value_at<double>(g, 700)), "put element ",
                       hetero::detail::format_array(g));
    });
    DIST_CHECK_NO_MISMATCH(put_wrong);
  }
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("reflect refreshes every shadow of arrays in GPU memory", "[gpu][dist][reflect]",
                        gpu_memories) {
  random_reflects<TestType, 1>(201, 6);
  random_reflects<TestType, 2>(202, 6);
  random_reflects<TestType, 3>(203, 4);
}

TEMPLATE_LIST_TEST_CASE("gmove between GPU and host arrays of any layouts and sections", "[gpu][dist][gmove]",
                        gpu_memories) {
  random_gmoves<TestType, 1>(211, 8);
  random_gmoves<TestType, 2>(212, 8);
  random_gmoves<TestType, 3>(213, 6);
}

TEST_CASE("one-sided gmove between GPU arrays and device or host Views", "[gpu][dist][one_sided]") {
  one_sided_moves<gpu_test::device_memory, gpu_test::device_memory>(221, 4);
  one_sided_moves<gpu_test::device_memory, Kokkos::HostSpace>(222, 4);
  one_sided_moves<gpu_test::managed_memory, gpu_test::device_memory>(223, 3);
}

TEST_CASE("coarrays in GPU memory: get and put of sections between images", "[gpu][dist][coarray]") {
  auto rng = hetero::testing::rng(231);
  for (int trial = 0; trial < 6; ++trial) {
    const std::array<std::int64_t, 2> extents{uniform(rng, 1, 300), uniform(rng, 1, 300)};
    const auto [section, unused] = random_sections<2>(rng, extents);
    (void)unused;
    const auto path = random_path(rng);
    INFO("trial " << trial << ": extents " << hetero::detail::format_array(extents) << ", path "
                  << hetero::to_string(path));
    hetero::coarray<double, 2, gpu_test::device_memory> c(extents, {.device_path = path});
    const int me = c.this_image(), images = c.num_images();
    const int right = (me + 1) % images, left = (me + images - 1) % images;
    auto salt = [](int image) { return 900 + static_cast<std::uint64_t>(image); };
    auto mine = Kokkos::create_mirror_view(c.local());
    for_each_index<2>(extents, [&](const auto& g) { mine(g[0], g[1]) = value_at<double>(g, salt(me)); });
    Kokkos::deep_copy(c.local(), mine);
    c.sync_all();
    const auto fetched = c.get(right, section);  // a device View
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> on_host(
        "on_host", static_cast<std::size_t>(section[0].count()), static_cast<std::size_t>(section[1].count()));
    c.get(right, section, on_host);
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, fetched);
    dist_test::mismatches wrong;
    for (std::int64_t i = 0; i < section[0].count(); ++i)
      for (std::int64_t j = 0; j < section[1].count(); ++j) {
        const double expected = value_at<double>(global_of(section, i, j), salt(right));
        wrong.expect(got(i, j) == expected && on_host(i, j) == expected, "got element (", i, ", ", j, ")");
      }
    c.sync_all();
    // Put new values (from device memory) into the right neighbour's section.
    for (std::int64_t i = 0; i < section[0].count(); ++i)
      for (std::int64_t j = 0; j < section[1].count(); ++j)
        on_host(i, j) = value_at<double>(std::array<std::int64_t, 2>{i, j}, salt(me) + 50);
    const auto from = Kokkos::create_mirror_view_and_copy(gpu_test::device_memory{}, on_host);
    c.put(right, section, from);
    c.sync_all();
    Kokkos::deep_copy(mine, c.local());
    for_each_index<2>(extents, [&](const auto& g) {
      std::array<std::int64_t, 2> k{};
      const bool inside = position_in(section, g, k);
      const double expected = inside ? value_at<double>(k, salt(left) + 50) : value_at<double>(g, salt(me));
      wrong.expect(mine(g[0], g[1]) == expected, "put element ", hetero::detail::format_array(g));
    });
    DIST_CHECK_NO_MISMATCH(wrong);
    c.sync_all();
  }
}

TEST_CASE("owner loops and reductions run on the GPU over every owned index once", "[gpu][dist][loop]") {
  auto rng = hetero::testing::rng(241);
  for (int trial = 0; trial < 6; ++trial) {
    const auto space = random_space<2>(rng, 1, 400, trial % 2 == 0);
    INFO("trial " << trial << ": extents " << hetero::detail::format_array(space.extents()));
    hetero::distributed_array<double, 2, gpu_test::device_memory> u(space);
    const auto v = u.global_view();
    const std::int64_t n1 = space.extents()[1];
    hetero::for_each_owned(
        gpu_test::device(), "gpu_init", space, space.box(),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { v(i, j) += static_cast<double>(i * n1 + j) + 1.0; });
    double sum = 0, largest = 0, expected_sum = 0, expected_largest = 0;
    dist_test::mismatches wrong;
    dist_test::for_each_owned_element(u, [&](const auto& g, const double& x) {
      const double expected = static_cast<double>(g[0] * n1 + g[1]) + 1.0;  // written once: += on zeros
      wrong.expect(x == expected, "element ", hetero::detail::format_array(g));
      expected_sum += expected;
      expected_largest = std::max(expected_largest, expected);
    });
    DIST_CHECK_NO_MISMATCH(wrong);
    hetero::reduce_owned(
        gpu_test::device(), "gpu_sum", space, space.box(),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& s) { s += v(i, j); }, sum);
    hetero::reduce_owned(
        gpu_test::device(), "gpu_max", space, space.box(),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& m) { m = v(i, j) > m ? v(i, j) : m; },
        Kokkos::Max<double>(largest));
    CHECK(sum == expected_sum);  // integers below 2^53: exact in any order
    CHECK(largest == expected_largest);
  }
}

// Coarrays: get and put of random sections between images (into row- and column-major
// Views), sync_all and sync_images, staged, through MPI or in the node's shared memory; a put
// survives the target's syncs with other images; images of one node reach each other while
// the target never calls MPI; the errors.
#include <hetero/distarray/coarray.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "distarray_support.hpp"
#include "nodes.hpp"
#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using dist_test::for_each_index;

template <class View, std::size_t R>
auto& at(const View& v, const std::array<std::int64_t, R>& g) {
  if constexpr (R == 1) return v(g[0]);
  if constexpr (R == 2) return v(g[0], g[1]);
  if constexpr (R == 3) return v(g[0], g[1], g[2]);
}

template <class Layout, int R>
auto make_view(const std::array<std::int64_t, R>& e) {
  using view = Kokkos::View<typename hetero::detail::view_data<double, R>::type, Layout, Kokkos::HostSpace>;
  if constexpr (R == 1) return view("v", e[0]);
  if constexpr (R == 2) return view("v", e[0], e[1]);
  if constexpr (R == 3) return view("v", e[0], e[1], e[2]);
}

template <int R>
void random_coarrays(std::uint64_t stream, int trials) {
  auto rng = hetero::testing::rng(stream);
  for (int trial = 0; trial < trials; ++trial) {
    std::array<std::int64_t, R> extents{}, shape{};
    hetero::section_spec<R> section{};
    for (int d = 0; d < R; ++d) {
      extents[d] = dist_test::uniform(rng, 1, R == 1 ? 40 : 7);
      const std::int64_t step = dist_test::uniform(rng, 1, 3), begin = dist_test::uniform(rng, 0, extents[d] - 1);
      section[d] = {begin, dist_test::uniform(rng, begin, extents[d]), step};
      shape[d] = section[d].count();
    }
    // Staged, MPI's one-sided calls, or the node's shared memory (the default).
    const auto path = dist_test::uniform(rng, 0, 2);
    const auto mode = path == 0 ? hetero::device_buffer_path::staged : hetero::device_buffer_path::automatic;
    INFO("trial " << trial << ", staging " << hetero::to_string(mode) << ", shared memory " << (path == 2));
    hetero::coarray<double, R, Kokkos::HostSpace> a(extents, {.device_path = mode, .shared_memory = path == 2});
    const int me = a.this_image(), images = a.num_images();
    const int right = (me + 1) % images, left = (me + images - 1) % images;
    const auto salt = [](int image) { return 80 + static_cast<std::uint64_t>(image); };
    for_each_index<R>(extents,
                      [&](const auto& g) { at(a.local(), g) = dist_test::value_at<double>(g, salt(me)); });
    a.sync_all();

    // Get the section of the image to the right, into both layouts and a new View.
    dist_test::mismatches wrong;
    auto row_major = make_view<Kokkos::LayoutRight, R>(shape);
    auto column_major = make_view<Kokkos::LayoutLeft, R>(shape);
    a.get(right, section, row_major);
    a.get(right, section, column_major);
    const auto fresh = a.get(right, section);
    for_each_index<R>(shape, [&](const auto& k) {
      std::array<std::int64_t, R> g{};
      for (int d = 0; d < R; ++d) g[d] = section[d].begin + k[d] * section[d].step;
      const double expected = dist_test::value_at<double>(g, salt(right));
      wrong.expect(at(row_major, k) == expected && at(column_major, k) == expected && at(fresh, k) == expected,
                   "got element ", hetero::detail::format_array(k));
    });
    a.sync_all();  // every get is done before anyone writes

    // Put a section of new values into the image to the right; sync with the neighbours.
    for_each_index<R>(shape,
                      [&](const auto& k) { at(column_major, k) = dist_test::value_at<double>(k, salt(me) + 50); });
    a.put(right, section, column_major);
    if (trial % 2 == 0) {
      a.sync_all();
    } else {
      a.sync_images({left, right});
    }
    for_each_index<R>(extents, [&](const auto& g) {
      std::array<std::int64_t, R> k{};
      bool inside = true;
      for (int d = 0; d < R; ++d) {
        const auto& s = section[d];
        inside = inside && g[d] >= s.begin && g[d] < s.end && (g[d] - s.begin) % s.step == 0;
        if (inside) k[d] = (g[d] - s.begin) / s.step;
      }
      const double expected =
          inside ? dist_test::value_at<double>(k, salt(left) + 50) : dist_test::value_at<double>(g, salt(me));
      wrong.expect(at(a.local(), g) == expected, "put element ", hetero::detail::format_array(g));
    });
    DIST_CHECK_NO_MISMATCH(wrong);
    a.sync_all();
  }
}

}  // namespace

TEST_CASE("coarray get and put of random sections between images", "[dist][coarray]") {
  random_coarrays<1>(81, 8);
  random_coarrays<2>(82, 8);
  random_coarrays<3>(83, 4);
}

TEST_CASE("a put survives the target's synchronisation with other images", "[dist][coarray]") {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 3) SKIP("needs 3 images: the target syncs with a third image first");
  for (auto mode : {hetero::device_buffer_path::staged, hetero::device_buffer_path::automatic}) {
    hetero::coarray<int, 1, Kokkos::HostSpace> a({8}, {.device_path = mode});
    const int me = a.this_image();
    Kokkos::View<int*, Kokkos::HostSpace> values("values", 8);
    Kokkos::deep_copy(values, 7);
    if (me == 0) {
      a.put(1, {hetero::slice::all()}, values);
      a.sync_images({1});
    } else if (me == 1) {
      a.sync_images({2});  // staged: refreshes its snapshot before it learns of image 0's put
      a.sync_images({0});
      std::int64_t sevens = 0;
      for (int i = 0; i < 8; ++i) sevens += a.local()(i) == 7 ? 1 : 0;
      CHECK(sevens == 8);
    } else if (me == 2) {
      a.sync_images({1});
    }
    a.sync_all();
  }
}

TEST_CASE("images of one node get and put while the target never calls MPI", "[dist][coarray]") {
  // Image 1 spins on its own element 0 without calling MPI until image 0 puts a mark there;
  // image 0 first gets image 1's array and checks it. Through MPI (MPICH) the get would wait
  // for image 1's next MPI call, which comes only when its spin gives up.
  hetero::coarray<int, 1, Kokkos::HostSpace> a({4096});
  const auto layout = hetero::testing::node_layout_of(a.mpi_comm());
  if (a.num_images() < 2 || layout.node_size != a.num_images()) SKIP("needs 2 or more images, all on one node");
  auto rng = hetero::testing::rng(84);
  std::vector<int> values(4096);
  for (auto& v : values) v = static_cast<int>(dist_test::uniform(rng, 1, 1 << 30));
  const int me = a.this_image();
  if (me == 1)
    for (int i = 0; i < 4096; ++i) a.local()(i) = values[static_cast<std::size_t>(i)];
  a.sync_all();
  if (me == 1) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool marked = false;
    while (!marked && std::chrono::steady_clock::now() < give_up)
      marked = std::atomic_ref<int>(a.local()(0)).load(std::memory_order_acquire) == -1;
    CHECK(marked);
    std::int64_t kept = 0;  // the rest of the array is untouched
    for (int i = 1; i < 4096; ++i) kept += a.local()(i) == values[static_cast<std::size_t>(i)] ? 1 : 0;
    CHECK(kept == 4095);
  } else if (me == 0) {
    Kokkos::View<int*, Kokkos::HostSpace> got("got", 4096);
    a.get(1, {hetero::slice::all()}, got);
    std::int64_t right = 0;
    for (int i = 0; i < 4096; ++i) right += got(i) == values[static_cast<std::size_t>(i)] ? 1 : 0;
    CHECK(right == 4096);
    Kokkos::View<int*, Kokkos::HostSpace> mark("mark", 1);
    mark(0) = -1;
    a.put(1, {hetero::slice{0, 1}}, mark);
  }
  a.sync_all();
}

TEST_CASE("a coarray says which images it reaches through shared memory", "[dist][coarray]") {
  // The reference is the host name of every image (each emulated node has its own): an image
  // is reached through the node's segment exactly when it runs on this host, and only with
  // host memory and shared_memory on.
  hetero::coarray<double, 1, Kokkos::HostSpace> shared({64});
  hetero::coarray<double, 1, Kokkos::HostSpace> through_mpi({64}, {.shared_memory = false});
  const int p = shared.num_images();
  std::vector<char> names(static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME, '\0');
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME, '\0');
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  MPI_Allgather(mine.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                shared.mpi_comm());
  int remote = 0;
  for (int i = 0; i < p; ++i) {
    const bool same_host = std::string(names.data() + static_cast<std::size_t>(i) * MPI_MAX_PROCESSOR_NAME) ==
                           std::string(mine.data());
    INFO("image " << i << " of " << p);
    CHECK(shared.shares_memory_with(i) == same_host);
    CHECK_FALSE(through_mpi.shares_memory_with(i));
    remote += same_host ? 0 : 1;
  }
  // One node (every test's plain run): no remote image; every image its own node (the emulated
  // nodes' runs): all but itself.
  if (shared.comm().nodes() == 1) CHECK(remote == 0);
  if (shared.comm().nodes() == p) CHECK(remote == p - 1);
  CHECK_THROWS_WITH(shared.shares_memory_with(p), ContainsSubstring("image " + std::to_string(p) + " is outside"));
}

TEST_CASE("a coarray gives the arrays of the images it shares memory with", "[dist][coarray]") {
  // Every image fills its array with values drawn fresh (stream 70 + its number), which every
  // image draws again as the reference for the arrays it maps.
  hetero::coarray<double, 2, Kokkos::HostSpace> a({3, 5});
  hetero::coarray<double, 2, Kokkos::HostSpace> through_mpi({3, 5}, {.shared_memory = false});
  const auto drawn = [](int image) {
    auto rng = hetero::testing::rng(70 + static_cast<std::uint64_t>(image));
    std::uniform_real_distribution<double> value(-1, 1);
    std::vector<double> v(15);
    for (double& x : v) x = value(rng);
    return v;
  };
  const std::vector<double> mine = drawn(a.this_image());
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) a.local()(r, c) = mine[static_cast<std::size_t>(r * 5 + c)];
  a.sync_all();
  for (int i = 0; i < a.num_images(); ++i) {
    INFO("image " << i << " of " << a.num_images());
    const auto view = a.local(i);
    CHECK(through_mpi.local(i).data() == nullptr);
    if (!a.shares_memory_with(i)) {
      CHECK(view.data() == nullptr);
      continue;
    }
    REQUIRE(view.extent(0) == 3);
    REQUIRE(view.extent(1) == 5);
    if (i == a.this_image()) CHECK(view.data() == a.local().data());
    const std::vector<double> expected = drawn(i);
    int right = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 5; ++c) right += view(r, c) == expected[static_cast<std::size_t>(r * 5 + c)] ? 1 : 0;
    CHECK(right == 15);
  }
  a.sync_all();  // no image changes its array while another reads it
  CHECK_THROWS_WITH((void)a.local(a.num_images()), ContainsSubstring("is outside"));
}

TEST_CASE("own-image transfers are local copies in program order", "[dist][coarray]") {
  hetero::coarray<double, 2, Kokkos::HostSpace> a({3, 4}, {.device_path = hetero::device_buffer_path::staged});
  Kokkos::View<double**, Kokkos::HostSpace> block("block", 2, 2);
  Kokkos::deep_copy(block, 5.0);
  a.put(a.this_image(), {hetero::slice{1, 3}, hetero::slice{0, 4, 2}}, block);
  CHECK(a.local()(1, 0) == 5.0);  // visible at once on the own image
  CHECK(a.local()(2, 2) == 5.0);
  CHECK(a.local()(1, 1) == 0.0);
  auto back = a.get(a.this_image(), {hetero::slice{1, 2}, hetero::slice::all()});
  CHECK(back(0, 0) == 5.0);
  CHECK(back(0, 1) == 0.0);
  a.sync_all();
}

TEST_CASE("a coarray's communicator spans its images; one given is shared", "[dist][coarray]") {
  auto rng = hetero::testing::rng(177);
  const std::int64_t n = dist_test::uniform(rng, 1, 50);
  hetero::coarray<double, 1, Kokkos::HostSpace> a({n});  // a communicator of its own
  const int me = a.this_image();
  CHECK(a.comm().size() == a.num_images());
  CHECK(a.comm().rank() == me);
  CHECK(hetero::detail::congruent(a.comm().mpi_comm(), a.mpi_comm()));
  CHECK(a.comm().mpi_comm() != a.mpi_comm());  // the window keeps its own duplicate
  // Its collectives against MPI's on fresh values, every element.
  std::vector<double> mine(static_cast<std::size_t>(n));
  for (auto& v : mine) v = dist_test::uniform(rng, -1000, 1000) + 0.25 * me;
  Kokkos::View<double*, Kokkos::HostSpace> sums("sums", static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) sums(static_cast<std::size_t>(i)) = mine[static_cast<std::size_t>(i)];
  a.comm().allreduce(hetero::send_recv_buf(sums), hetero::op(hetero::ops::sum{}));
  std::vector<double> expected(mine.size());
  MPI_Allreduce(mine.data(), expected.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (std::int64_t i = 0; i < n; ++i)
    CHECK(sums(static_cast<std::size_t>(i)) == expected[static_cast<std::size_t>(i)]);

  const hetero::communicator given;
  hetero::coarray<double, 1, Kokkos::HostSpace> b({n}, given);
  CHECK(b.comm().mpi_comm() == given.mpi_comm());
  CHECK(b.comm().size() == b.num_images());
}

TEST_CASE("coarrays refuse images outside the communicator and mismatched sections", "[dist][coarray]") {
  hetero::coarray<double, 1, Kokkos::HostSpace> a({10});
  const int images = a.num_images();
  Kokkos::View<double*, Kokkos::HostSpace> v("v", 10);
  CHECK_THROWS_AS(a.get(images, {hetero::slice::all()}, v), hetero::invalid_argument);
  CHECK_THROWS_WITH(a.get(images, {hetero::slice::all()}, v),
                    ContainsSubstring("coarray::get: image " + std::to_string(images) +
                                      " is outside the communicator's images 0.." + std::to_string(images - 1)));
  CHECK_THROWS_WITH(a.put(-1, {hetero::slice::all()}, v), ContainsSubstring("coarray::put: image -1 is outside"));
  CHECK_THROWS_WITH(a.get(0, {hetero::slice{0, 11}}, v),
                    ContainsSubstring("coarray::get: section [0, 11) on axis 0 is out of bounds"));
  CHECK_THROWS_WITH(a.get(0, {hetero::slice{0, 5}}, v),
                    ContainsSubstring("coarray::get: the View has extents [10] but the section has shape [5]"));
  CHECK_THROWS_WITH(a.sync_images(std::vector<int>{images}),
                    ContainsSubstring("sync_images: image " + std::to_string(images)));
  using line = hetero::coarray<double, 1>;
  CHECK_THROWS_WITH(line({-3}), ContainsSubstring("coarray extent -3 on axis 0 is negative"));
  a.sync_all();
}

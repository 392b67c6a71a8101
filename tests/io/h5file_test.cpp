// h5file: random 1-D, 2-D and 3-D arrays of every element kind, every distribution on random
// grids with random shadows, written and read back into another random distribution, every
// element checked against its value by global index; the file itself read serially on rank 0
// (HDF5's sequential driver, as h5py would) and checked in global row-major order; sections;
// scalars; and every bad file or argument raising a named error on every rank. And the
// regions a write and a read show to an observer (docs/trace.md).
#include <hetero/io.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "io_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using dist_test::uniform;
using dist_test::world_rank;
using dist_test::world_size;
using io_test::random_space;

template <class T, int R>
void round_trip(std::uint64_t stream) {
  auto rng = hetero::testing::rng(stream);
  const io_test::scratch dir("io-round-trip");
  // Beyond 2 ranks this machine's cores are oversubscribed and each collective takes
  // milliseconds: one trial per type and rank count there, six on 1 and 2 ranks.
  const int trials = world_size() <= 2 ? 6 : 1;
  for (int trial = 0; trial < trials; ++trial) {
    std::array<std::int64_t, R> extents{};
    for (int d = 0; d < R; ++d) extents[d] = uniform(rng, 1, R == 1 ? 4000 : (R == 2 ? 60 : 14));
    hetero::shadow_width<R> shadow;
    const auto from = random_space<R>(rng, extents, &shadow);
    const auto salt = rng();
    hetero::distributed_array<T, R, Kokkos::HostSpace> a(from, {.shadow = shadow, .label = "written"});
    io_test::fill(a, salt);
    const auto path = dir.file("trial" + std::to_string(trial) + ".h5");
    {
      // Every other trial with each rank writing its own pieces (ROMIO's collective buffering off).
      const hetero::h5file_options options{.hints = {}, .independent_on_one_node = trial % 2 == 1};
      hetero::h5file out(path, hetero::file_mode::create, MPI_COMM_WORLD, options);
      out.write("group/a", a);
      out.set("salt", salt);
      out.close();
    }
    // The file holds the plain array: read serially by one rank, in global row-major order.
    if (world_rank() == 0) {
      const auto wrong = io_test::file_mismatches<T>(path, "group/a", extents, salt);
      DIST_CHECK_NO_MISMATCH(wrong);
    }
    // Read into another random distribution and grid, with other shadows.
    hetero::shadow_width<R> other_shadow;
    const auto to = random_space<R>(rng, extents, &other_shadow);
    hetero::distributed_array<T, R, Kokkos::HostSpace> b(to, {.shadow = other_shadow, .label = "read"});
    hetero::h5file in(path, hetero::file_mode::read, MPI_COMM_WORLD,
                      {.hints = {{"cb_buffer_size", "1048576"}}, .independent_on_one_node = trial % 2 == 0});
    CHECK(in.get<std::uint64_t>("salt") == salt);
    CHECK(in.extents("group/a") == std::vector<std::int64_t>(extents.begin(), extents.end()));
    in.read("group/a", b);
    CHECK(io_test::wrong_elements(b, salt) == 0);
    // A random section of it into an array of the section's shape.
    hetero::index_box<R> box;
    for (int d = 0; d < R; ++d) {
      box.begin[d] = uniform(rng, 0, extents[d] - 1);
      box.end[d] = uniform(rng, box.begin[d] + 1, extents[d]);
    }
    std::array<std::int64_t, R> section_extents{};
    for (int d = 0; d < R; ++d) section_extents[d] = box.extent(d);
    hetero::distributed_array<T, R, Kokkos::HostSpace> c(random_space<R>(rng, section_extents, nullptr),
                                                         {.label = "section"});
    in.read("group/a", c, box);
    CHECK(io_test::wrong_elements(c, salt, box.begin) == 0);
  }
}

// Word `w` of the element of `size` bytes at `element`, zero-padded past its end.
std::uint64_t word_at(const unsigned char* element, std::size_t size, std::size_t w) {
  std::uint64_t word = 0;
  std::memcpy(&word, element + 8 * w, std::min<std::size_t>(8, size - 8 * w));
  return word;
}

// The checksum as a loop over the global index space in row-major order: each element's
// words (zero-padded) mixed with their global word index, summed modulo 2^64.
template <class T, int R>
std::uint64_t serial_checksum(const std::array<std::int64_t, R>& extents, std::uint64_t salt) {
  constexpr std::size_t words = (sizeof(T) + 7) / 8;
  std::uint64_t sum = 0, i = 0;  // i: the element's row-major index
  dist_test::for_each_index<R>(extents, [&](const std::array<std::int64_t, R>& g) {
    const T value = io_test::value_at<T>(g, salt);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
    for (std::size_t w = 0; w < words; ++w)
      sum += hetero::detail::checksum_mix(word_at(bytes, sizeof(T), w), i * words + w);
    ++i;
  });
  return sum;
}

template <class T, int R>
void checksum_against_loop(std::uint64_t stream, std::int64_t largest) {
  auto rng = hetero::testing::rng(stream);
  for (int trial = 0; trial < 3; ++trial) {
    std::array<std::int64_t, R> extents{};
    for (int d = 0; d < R; ++d) extents[d] = uniform(rng, 1, largest);
    hetero::shadow_width<R> shadow;
    const auto space = random_space<R>(rng, extents, &shadow);
    hetero::distributed_array<T, R, Kokkos::HostSpace> a(space, {.shadow = shadow, .label = "summed"});
    const auto salt = rng();
    io_test::fill(a, salt);
    const auto expected = serial_checksum<T, R>(extents, salt);
    for (const bool simd : {true, false}) {
      CAPTURE(simd);
      const auto local =
          hetero::detail::local_checksum<T, R>(a.local_with_shadow(), a.shadow().lower, space, simd);
      CHECK(hetero::detail::sum_checksum(local, MPI_COMM_WORLD) == expected);
    }
  }
}

// The sum of checksum_mix over `n` elements of `size` bytes, element k's global index
// `first + k * stride`: the definition, one word at a time.
std::uint64_t mixed_words(const unsigned char* bytes, std::int64_t n, std::size_t size, std::uint64_t first,
                          std::uint64_t stride) {
  const std::size_t words = (size + 7) / 8;
  std::uint64_t sum = 0;
  for (std::int64_t k = 0; k < n; ++k)
    for (std::size_t w = 0; w < words; ++w)
      sum += hetero::detail::checksum_mix(word_at(bytes + k * static_cast<std::int64_t>(size), size, w),
                                          (first + static_cast<std::uint64_t>(k) * stride) * words + w);
  return sum;
}

}  // namespace

TEST_CASE("the checksum is the loop's sum over the global array, whatever the distribution", "[io][checksum]") {
  // 1-D blocks up to 3 x 10^5 elements: rows longer than one piece of the parallel sum
  // (checksum_piece), so that a row is summed by several work items.
  checksum_against_loop<double, 1>(41, 300000);
  checksum_against_loop<std::complex<double>, 1>(42, 200000);
  checksum_against_loop<std::uint8_t, 1>(43, 200000);
  checksum_against_loop<float, 2>(44, 300);
  checksum_against_loop<std::int32_t, 3>(45, 40);
}

TEST_CASE("the checksum's vector loop and its scalar loop both give the definition's sum", "[io][checksum]") {
  auto rng = hetero::testing::rng(46);
  for (const std::size_t size : {1U, 2U, 4U, 8U, 16U}) {
    for (int trial = 0; trial < 40; ++trial) {
      // Runs of 0-300 elements from an odd offset (unaligned loads), any first index and stride.
      const auto n = static_cast<std::int64_t>(uniform(rng, 0, 300));
      std::vector<unsigned char> bytes(static_cast<std::size_t>(n) * size + 1);
      for (auto& b : bytes) b = static_cast<unsigned char>(rng());
      const std::uint64_t first = rng() >> 8, stride = static_cast<std::uint64_t>(uniform(rng, 1, 9));
      const std::uint64_t words = (size + 7) / 8, factor = hetero::detail::checksum_index_factor;
      const auto run = [&](bool simd) {
        return hetero::detail::checksum_run(bytes.data() + 1, n, size, first * words * factor,
                                            stride * words * factor, simd);
      };
      CAPTURE(size, n, stride);
      const auto expected = mixed_words(bytes.data() + 1, n, size, first, stride);
      CHECK(run(false) == expected);
      CHECK(run(true) == expected);
    }
  }
  if (!hetero::detail::checksum_simd_available())
    SKIP("this processor has no vector loop for the checksum (AVX2): the scalar loop was checked twice");
}

TEMPLATE_TEST_CASE("an array of any distribution is written and read into any other", "[io]", double, float,
                   std::int32_t, std::uint64_t, std::int64_t, std::uint8_t, std::complex<double>) {
  // Beyond 2 ranks (this machine's cores oversubscribed: about 7 s per element type on 5 ranks)
  // three types stand for the rest: one floating, one integer and the widest. The element type
  // changes only the HDF5 type and the byte counts, which 1 and 2 ranks check for every type.
  constexpr bool stands_for_the_rest = std::is_same_v<TestType, double> ||
                                       std::is_same_v<TestType, std::int32_t> ||
                                       std::is_same_v<TestType, std::complex<double>>;
  if (world_size() > 2 && !stands_for_the_rest) {
    SKIP(
        "this element type is checked on 1 and 2 ranks; beyond 2, double, std::int32_t and "
        "std::complex<double> are");
  }
  round_trip<TestType, 1>(11);
  round_trip<TestType, 2>(12);
  round_trip<TestType, 3>(13);
}

TEST_CASE("scalars are stored beside the arrays", "[io]") {
  const io_test::scratch dir("io-scalars");
  auto rng = hetero::testing::rng(21);
  const double residual = std::uniform_real_distribution<double>(0, 1)(rng);
  const auto iteration = static_cast<std::int64_t>(rng() >> 2);
  {
    hetero::h5file out(dir.file("s.h5"), hetero::file_mode::create);
    out.set("residual", residual);
    out.set("iteration", iteration);
    out.set("iteration", iteration + 1);  // replaced
  }
  hetero::h5file in(dir.file("s.h5"), hetero::file_mode::read);
  CHECK(in.get<double>("residual") == residual);
  CHECK(in.get<std::int64_t>("iteration") == iteration + 1);
  CHECK_THROWS_AS(in.get<float>("residual"), hetero::io_error);
  CHECK_THROWS_WITH(in.get<float>("residual"), ContainsSubstring("is of type float64, not float32"));
  CHECK_THROWS_WITH(in.get<double>("missing"), ContainsSubstring("no scalar 'missing'"));
}

namespace {

// The io module's regions as they nest ("write", "  checksum"...), in the order entered.
class io_regions final : public hetero::observer {
 public:
  void region_begin(std::string_view module, std::string_view label, std::string_view) noexcept override {
    const std::lock_guard lock(m_mutex);
    if (module == "io") m_seen.push_back(std::string(2 * m_io_depth, ' ') + std::string(label));
    m_io.push_back(module == "io");
    m_io_depth += module == "io" ? 1 : 0;
  }
  void region_end() noexcept override {
    const std::lock_guard lock(m_mutex);
    if (m_io.empty()) return;
    m_io_depth -= m_io.back() ? 1 : 0;
    m_io.pop_back();
  }
  [[nodiscard]] hetero::observer_events events() const noexcept override {
    return hetero::observer_events::regions;
  }
  std::vector<std::string> take() {
    const std::lock_guard lock(m_mutex);
    return std::exchange(m_seen, {});
  }

 private:
  std::mutex m_mutex;
  std::vector<std::string> m_seen;
  std::vector<bool> m_io;  // per region entered and not left: whether it is the io module's
  std::size_t m_io_depth = 0;
};

}  // namespace

TEST_CASE("a write and a read show their steps as regions", "[io][regions]") {
  const io_test::scratch dir("io-regions");
  auto rng = hetero::testing::rng(31);
  const auto space = random_space<2>(rng, {uniform(rng, 1, 40), uniform(rng, 1, 40)}, nullptr);
  hetero::distributed_array<double, 2, Kokkos::HostSpace> a(space, {.label = "a"});
  const auto salt = rng();
  io_test::fill(a, salt);
  io_regions regions;
  const hetero::scoped_observer listening(regions);
  {
    hetero::h5file out(dir.file("r.h5"), hetero::file_mode::create);
    out.write("a", a);
    out.flush();
    out.close();
  }
  CHECK(regions.take() == std::vector<std::string>{"open", "write", "  create dataset", "  data", "  checksum",
                                                   "  attributes", "flush", "close"});
  {
    hetero::h5file in(dir.file("r.h5"), hetero::file_mode::read);
    in.read("a", a);
    in.close();
  }
  CHECK(regions.take() == std::vector<std::string>{"open", "read", "  data", "  checksum", "close"});
  CHECK(io_test::wrong_elements(a, salt) == 0);
}

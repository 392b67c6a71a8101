// The shared-memory slabs that hold copies of tiles between ranks of one node (node_copies.hpp),
// in one process: what the owner writes through its mapping the reader finds through its own;
// the failures a node can give (no room, a name taken or gone) are named errors, and a slab
// leaves /dev/shm with its creator. The reader's sweep over a received copy before its first
// reader (data_memory.hpp's read_through) stays within the copy.
#include <hetero/core/error.hpp>
#include <hetero/task/detail/data_memory.hpp>
#include <hetero/task/detail/node_copies.hpp>

#include <sys/statvfs.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "random.hpp"

namespace {

using Catch::Matchers::ContainsSubstring;
using hetero::detail::shared_slab;
using hetero::detail::shared_slab_name;

// The sum of the words `read_through` reads: the one at every 64th byte that ends within `n`.
std::uint64_t words_every_line(const std::byte* p, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i + 8 <= n; i += 64) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    sum += w;
  }
  return sum;
}

std::vector<std::byte> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::byte> bytes(n);
  for (auto& b : bytes) b = static_cast<std::byte>(rng() & 0xFFU);
  return bytes;
}

}  // namespace

TEST_CASE("a tile copied into a reserved part of a slab through one mapping is read through the other",
          "[task][data]") {
  auto rng = hetero::testing::rng(71);
  constexpr std::size_t tile = 3 * 4096 + 40;  // not a whole number of pages
  const std::string name = shared_slab_name(hetero::detail::new_slab_nonce(), 0);
  shared_slab reader = shared_slab::create(name, hetero::detail::slab_tiles * tile);
  shared_slab owner = shared_slab::open(name, hetero::detail::slab_tiles * tile);
  for (std::size_t t : {std::size_t{5}, std::size_t{0}, hetero::detail::slab_tiles - 1}) {
    INFO("tile " << t);
    // Reserved through the owner's mapping, as the owner's first copy does, or through the
    // reader's, as a reader does before MPI writes into its copy.
    shared_slab& reserving = t % 2 == 0 ? owner : reader;
    shared_slab::reserve(reserving.base() + t * tile, tile, name, t * tile);
    const auto version = random_bytes(rng, tile);
    hetero::detail::stream_copy(owner.base() + t * tile, version.data(), tile);
    CHECK(std::memcmp(reader.base() + t * tile, version.data(), tile) == 0);
  }
}

TEST_CASE("streaming copies equal memcpy at every alignment and length", "[task][data]") {
  auto rng = hetero::testing::rng(72);
  const auto from = random_bytes(rng, 4096 + 64);
  for (int round = 0; round < 200; ++round) {
    const std::size_t at = rng() % 32, off = rng() % 32, n = rng() % 4096;
    std::vector<std::byte> to(4096 + 64, std::byte{0}), expected(to);
    std::memcpy(expected.data() + at, from.data() + off, n);
    hetero::detail::stream_copy(to.data() + at, from.data() + off, n);
    INFO("to + " << at << ", from + " << off << ", " << n << " bytes");
    REQUIRE(to == expected);
  }
}

TEST_CASE("a received copy read through before its first reader is read word by word, within its bytes",
          "[task][data]") {
  auto rng = hetero::testing::rng(73);
  // A tile the owner streamed into the reader's slab, as the first reader finds it.
  constexpr std::size_t tile = 2 * 4096 + 24;
  const std::string name = shared_slab_name(hetero::detail::new_slab_nonce(), 0);
  shared_slab reader = shared_slab::create(name, hetero::detail::slab_tiles * tile);
  shared_slab owner = shared_slab::open(name, hetero::detail::slab_tiles * tile);
  shared_slab::reserve(owner.base() + 3 * tile, tile, name, 3 * tile);
  const auto version = random_bytes(rng, tile);
  hetero::detail::stream_copy(owner.base() + 3 * tile, version.data(), tile);
  CHECK(hetero::detail::read_through(reader.base() + 3 * tile, tile) == words_every_line(version.data(), tile));
  // Every length and start, each in a heap block of exactly that length: a load past either
  // end is an AddressSanitizer report in the sanitizer stage.
  for (int round = 0; round < 300; ++round) {
    const std::size_t n = rng() % 1024, at = rng() % 64;
    auto block = std::make_unique<std::byte[]>(at + n);
    const auto bytes = random_bytes(rng, at + n);
    std::memcpy(block.get(), bytes.data(), at + n);
    INFO(n << " bytes at + " << at);
    REQUIRE(hetero::detail::read_through(block.get() + at, n) == words_every_line(bytes.data() + at, n));
  }
}

TEST_CASE("a slab larger than the room in /dev/shm, a name taken and a slab gone are named errors",
          "[task][data]") {
  const std::uint64_t nonce = hetero::detail::new_slab_nonce();
  struct statvfs room {};
  REQUIRE(::statvfs("/dev/shm", &room) == 0);
  const std::size_t too_large = static_cast<std::size_t>(room.f_bavail) * room.f_frsize + (std::size_t{1} << 30);
  CHECK_THROWS_MATCHES(
      shared_slab::create(shared_slab_name(nonce, 1), too_large), hetero::runtime_error,
      Catch::Matchers::MessageMatches(ContainsSubstring("cannot find room for the shared memory") &&
                                      ContainsSubstring("node_shared_copies = false")));
  // Nothing of the refused slab is left.
  CHECK_THROWS_AS(shared_slab::open(shared_slab_name(nonce, 1), 4096), hetero::runtime_error);

  {
    shared_slab first = shared_slab::create(shared_slab_name(nonce, 2), 4096);
    CHECK_THROWS_MATCHES(shared_slab::create(shared_slab_name(nonce, 2), 4096), hetero::runtime_error,
                         Catch::Matchers::MessageMatches(ContainsSubstring("cannot create")));
  }
  // Gone with its creator.
  CHECK_THROWS_MATCHES(shared_slab::open(shared_slab_name(nonce, 2), 4096), hetero::runtime_error,
                       Catch::Matchers::MessageMatches(ContainsSubstring("cannot open")));
}

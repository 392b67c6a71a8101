// h5file::write_async: the array may change as soon as the call returns (the file holds the
// values it had then, every element checked); several writes in flight complete in order and
// a synchronous call waits for them; a task graph adopts the handle and its task runs after
// the data is in the file; an error reaches wait() on every rank (an array refused on one rank
// too); a copy of a large block goes
// into memory aligned for huge pages (io/detail/copy_memory.hpp). And the early write-back
// thread of write() and write_async (io/detail/writeback.hpp).
#include <hetero/io.hpp>
#include <hetero/task.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_predicate.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "io_support.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using array2 = hetero::distributed_array<double, 2, Kokkos::HostSpace>;

array2 random_array(std::mt19937_64& rng) {
  const std::int64_t rows = dist_test::uniform(rng, 20, 90), cols = dist_test::uniform(rng, 5, 40);
  const auto grid = dist_test::random_grid<2>(rng, dist_test::world_size());
  return array2(hetero::index_space<2>(
      {rows, cols}, hetero::process_grid<2>(grid),
      {dist_test::random_distribution(rng, rows, grid[0]), dist_test::random_distribution(rng, cols, grid[1])}));
}

array2 same_shape_block(const array2& a) {
  return array2(hetero::index_space<2>(a.space().extents(), hetero::process_grid<2>()));
}

}  // namespace

TEST_CASE("write_async writes the values the array had when it was called", "[io][async]") {
  const io_test::scratch dir("io-async");
  auto rng = hetero::testing::rng(51);
  std::vector<array2> arrays;
  std::vector<std::uint64_t> salts;
  std::vector<hetero::io_handle> pending;
  hetero::h5file out(dir.file("a.h5"), hetero::file_mode::create);
  for (int i = 0; i < 4; ++i) {
    arrays.push_back(random_array(rng));
    salts.push_back(rng());
    io_test::fill(arrays.back(), salts.back());
    pending.push_back(out.write_async("a" + std::to_string(i), arrays.back()));
    io_test::fill(arrays.back(), salts.back() ^ 1);  // changed at once: the file keeps the old values
  }
  pending[1].wait();
  out.set("written", std::int64_t{4});  // a synchronous call waits for the writes before it
  for (auto& handle : pending) {
    handle.wait();
    CHECK(handle.done());
    CHECK(handle.test());
  }
  out.flush();  // waits for the write-backs the I/O thread's writes started
  out.close();
  hetero::h5file in(dir.file("a.h5"), hetero::file_mode::read);
  CHECK(in.get<std::int64_t>("written") == 4);
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    auto back = same_shape_block(arrays[i]);
    in.read("a" + std::to_string(i), back);
    CHECK(io_test::wrong_elements(back, salts[i]) == 0);
  }
}

TEST_CASE("assigning another file over one with writes in flight finishes them first", "[io][async]") {
  // The assignment closes the first file as close() does: its writes finish, then HDF5 closes
  // it, one thread in HDF5 at a time (before, it was closed at once, beside the I/O thread's
  // write or before it).
  const io_test::scratch dir("io-async-assign");
  auto rng = hetero::testing::rng(54);
  auto a = random_array(rng);
  const auto salt = rng();
  io_test::fill(a, salt);
  hetero::h5file out(dir.file("first.h5"), hetero::file_mode::create);
  hetero::h5file second(dir.file("second.h5"), hetero::file_mode::create);  // opened before the write
  auto saved = out.write_async("a", a);
  out = std::move(second);
  CHECK(saved.test());  // finished by the assignment
  saved.wait();
  CHECK(out.path() == dir.file("second.h5"));
  out.write("a", a);  // the file taken over is open
  out.close();
  for (const char* name : {"first.h5", "second.h5"}) {
    hetero::h5file in(dir.file(name), hetero::file_mode::read);
    auto back = same_shape_block(a);
    in.read("a", back);
    CHECK(io_test::wrong_elements(back, salt) == 0);
  }
}

TEST_CASE("a task graph adopts an asynchronous write", "[io][async][task]") {
  const io_test::scratch dir("io-async-graph");
  auto rng = hetero::testing::rng(52);
  auto a = random_array(rng);
  const auto salt = rng();
  io_test::fill(a, salt);
  hetero::h5file out(dir.file("g.h5"), hetero::file_mode::create);
  hetero::task_graph graph({.workers = 2});
  auto saved = graph.event("saved");
  bool ran_after = false;
  graph.adopt(hetero::out(saved), out.write_async("a", a), "write a");
  graph.spawn("after the write", hetero::in(saved), [&] { ran_after = true; });
  graph.wait();
  CHECK(ran_after);
  auto back = same_shape_block(a);
  out.read("a", back);
  CHECK(io_test::wrong_elements(back, salt) == 0);
}

TEST_CASE("an asynchronous write's error reaches wait() on every rank", "[io][async][errors]") {
  const io_test::scratch dir("io-async-error");
  auto rng = hetero::testing::rng(53);
  auto a = random_array(rng);
  hetero::h5file out(dir.file("e.h5"), hetero::file_mode::create);
  out.write("a", a);
  array2 other(hetero::index_space<2>({a.space().extent(0) + 1, 3}, hetero::process_grid<2>()));
  auto handle = out.write_async("a", other);  // the name is taken by another shape
  CHECK_THROWS_WITH(handle.wait(), ContainsSubstring("already holds a dataset of that name"));
  CHECK(handle.done());
}

// Before, the rank whose copy failed threw from write_async, while the other ranks' I/O
// threads went on into the collective write without it (a hang).
TEST_CASE("a copy that fails on one rank is an error on every rank and not a hang", "[io][async][errors]") {
  const io_test::scratch dir("io-async-copy");
  auto rng = hetero::testing::rng(57);
  auto u = random_array(rng);
  const auto salt = rng();
  io_test::fill(u, salt);
  hetero::h5file out(dir.file("copy.h5"), hetero::file_mode::create);
  const bool failing = dist_test::world_rank() == dist_test::world_size() - 1;
  if (failing) hetero::detail::refuse_next_copy_memory() = true;
  auto saved = out.write_async("u", u);
  CHECK_THROWS_WITH(
      saved.wait(),
      ContainsSubstring("writing dataset 'u' asynchronously") &&
          ContainsSubstring(failing ? "copying this rank's block failed" : "failed on another rank") &&
          ContainsSubstring(failing ? "nothing was written" : "that rank's error says why"));
  CHECK_FALSE(out.contains("u"));
  out.write("u", u);  // the file still works
  out.close();
  hetero::h5file in(dir.file("copy.h5"), hetero::file_mode::read);
  auto back = same_shape_block(u);
  in.read("u", back);
  CHECK(io_test::wrong_elements(back, salt) == 0);
}

// Before, a rank passing an array on other ranks than the file's threw from write_async alone,
// while the other ranks' I/O threads waited for it in the job's agreement until their timeout.
TEST_CASE("an array refused on one rank is an error from wait() on every rank and not a wait",
          "[io][async][errors]") {
  if (dist_test::world_size() < 2) SKIP("needs 2 or more ranks");
  const io_test::scratch dir("io-async-refused");
  auto rng = hetero::testing::rng(59);
  auto u = random_array(rng);
  const auto salt = rng();
  io_test::fill(u, salt);
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, dist_test::world_rank() % 2, 0, &half);
  {
    // Of u's shape: a shape that differs is refused first, as arguments that differ.
    array2 part(hetero::index_space<2>(u.space().extents(), hetero::process_grid<2>({0, 0}, half)));
    hetero::h5file out(dir.file("refused.h5"), hetero::file_mode::create);
    // Every rank passes such an array: each raises the check's own error, from wait().
    hetero::io_handle all = out.write_async("p", part);
    CHECK_THROWS_AS(all.wait(), hetero::invalid_argument);
    // Only rank 0 does.
    const bool refused = dist_test::world_rank() == 0;
    hetero::io_handle one = refused ? out.write_async("u", part) : out.write_async("u", u);
    if (refused) {
      CHECK_THROWS_WITH(one.wait(), ContainsSubstring("not over the file's ranks"));
    } else {
      CHECK_THROWS_WITH(one.wait(), ContainsSubstring("writing dataset 'u' asynchronously") &&
                                        ContainsSubstring("failed on another rank (rank 0"));
    }
    CHECK_FALSE(out.contains("u"));
    CHECK_FALSE(out.contains("p"));
    out.write_async("u", u).wait();  // the file still works
  }
  MPI_Comm_free(&half);
  hetero::h5file in(dir.file("refused.h5"), hetero::file_mode::read);
  auto back = same_shape_block(u);
  in.read("u", back);
  CHECK(io_test::wrong_elements(back, salt) == 0);
}

TEST_CASE("the I/O thread hands each hetero error back as its own type, with its facts", "[io][async][errors]") {
  // A deadlock_error (a collective write whose ranks did not all come) reached wait() as a plain
  // hetero::error, and an mpi_error lost its call and code.
  auto& thread = hetero::detail::io_thread::instance();
  const auto rethrown = [&](auto thrown) {
    auto job = thread.submit([thrown] { throw thrown; });
    try {
      job->wait();
    } catch (const decltype(thrown)& e) {
      return std::string(e.what());
    } catch (const std::exception& e) {
      return std::string("another type: ") + e.what();
    }
    return std::string("nothing thrown");
  };
  CHECK(rethrown(hetero::io_error("full disk", "x.h5")) == "full disk");
  CHECK(rethrown(hetero::invalid_argument("bad box")) == "bad box");
  CHECK(rethrown(hetero::distribution_error("no cover")) == "no cover");
  CHECK(rethrown(hetero::backend_error("no device")) == "no device");
  CHECK(rethrown(hetero::runtime_error("refused")) == "refused");
  CHECK(rethrown(hetero::mpi_error("MPI_File_write_at_all", 15, "write failed")) == "write failed");
  CHECK(rethrown(hetero::deadlock_error("ranks 1, 2 never came", {1, 2}, 2.5, 3, 0)) == "ranks 1, 2 never came");
  auto plain = thread.submit([] { throw std::out_of_range("plain"); });
  CHECK_THROWS_AS(plain->wait(), hetero::error);  // any other exception: hetero::error, its text kept

  auto mpi_job = thread.submit([] { throw hetero::mpi_error("MPI_File_sync", 7, "sync failed"); });
  CHECK_THROWS_MATCHES(mpi_job->wait(), hetero::mpi_error,
                       Catch::Matchers::Predicate<hetero::mpi_error>([](const hetero::mpi_error& e) {
                         return e.call() == "MPI_File_sync" && e.code() == 7;
                       }));
  auto late = thread.submit([] { throw hetero::deadlock_error("gave up", {2}, 1.5, 3, 1); });
  try {
    late->wait();
    FAIL("no deadlock_error");
  } catch (const hetero::deadlock_error& e) {
    CHECK(e.missing_ranks() == std::vector<int>{2});
    CHECK(e.waited_seconds() == 1.5);
    CHECK(e.comm_size() == 3);
    CHECK(e.rank() == 1);
  }
}

TEST_CASE("write_async copies large blocks into memory aligned for huge pages", "[io][async]") {
  using hetero::detail::huge_block_bytes;
  using hetero::detail::huge_page_bytes;
  const auto address = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{1000}}) {
    const auto small = hetero::detail::allocate_copy_memory<double>(count);
    REQUIRE(small != nullptr);
    CHECK(address(small.get()) % alignof(std::max_align_t) == 0);
  }
  const std::size_t count = huge_block_bytes / sizeof(std::complex<double>) + 3;  // not a whole page
  const auto large = hetero::detail::allocate_copy_memory<std::complex<double>>(count);
  REQUIRE(large != nullptr);
  CHECK(address(large.get()) % huge_page_bytes == 0);
  for (std::size_t i = 0; i < count; ++i) large[i] = {double(i), -double(i)};
  CHECK(large[count - 1] == std::complex<double>(double(count - 1), -double(count - 1)));

  // A block of 4.5 MiB on every rank, whatever their number, written from such memory.
  const io_test::scratch dir("io-async-large");
  auto rng = hetero::testing::rng(55);
  const std::int64_t rows = 576 * dist_test::world_size(), cols = 1024;  // 4.5 MiB per rank
  array2 a(hetero::index_space<2>({rows, cols}, hetero::process_grid<2>({0, 1})));
  const auto salt = rng();
  io_test::fill(a, salt);
  {
    hetero::h5file out(dir.file("l.h5"), hetero::file_mode::create);
    out.write_async("a", a).wait();
  }
  hetero::h5file in(dir.file("l.h5"), hetero::file_mode::read);
  auto back = same_shape_block(a);
  in.read("a", back);
  CHECK(io_test::wrong_elements(back, salt) == 0);
}

// A synchronous write starts its data's way to disk on a thread of its own (io/detail/
// writeback.hpp), waited for by flush() and left to finish by close(): here under
// ThreadSanitizer too (this program's runs on 2 and 3 ranks).
TEST_CASE("writes whose data leaves for the disk early read back whole", "[io][writeback]") {
  const io_test::scratch dir("io-writeback");
  auto rng = hetero::testing::rng(54);
  std::vector<array2> arrays;
  std::vector<std::uint64_t> salts;
  {
    hetero::h5file out(dir.file("w.h5"), hetero::file_mode::create);
    for (int i = 0; i < 6; ++i) {
      arrays.push_back(random_array(rng));
      salts.push_back(rng());
      io_test::fill(arrays.back(), salts.back());
      out.write("a" + std::to_string(i), arrays.back());
      if (i == 2) out.flush();  // three written back, then three more left running at the close
    }
    out.close();
  }
  hetero::h5file in(dir.file("w.h5"), hetero::file_mode::read);
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    auto back = same_shape_block(arrays[i]);
    in.read("a" + std::to_string(i), back);
    CHECK(io_test::wrong_elements(back, salts[i]) == 0);
  }
  // A write-back whose write never said its data was in (it failed first): wait() and
  // release() end it, instead of it asking the kernel every millisecond from then on.
  hetero::detail::writebacks early;
  early.start(dir.file("w.h5"));
  early.wait();
  early.start(dir.file("w.h5"));
  early.release();
  // A path that is not there (the file moved away meanwhile): nothing happens.
  early.start(dir.file("not-there.h5"));
  early.wait();
  early.start(dir.file("not-there.h5"));
  early.release();
  CHECK_FALSE(std::filesystem::exists(dir.file("not-there.h5")));
}

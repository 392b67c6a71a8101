// h5file's bad paths: every rank raises a named error, nothing hangs and nothing is read as
// data, for a missing file, a file that is not HDF5, a truncated file, a corrupted superblock,
// corrupted data (caught by the checksum), a missing dataset, another element type, rank or
// shape, a section outside the dataset, sections, dataset names or scalars that differ between
// ranks, selections that fail on one rank, no memory to stage a block on one rank, a path that
// cannot be written, a write into a file opened for reading, a dataset name taken by another
// shape, an array on other ranks than the file's, and a closed file. After each error the file
// still works.
#include <hetero/io.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <dlfcn.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <utility>

#include "io_support.hpp"

using Catch::Matchers::ContainsSubstring;
using dist_test::world_rank;
using dist_test::world_size;

namespace {
std::atomic<bool> g_fail_open_here{false};  // this rank's next H5Fopen reports failure, the file kept open
std::atomic<bool> g_watch_closes{false};
std::atomic<int> g_closed_unlocked{0};  // H5Fclose calls made without hetero's HDF5 lock
hid_t g_kept_file = H5I_INVALID_HID;

herr_t real_H5Fclose(hid_t id) {
  static const auto next = reinterpret_cast<herr_t (*)(hid_t)>(::dlsym(RTLD_NEXT, "H5Fclose"));
  return next(id);
}
}  // namespace

// This program's H5Fopen: when armed, the file opens (MPI-IO's collective open completes on
// every rank) but this rank reports failure, as if HDF5 had refused it here only.
extern "C" hid_t H5Fopen(const char* name, unsigned flags, hid_t access) {
  static const auto next =
      reinterpret_cast<hid_t (*)(const char*, unsigned, hid_t)>(::dlsym(RTLD_NEXT, "H5Fopen"));
  const hid_t id = next(name, flags, access);
  if (id >= 0 && g_fail_open_here.exchange(false)) {
    g_kept_file = id;
    return H5I_INVALID_HID;
  }
  return id;
}

// This program's H5Fclose: while watched, counts the closes made without hetero's HDF5 lock
// (another thread can take a recursive mutex only when the closing thread does not hold it).
extern "C" herr_t H5Fclose(hid_t id) {
  if (g_watch_closes.load()) {
    const bool unlocked = std::async(std::launch::async, [] {
                            auto& lock = hetero::detail::h5_lock();
                            if (!lock.try_lock()) return false;
                            lock.unlock();
                            return true;
                          }).get();
    if (unlocked) ++g_closed_unlocked;
  }
  return real_H5Fclose(id);
}

namespace {

using array1 = hetero::distributed_array<double, 1, Kokkos::HostSpace>;
using array2 = hetero::distributed_array<double, 2, Kokkos::HostSpace>;

// A file holding "u": 1-D doubles of `n` elements with value_at(g, salt), written cyclic.
void write_file(const std::string& path, std::int64_t n, std::uint64_t salt) {
  array1 u(hetero::index_space<1>({n}, hetero::process_grid<1>(), {hetero::distribution::cyclic()}),
           {.label = "u"});
  io_test::fill(u, salt);
  hetero::h5file out(path, hetero::file_mode::create);
  out.write("u", u);
  out.set("salt", salt);
}

// Rank 0 changes the file; the others wait for it.
template <class F>
void on_rank0(F&& change) {
  if (world_rank() == 0) change();
  MPI_Barrier(MPI_COMM_WORLD);
}

// The byte offset of dataset `name`'s data in `path` (read serially).
std::int64_t data_offset(const std::string& path, const char* name) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT);
  const auto offset = static_cast<std::int64_t>(H5Dget_offset(dataset));
  H5Dclose(dataset);
  H5Fclose(file);
  return offset;
}

void overwrite(const std::string& path, std::int64_t at, const std::string& bytes) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(at);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Inverts the byte at `at` of `path`: a change whatever the byte held (writing a fixed byte
// left the file as it was where the data already held that byte, about 1 run in 100).
void flip_byte(const std::string& path, std::int64_t at) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(at);
  const auto byte = static_cast<char>(~file.get());
  file.seekp(at);
  file.put(byte);
}

array1 block_array(std::int64_t n) { return array1(hetero::block_space(n), {.label = "v"}); }

}  // namespace

TEST_CASE("files that cannot be opened raise io_error on every rank", "[io][errors]") {
  const io_test::scratch dir("io-errors-open");
  CHECK_THROWS_AS(hetero::h5file(dir.file("missing.h5"), hetero::file_mode::read), hetero::io_error);
  CHECK_THROWS_WITH(hetero::h5file(dir.file("missing.h5"), hetero::file_mode::read),
                    ContainsSubstring("opening for reading") && ContainsSubstring("missing.h5"));
  CHECK_THROWS_WITH(hetero::h5file(dir.file("no/such/folder/x.h5"), hetero::file_mode::create),
                    ContainsSubstring("creating"));
  on_rank0([&] { std::ofstream(dir.file("text.h5")) << "not an HDF5 file, only words\n"; });
  CHECK_THROWS_AS(hetero::h5file(dir.file("text.h5"), hetero::file_mode::read), hetero::io_error);

  const auto salt = hetero::testing::rng(31)();
  write_file(dir.file("whole.h5"), 5000, salt);
  // Truncated: HDF5 sees the end of the file before the end of its data.
  on_rank0([&] {
    std::filesystem::copy_file(dir.file("whole.h5"), dir.file("truncated.h5"));
    std::filesystem::resize_file(dir.file("truncated.h5"), std::filesystem::file_size(dir.file("whole.h5")) / 2);
  });
  CHECK_THROWS_WITH(
      [&] {
        hetero::h5file in(dir.file("truncated.h5"), hetero::file_mode::read);
        auto v = block_array(5000);
        in.read("u", v);
      }(),
      ContainsSubstring("truncated"));
  // A corrupted superblock.
  on_rank0([&] {
    std::filesystem::copy_file(dir.file("whole.h5"), dir.file("superblock.h5"));
    overwrite(dir.file("superblock.h5"), 0, "garbage!");
  });
  CHECK_THROWS_AS(hetero::h5file(dir.file("superblock.h5"), hetero::file_mode::read), hetero::io_error);
}

// Before, a file that opened on some ranks only was closed by the member's destructor after the
// constructor's HDF5 scope had ended: outside hetero's HDF5 lock, beside the I/O thread.
TEST_CASE("a file that opened on some ranks only is closed under the HDF5 lock", "[io][errors]") {
  if (world_size() < 2) SKIP("needs a rank whose open fails beside one whose open succeeds");
  const io_test::scratch dir("io-errors-partial-open");
  const auto salt = hetero::testing::rng(32)();
  write_file(dir.file("whole.h5"), 100, salt);
  if (world_rank() == 1) g_fail_open_here = true;
  g_watch_closes = true;
  CHECK_THROWS_WITH(hetero::h5file(dir.file("whole.h5"), hetero::file_mode::read),
                    ContainsSubstring(world_rank() == 1 ? "opening for reading" : "failed on another rank"));
  if (world_rank() == 1) real_H5Fclose(std::exchange(g_kept_file, H5I_INVALID_HID));  // its part of the close
  g_watch_closes = false;
  CHECK(g_closed_unlocked.load() == 0);                                 // before: 1 on every rank but rank 1
  hetero::h5file again(dir.file("whole.h5"), hetero::file_mode::read);  // the file still opens
  CHECK(again.get<std::uint64_t>("salt") == salt);
}

TEST_CASE("corrupted data is refused, not read as data", "[io][errors]") {
  const io_test::scratch dir("io-errors-data");
  const auto salt = hetero::testing::rng(32)();
  write_file(dir.file("f.h5"), 3000, salt);
  auto v = block_array(3000);
  {
    hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
    in.read("u", v);  // the file as written passes its checksum
  }
  on_rank0([&] { flip_byte(dir.file("f.h5"), data_offset(dir.file("f.h5"), "u") + 8 * 1234 + 3); });
  hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
  CHECK_THROWS_AS(in.read("u", v), hetero::io_error);
  CHECK_THROWS_WITH(in.read("u", v), ContainsSubstring("does not match the checksum"));
}

TEST_CASE("datasets that do not fit the array raise io_error on every rank", "[io][errors]") {
  const io_test::scratch dir("io-errors-shape");
  const auto salt = hetero::testing::rng(33)();
  write_file(dir.file("f.h5"), 100, salt);
  hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
  auto v = block_array(100);
  CHECK_THROWS_WITH(in.read("w", v), ContainsSubstring("no dataset 'w'") && ContainsSubstring("holds: u"));
  hetero::distributed_array<float, 1, Kokkos::HostSpace> f(hetero::block_space(100));
  CHECK_THROWS_WITH(in.read("u", f), ContainsSubstring("type float64") && ContainsSubstring("float32"));
  hetero::distributed_array<std::int64_t, 1, Kokkos::HostSpace> i(hetero::block_space(100));
  CHECK_THROWS_WITH(in.read("u", i), ContainsSubstring("type float64") && ContainsSubstring("int64"));
  array2 two(hetero::index_space<2>({10, 10}, hetero::process_grid<2>()));
  CHECK_THROWS_WITH(in.read("u", two), ContainsSubstring("has 1 dimensions, but the array has 2"));
  auto longer = block_array(101);
  CHECK_THROWS_WITH(in.read("u", longer), ContainsSubstring("has shape [100]") && ContainsSubstring("[101]"));
  auto part = block_array(20);
  CHECK_THROWS_AS(in.read("u", part, hetero::index_box<1>{{90}, {110}}), hetero::invalid_argument);
  CHECK_THROWS_WITH(in.read("u", part, hetero::index_box<1>{{0}, {30}}),
                    ContainsSubstring("has 30 indices, but the array has 20"));
  // The file still works after every refusal, and the section is right.
  in.read("u", part, hetero::index_box<1>{{80}, {100}});
  CHECK(io_test::wrong_elements(part, salt, {80}) == 0);
}

TEST_CASE("sections that differ between ranks are refused on every rank and none waits in the read",
          "[io][errors]") {
  // The section was checked on each rank alone: a rank whose box was outside raised, and the
  // others went on into the collective read and waited there for it for ever; boxes that were
  // all inside but not the same read a different section on each rank, silently.
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const io_test::scratch dir("io-errors-one-section");
  const auto salt = hetero::testing::rng(34)();
  write_file(dir.file("f.h5"), 100, salt);
  hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
  auto part = block_array(20);
  const bool last = world_rank() == world_size() - 1;
  const auto different = ContainsSubstring("the ranks passed different dataset names or sections");
  // One rank's box outside the dataset.
  CHECK_THROWS_WITH(
      in.read("u", part, last ? hetero::index_box<1>{{90}, {110}} : hetero::index_box<1>{{10}, {30}}), different);
  // Every box inside, but not the same.
  CHECK_THROWS_WITH(in.read("u", part, last ? hetero::index_box<1>{{50}, {70}} : hetero::index_box<1>{{10}, {30}}),
                    different);
  // A box on some ranks, none on the last (which would read the whole dataset, of another shape).
  if (last) {
    CHECK_THROWS_AS(in.read("u", part), hetero::invalid_argument);
  } else {
    CHECK_THROWS_WITH(in.read("u", part, hetero::index_box<1>{{10}, {30}}), different);
  }
  in.read("u", part, hetero::index_box<1>{{80}, {100}});  // the file still works, the section is right
  CHECK(io_test::wrong_elements(part, salt, {80}) == 0);
}

TEST_CASE("dataset names that differ between ranks are refused on every rank and none waits", "[io][errors]") {
  // The name was each rank's own: ranks writing different names went into HDF5's collective
  // creation with different arguments, and a rank reading a name the file lacks raised alone
  // while the others went on into the collective read.
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const io_test::scratch dir("io-errors-names");
  const auto salt = hetero::testing::rng(36)();
  write_file(dir.file("f.h5"), 100, salt);
  auto v = block_array(100);
  io_test::fill(v, salt + 1);
  const bool last = world_rank() == world_size() - 1;
  {
    hetero::h5file out(dir.file("f.h5"), hetero::file_mode::update);
    CHECK_THROWS_WITH(out.write(last ? "b" : "a", v),
                      ContainsSubstring("the ranks passed different dataset names or array shapes"));
    CHECK_THROWS_WITH(out.write_async(last ? "b" : "a", v).wait(),
                      ContainsSubstring("the ranks passed different dataset names or array shapes"));
    CHECK_FALSE(out.contains("a"));
    CHECK_FALSE(out.contains("b"));
    out.write("u2", v);
  }
  hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
  // "w" is in no file: without the agreement its rank raised alone. "u2" is: the ranks would
  // have opened different datasets, whose metadata rank 0 reads for all.
  const auto different = ContainsSubstring("the ranks passed different dataset names or sections");
  CHECK_THROWS_WITH(in.read(last ? "w" : "u", v), different);
  CHECK_THROWS_WITH(in.read(last ? "u2" : "u", v), different);
  in.read("u2", v);
  CHECK(io_test::wrong_elements(v, salt + 1) == 0);
  in.read("u", v);  // the file still works, and holds what was written first
  CHECK(io_test::wrong_elements(v, salt) == 0);
}

TEST_CASE("scalars that differ between ranks are refused on every rank and the stored one kept", "[io][errors]") {
  // A scalar's name and value were each rank's own: HDF5 stored one rank's value, silently, and
  // ranks passing different names went into its collective attribute creation with different
  // arguments.
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const io_test::scratch dir("io-errors-scalars");
  auto rng = hetero::testing::rng(38);
  const double stored = std::uniform_real_distribution<double>(0, 1)(rng);
  const bool last = world_rank() == world_size() - 1;
  const auto different = ContainsSubstring("the ranks passed different scalar names, types or values");
  {
    hetero::h5file out(dir.file("s.h5"), hetero::file_mode::create);
    out.set("r", stored);
    CHECK_THROWS_WITH(out.set("r", last ? stored + 1 : stored), different);
    CHECK_THROWS_WITH(out.set(last ? "q" : "r", stored), different);
    // The same name and the same bits, of another type.
    if (last) {
      CHECK_THROWS_WITH(out.set("r", std::uint64_t{1}), different);
    } else {
      CHECK_THROWS_WITH(out.set("r", std::int64_t{1}), different);
    }
  }
  hetero::h5file in(dir.file("s.h5"), hetero::file_mode::read);
  CHECK(in.get<double>("r") == stored);
  CHECK_THROWS_AS(in.get<double>("q"), hetero::io_error);
}

TEST_CASE("selections that fail on one rank raise on every rank and none waits in the transfer", "[io][errors]") {
  // HDF5's selections of this rank's block were made after the ranks agreed: where they failed
  // on one rank alone, the others went on into the collective write or read and waited there.
  // The test's hook fails them as HDF5 would.
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const io_test::scratch dir("io-errors-selection");
  const auto salt = hetero::testing::rng(37)();
  write_file(dir.file("f.h5"), 100, salt);
  auto v = block_array(100);
  io_test::fill(v, salt + 1);
  const bool last = world_rank() == world_size() - 1;
  // The failing rank's own error, or the step the others were in and that it failed elsewhere:
  // both name the call and its dataset.
  const std::string mine = ": selecting this rank's block (refused by the test hook)";
  const auto expected = [&](const std::string& step) { return step + (last ? mine : " failed on another rank"); };
  {
    hetero::h5file out(dir.file("f.h5"), hetero::file_mode::update);
    if (last) hetero::detail::refuse_next_selection() = true;
    CHECK_THROWS_WITH(out.write("u", v), ContainsSubstring(expected("writing dataset 'u'")));
    if (last) hetero::detail::refuse_next_selection() = true;
    CHECK_THROWS_WITH(out.write_async("u", v).wait(),
                      ContainsSubstring(expected("writing dataset 'u' asynchronously")));
  }
  hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
  if (last) hetero::detail::refuse_next_selection() = true;
  CHECK_THROWS_WITH(in.read("u", v), ContainsSubstring(expected("reading dataset 'u'")));
  CHECK_FALSE(hetero::detail::refuse_next_selection());  // each refusal was taken where it was set
  in.read("u", v);  // the file still works, and holds what was there before the refused writes
  CHECK(io_test::wrong_elements(v, salt) == 0);
}

TEST_CASE("no memory to stage a block on one rank raises on every rank and none waits in the transfer",
          "[io][errors]") {
  // Staging a device array's block in host memory can fail on one rank alone; that rank left
  // with std::bad_alloc and the others waited in the collective write or read for ever. The
  // test's hook fails the staging of a host array the same way.
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const io_test::scratch dir("io-errors-staging");
  const auto salt = hetero::testing::rng(35)();
  write_file(dir.file("f.h5"), 100, salt);
  auto v = block_array(100);
  io_test::fill(v, salt + 1);
  const bool last = world_rank() == world_size() - 1;
  {
    hetero::h5file out(dir.file("f.h5"), hetero::file_mode::update);
    if (last) hetero::detail::refuse_next_staging() = true;
    CHECK_THROWS_AS(out.write("u", v), hetero::io_error);
    if (last) hetero::detail::refuse_next_staging() = true;
    CHECK_THROWS_WITH(out.write("u", v), ContainsSubstring("writing dataset 'u'") &&
                                             ContainsSubstring(last ? "bad_alloc" : "failed on another rank"));
  }
  hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
  if (last) hetero::detail::refuse_next_staging() = true;
  CHECK_THROWS_WITH(in.read("u", v), ContainsSubstring("reading dataset 'u'") &&
                                         ContainsSubstring(last ? "bad_alloc" : "failed on another rank"));
  in.read("u", v);  // the file still works, and holds what was there before the refused writes
  CHECK(io_test::wrong_elements(v, salt) == 0);
}

TEST_CASE("writes that cannot be done raise on every rank", "[io][errors]") {
  const io_test::scratch dir("io-errors-write");
  write_file(dir.file("f.h5"), 100, 1);
  auto v = block_array(100);
  {
    hetero::h5file in(dir.file("f.h5"), hetero::file_mode::read);
    CHECK_THROWS_AS(in.write("v", v), hetero::io_error);
    CHECK_THROWS_AS(in.set("x", 1.0), hetero::io_error);
  }
  hetero::h5file out(dir.file("f.h5"), hetero::file_mode::update);
  auto other = block_array(50);
  CHECK_THROWS_WITH(out.write("u", other), ContainsSubstring("already holds a dataset of that name"));
  out.write("u", v);  // same shape and type: overwritten
  out.close();
  CHECK_THROWS_WITH(out.write("u", v), ContainsSubstring("closed"));
  if (dist_test::world_size() >= 2) {
    // An array whose grid is only part of the file's ranks.
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, 0, &half);
    {
      array1 local(hetero::index_space<1>({10}, hetero::process_grid<1>({0}, half)));
      hetero::h5file again(dir.file("f.h5"), hetero::file_mode::update);
      CHECK_THROWS_WITH(again.write("l", local), ContainsSubstring("not over the file's ranks"));
      // Rank 0 alone passes such an array: it raised alone, and the others went on into the
      // collective write and waited there.
      auto whole = block_array(10);
      if (world_rank() == 0) {
        CHECK_THROWS_WITH(again.write("m", local), ContainsSubstring("not over the file's ranks"));
      } else {
        CHECK_THROWS_WITH(again.write("m", whole), ContainsSubstring("failed on another rank"));
      }
      CHECK_FALSE(again.contains("m"));
    }
    MPI_Comm_free(&half);
  }
}

// checkpoint: numbered checkpoints of two arrays and scalars, the newest `keep` kept, restore
// reading the newest into other distributions (every element checked); a writer abandoned
// by an exception leaves the previous checkpoint current and no file behind; a folder sync that
// fails after the rename (fsync interposed below); bad arguments.
// A killed rank and a full file system are tested by checkpoint_fault_test.sh, in jobs of
// their own.
#include <hetero/io.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <filesystem>

#include "io_support.hpp"

using Catch::Matchers::ContainsSubstring;
using dist_test::world_rank;
using dist_test::world_size;

namespace {
std::atomic<bool> g_fail_folder_fsync{false};
}  // namespace

// This program's fsync: when armed, the next one of a folder (the checkpoint's sync after its
// rename) fails with EIO; every other call goes to the C library's.
extern "C" int fsync(int fd) {
  struct stat status {};
  if (g_fail_folder_fsync.load() && ::fstat(fd, &status) == 0 && S_ISDIR(status.st_mode) &&
      g_fail_folder_fsync.exchange(false)) {
    errno = EIO;
    return -1;
  }
  static const auto next = reinterpret_cast<int (*)(int)>(::dlsym(RTLD_NEXT, "fsync"));
  return next(fd);
}

namespace {

using io_test::make_counts;
using io_test::make_field;

bool partial_left(const io_test::scratch& dir) {
  bool found = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    found = found || entry.path().extension() == ".partial";
  return found;
}

}  // namespace

TEST_CASE("checkpoints keep the newest and restore reads it into any distribution", "[io][checkpoint]") {
  const io_test::scratch dir("io-checkpoint");
  auto rng = hetero::testing::rng(41);
  hetero::checkpoint saved(dir.file("run"), MPI_COMM_WORLD, {.keep = 2});
  CHECK(saved.steps().empty());
  CHECK_FALSE(saved.restore().has_value());
  std::vector<std::uint64_t> salts;
  for (std::int64_t step = 0; step < 4; ++step) {
    salts.push_back(rng());
    io_test::commit_checkpoint(saved, step * 10, salts.back());
  }
  CHECK(saved.steps() == std::vector<std::int64_t>{20, 30});
  CHECK(saved.file_of(30) == dir.file("run") + ".000030.h5");
  auto last = saved.restore();
  REQUIRE(last.has_value());
  CHECK(last->step() == 30);
  CHECK(last->get<std::int64_t>("hetero_checkpoint_step") == 30);
  CHECK(last->get<std::uint64_t>("salt") == salts[3]);
  CHECK(last->get<double>("residual") == 1.0 / 31.0);
  auto u = make_field(hetero::distribution::block());
  auto c = make_counts(hetero::distribution::cyclic());
  last->read("u", u);
  last->read("counts", c);
  CHECK(io_test::wrong_elements(u, salts[3]) == 0);
  CHECK(io_test::wrong_elements(c, salts[3]) == 0);

  // The restart in one call: the same file read, its step returned.
  auto v = make_field(hetero::distribution::cyclic());
  std::uint64_t salt = 0;
  const std::int64_t done = saved.restore([&](hetero::h5file& file) {
    file.read("u", v);
    salt = file.get<std::uint64_t>("salt");
  });
  CHECK(done == 30);
  CHECK(salt == salts[3]);
  CHECK(io_test::wrong_elements(v, salts[3]) == 0);
}

TEST_CASE("a restart without a checkpoint starts at step 0 and reads nothing", "[io][checkpoint]") {
  const io_test::scratch dir("io-checkpoint-none");
  hetero::checkpoint saved(dir.file("run"));
  bool called = false;
  CHECK(saved.restore([&](hetero::h5file&) { called = true; }) == 0);
  CHECK_FALSE(called);
}

TEST_CASE("a checkpoint abandoned before its commit changes nothing", "[io][checkpoint]") {
  const io_test::scratch dir("io-checkpoint-abandon");
  const auto salt = hetero::testing::rng(42)();
  hetero::checkpoint saved(dir.file("run"));
  io_test::commit_checkpoint(saved, 1, salt);
  try {
    auto next = saved.begin(2);
    auto u = make_field(hetero::distribution::block());
    next.write("u", u);
    throw std::runtime_error("the solver failed");  // before the commit
  } catch (const std::runtime_error&) {
  }
  CHECK(saved.steps() == std::vector<std::int64_t>{1});
  CHECK_FALSE(partial_left(dir));
  auto u = make_field(hetero::distribution::block_cyclic(3));
  saved.restore()->read("u", u);
  CHECK(io_test::wrong_elements(u, salt) == 0);
}

TEST_CASE("a checkpoint whose asynchronous write failed is not made current", "[io][checkpoint][errors]") {
  // A write that fails in H5Dwrite leaves its dataset with no data and no checksum; committed,
  // the checkpoint would restore it silently. So the commit refuses after any failed
  // asynchronous write (here one that fails at its shape check), on every rank, whether or not
  // the write's own handle was waited.
  const io_test::scratch dir("io-checkpoint-async-error");
  const auto salt = hetero::testing::rng(43)();
  hetero::checkpoint saved(dir.file("run"));
  io_test::commit_checkpoint(saved, 1, salt);
  auto u = make_field(hetero::distribution::block());
  auto taken = make_field(hetero::distribution::block(), 41);  // another shape under the same name
  auto next = saved.begin(2);
  next.file().write("u", u);
  auto handle = next.file().write_async("u", taken);
  CHECK_THROWS_WITH(next.commit(), ContainsSubstring("making checkpoint step 2 current: an asynchronous write") &&
                                       ContainsSubstring("previous checkpoints stay as they were"));
  CHECK_THROWS_WITH(handle.wait(), ContainsSubstring("already holds a dataset of that name"));  // its own error
  CHECK(saved.steps() == std::vector<std::int64_t>{1});
  auto back = make_field(hetero::distribution::cyclic());
  saved.restore()->read("u", back);
  CHECK(io_test::wrong_elements(back, salt) == 0);
}

TEST_CASE("a checkpoint whose folder sync fails after the rename is current and keeps the older ones",
          "[io][checkpoint][errors]") {
  // The rename happened, so the new file is the newest whole one (restore opens it); the error
  // says so, and nothing older is removed, since a crash may yet undo the rename.
  const io_test::scratch dir("io-checkpoint-fsync");
  auto rng = hetero::testing::rng(44);
  const auto first = rng(), second = rng();
  hetero::checkpoint saved(dir.file("run"), MPI_COMM_WORLD, {.keep = 1});
  io_test::commit_checkpoint(saved, 1, first);
  if (world_rank() == 0) g_fail_folder_fsync = true;  // rank 0 renames and syncs
  CHECK_THROWS_WITH(io_test::commit_checkpoint(saved, 2, second),
                    ContainsSubstring("checkpoint step 2 is current") &&
                        ContainsSubstring("syncing its folder failed: Input/output error") &&
                        ContainsSubstring("the older checkpoints were kept"));
  g_fail_folder_fsync = false;
  CHECK(saved.steps() == std::vector<std::int64_t>{1, 2});  // keep = 1 would have removed step 1
  CHECK(saved.restore()->get<std::uint64_t>("salt") == second);
  io_test::commit_checkpoint(saved, 3, first);  // the next commit prunes as usual
  CHECK(saved.steps() == std::vector<std::int64_t>{3});
}

TEST_CASE("checkpoint arguments are checked", "[io][checkpoint][errors]") {
  CHECK_THROWS_WITH(hetero::checkpoint("run", MPI_COMM_WORLD, {.keep = 0}), ContainsSubstring("keep is 0"));
  CHECK_THROWS_WITH(hetero::checkpoint("folder/"), ContainsSubstring("names no file"));
  const io_test::scratch dir("io-checkpoint-args");
  hetero::checkpoint saved(dir.file("run"));
  CHECK_THROWS_WITH(saved.begin(-1), ContainsSubstring("step is -1"));
  auto next = saved.begin(0);
  next.commit();
  CHECK_THROWS_WITH(next.commit(), ContainsSubstring("already committed"));
  // Steps go forward: one before the newest on disk (a run that did not restore) is refused on
  // every rank, the checkpoints left as they were; the same step again replaces it.
  io_test::commit_checkpoint(saved, 7, 1);
  CHECK_THROWS_WITH(saved.begin(6), ContainsSubstring("checkpoint step 6 comes before the newest checkpoint on "
                                                      "disk, " +
                                                      saved.file_of(7)) &&
                                        ContainsSubstring("allowed: step 7 or later"));
  CHECK(saved.steps() == std::vector<std::int64_t>{0, 7});
  io_test::commit_checkpoint(saved, 7, 2);
  CHECK(saved.steps() == std::vector<std::int64_t>{0, 7});
  CHECK(saved.restore()->get<std::uint64_t>("salt") == 2);
  hetero::checkpoint nowhere(dir.file("no/such/folder/run"));
  CHECK_THROWS_AS(nowhere.begin(0), hetero::io_error);
}

TEST_CASE("a rank that skips a checkpoint's collective call: the others give up after the wait timeout",
          "[io][checkpoint][errors]") {
  if (world_size() < 2) SKIP("needs 2 or more ranks");
  const io_test::scratch dir("io-checkpoint-skip");
  MPI_Comm ranks = MPI_COMM_NULL;  // its own ranks: what is left pending stays off the world
  MPI_Comm_dup(MPI_COMM_WORLD, &ranks);
  const hetero::timeout before = hetero::wait_timeout();
  const double limit = 0.5 * hetero::testing::time_scale();
  hetero::set_wait_timeout(std::chrono::duration<double>(limit));
  {
    hetero::checkpoint saved(dir.file("run"), ranks);
    // Rank 0 lists the files and broadcasts them; here it skips the call, and every other rank
    // gives up waiting for it (a root that calls while another rank skips may complete its
    // broadcast at once: MPI lets it).
    const bool skips = world_rank() == 0;
    if (!skips) {
      CHECK_THROWS_AS(saved.steps(), hetero::deadlock_error);
      CHECK_THROWS_WITH(saved.steps(), ContainsSubstring("hetero::checkpoint::steps"));
    }
    MPI_Barrier(MPI_COMM_WORLD);  // every rank ends here, none hangs in MPI_Bcast
  }
  hetero::set_wait_timeout(before);
  MPI_Comm_free(&ranks);
}

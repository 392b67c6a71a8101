// The checkpoint fault jobs that checkpoint_fault_test.sh runs (each mode is one MPI job):
//   die <prefix> <salt>      commits step 1, then the last rank kills itself (SIGKILL) in the
//                            middle of step 2, between its two arrays: the job ends there
//   restore <prefix> <salt> <step>
//                            restores the newest whole checkpoint on this job's ranks, into
//                            other distributions, and checks that it is <step> and every element
//   fill <prefix> <salt>     commits step 1, then writes a step 2 that does not fit the file
//                            system: every rank must get io_error, step 1 must stay current
// Prints one line per rank with what it found; exits non-zero on any difference.
#include <hetero/io.hpp>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

#include "io_support.hpp"

namespace {

using io_test::make_counts;
using io_test::make_field;

int restore(hetero::checkpoint& saved, std::uint64_t salt, std::int64_t expected_step, const char* when) {
  const int rank = hetero::testing::world_rank();
  auto last = saved.restore();
  if (!last) {
    std::printf("rank %d: %s: no checkpoint to restore\n", rank, when);
    return 1;
  }
  const auto step = last->step();
  auto u = make_field(hetero::distribution::block(), 40);
  auto c = make_counts(hetero::distribution::cyclic());
  last->read("u", u);
  last->read("counts", c);
  const auto wrong = io_test::wrong_elements(u, salt) + io_test::wrong_elements(c, salt);
  std::printf("rank %d: %s: restored step %lld from %s, %lld element(s) wrong\n", rank, when,
              static_cast<long long>(step), last->path().c_str(), static_cast<long long>(wrong));
  return step == expected_step && wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime runtime(argc, argv);
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s die|restore|fill <prefix> <salt> [step]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const std::uint64_t salt = std::stoull(argv[3]);
  hetero::checkpoint saved(argv[2]);
  const int rank = hetero::testing::world_rank(), size = hetero::testing::world_size();
  if (mode == "die") {
    io_test::commit_checkpoint(saved, 1, salt, 40);
    auto u = make_field(hetero::distribution::cyclic(), 40);
    auto next = saved.begin(2);
    next.write("u", u);
    if (rank == size - 1) {
      std::printf("rank %d: killing itself in the middle of step 2\n", rank);
      std::fflush(stdout);
      std::raise(SIGKILL);
    }
    next.write("counts", make_counts(hetero::distribution::block()));  // the others wait here
    next.commit();
    std::printf("rank %d: step 2 committed although a rank was killed\n", rank);
    return 1;
  }
  if (mode == "restore") return restore(saved, salt, argc > 4 ? std::stoll(argv[4]) : 1, "restart");
  if (mode == "fill") {
    io_test::commit_checkpoint(saved, 1, salt, 40);
    int refused = 0;
    try {
      io_test::commit_checkpoint(saved, 2, salt ^ 1, 32 * 1024);  // 8 MiB: more than the file system holds
      std::printf("rank %d: the step that cannot fit was committed\n", rank);
    } catch (const hetero::io_error& e) {
      refused = 1;
      std::printf("rank %d: io_error: %s\n", rank, e.what());
    }
    const auto steps = saved.steps();
    const bool kept = steps == std::vector<std::int64_t>{1};
    std::printf("rank %d: checkpoints on disk after the refusal: %zu (newest %lld)\n", rank, steps.size(),
                steps.empty() ? -1LL : static_cast<long long>(steps.back()));
    return refused == 1 && kept && restore(saved, salt, 1, "after the full disk") == 0 ? 0 : 1;
  }
  std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
  return 2;
}

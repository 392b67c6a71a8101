// A call that blocks inside MPI and cannot give up, held there by a rank that sleeps outside
// MPI: the runtime's watchdog must end the job with a report past twice the wait limit (here
// 2 x 1 s), long before the sleeper wakes (20 s). Run under mpiexec with 2 ranks and one
// scenario; CTest passes the test on the report's text (the job's exit status is MPI_Abort's),
// and fails it on "woke" (the sleeper came back: nothing ended the job) or on its timeout.
//   put:  image 0 puts into image 1's coarray through MPI (not the node's shared memory); the
//         put's flush (MPI_Win_flush) waits for image 1.
//   free: image 0 drops its coarray while image 1 keeps its own; MPI_Win_free waits for image 1.
//   put-unwatched: "put" with runtime_options::end_blocked_calls = false and a 3 s sleep: the put
//         returns once image 1 wakes (nothing ends the job, nothing is reported).
// The set-up (the runtime, the coarray, its sync_all) waits with a limit of 5 s (its watched MPI
// calls reported after 10 s, within CTest's 15 s); the limit of 1 s holds from after the
// sync_all, for the call under test only. With 1 s throughout, a rank more than a second ahead
// in the set-up on busy cores would give up there (a deadlock_error, not the report), which may
// be how faults_blocked_call.free failed once beside other tests.
#include <hetero/core/runtime.hpp>
#include <hetero/core/wait_timeout.hpp>
#include <hetero/distarray/coarray.hpp>

#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>

int main(int argc, char** argv) {
  const std::string_view given = argc > 1 ? argv[1] : "";
  const bool watched = given != "put-unwatched";
  hetero::runtime runtime(argc, argv, {.wait_timeout = std::chrono::seconds(5), .end_blocked_calls = watched});
  const std::string_view scenario = watched ? given : "put";
  if (runtime.world_size() != 2 || (scenario != "put" && scenario != "free")) {
    std::fprintf(stderr, "usage: mpiexec -n 2 %s put|free|put-unwatched\n", argv[0]);
    return 2;
  }
  const bool sleeper = runtime.world_rank() == 1;
  const auto sleep = [watched] { std::this_thread::sleep_for(std::chrono::seconds(watched ? 20 : 3)); };
  const auto start = std::chrono::steady_clock::now();
  double put_seconds = 0;
  {
    // Through MPI: within a node the coarray's shared memory never waits for the target.
    hetero::coarray<double, 1, Kokkos::HostSpace> a({64}, {.shared_memory = scenario != "put"});
    a.sync_all();
    hetero::set_wait_timeout(std::chrono::seconds(1));  // the watchdog then ends a blocked call after 2 s
    if (scenario == "put") {
      if (sleeper) {
        sleep();
      } else {
        // The sleeper may still be inside MPI, leaving sync_all, for a moment: a put that came
        // then could be completed by its progress. Half a second later it sleeps outside MPI.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        Kokkos::View<double*, Kokkos::HostSpace> values("values", 64);
        const auto before = std::chrono::steady_clock::now();
        a.put(1, {hetero::slice::all()}, values);
        put_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
      }
    } else if (sleeper) {
      sleep();  // still holding the coarray
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("rank %d: %s %s after %.3f s (the put took %.3f s)\n", runtime.world_rank(),
              sleeper ? "woke" : "returned", std::string(given).c_str(), seconds, put_seconds);
  return 0;
}

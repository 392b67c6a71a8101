// The wait-timeout knob (HETERO_WAIT_TIMEOUT, runtime_options::wait_timeout,
// hetero::set_wait_timeout, per-object "inherit") and the report of the waits in progress on
// SIGUSR1 (report and continue) and SIGTERM (report, then die by the signal), and the
// watchdog's view of a blocking call (the job it ends: blocked_call.cpp).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hetero/comm.hpp>
#include <hetero/core/mpi/wait.hpp>
#include <hetero/core/mpi/watchdog.hpp>
#include <hetero/core/runtime.hpp>
#include <hetero/task/options.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "capture_stderr.hpp"
#include "faults_support.hpp"

using Catch::Matchers::ContainsSubstring;

using hetero::testing::capture_stderr;

TEST_CASE("HETERO_WAIT_TIMEOUT's values: seconds, 0 or off; anything else is refused", "[faults][knob]") {
  using hetero::detail::parse_wait_timeout;
  const double seconds = 1 + static_cast<double>(std::random_device{}() % 1000) / 8;
  CHECK(parse_wait_timeout(std::to_string(seconds)) == seconds);  // k / 8: exact in 6 decimals
  CHECK(parse_wait_timeout("0") == 0);
  CHECK(parse_wait_timeout("off") == 0);
  for (const char* bad : {"", "soon", "-1", "2s", "nan", "inf"})
    CHECK_THROWS_WITH(parse_wait_timeout(bad),
                      ContainsSubstring(std::string("HETERO_WAIT_TIMEOUT is '") + bad + "'; allowed: a number"));
  CHECK_THROWS_AS(parse_wait_timeout("soon"), hetero::invalid_argument);
}

TEST_CASE("a malformed HETERO_WAIT_TIMEOUT fails the runtime's start", "[faults][knob]") {
  ::setenv("HETERO_WAIT_TIMEOUT", "a while", 1);
  CHECK_THROWS_AS(hetero::runtime(), hetero::invalid_argument);
  CHECK_THROWS_WITH(hetero::runtime(), ContainsSubstring("HETERO_WAIT_TIMEOUT is 'a while'; allowed:"));
  ::unsetenv("HETERO_WAIT_TIMEOUT");
}

TEST_CASE("the runtime option, the setter and the per-object inherit defaults", "[faults][knob]") {
  // This folder's main set 1 s through runtime_options::wait_timeout.
  CHECK(hetero::wait_timeout() == hetero::timeout(std::chrono::duration<double>(faults::timeout_seconds())));
  CHECK(hetero::wait_timeout_source() == hetero::wait_timeout_origin::runtime_option);
  const double seconds = 2 + static_cast<double>(std::random_device{}() % 100);
  hetero::set_wait_timeout(std::chrono::duration<double>(seconds));
  CHECK(hetero::wait_timeout().duration().count() == seconds);
  CHECK(hetero::wait_timeout_source() == hetero::wait_timeout_origin::setter);
  CHECK_THROWS_WITH(
      hetero::set_wait_timeout(std::chrono::seconds(-3)),
      ContainsSubstring("hetero::set_wait_timeout's argument is -3 s; allowed: a positive duration"));
  CHECK_THROWS_WITH(hetero::set_wait_timeout(hetero::inherit_timeout),
                    ContainsSubstring("is hetero::inherit_timeout, which has nothing to inherit from"));

  // Per-object options inherit it unless set.
  CHECK(hetero::communicator_options{}.wait_timeout.inherits());
  CHECK(hetero::task_options{}.no_progress_timeout == hetero::inherit_timeout);
  CHECK(hetero::runtime_options{}.wait_timeout == hetero::inherit_timeout);
  using std::chrono::nanoseconds;
  CHECK(hetero::detail::resolve_timeout(hetero::inherit_timeout, "t") ==
        std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(seconds)));
  CHECK(hetero::detail::resolve_timeout(std::chrono::seconds(3), "t") == std::chrono::seconds(3));
  CHECK(hetero::detail::resolve_timeout(hetero::no_timeout, "t") == hetero::detail::forever_ns);
  hetero::set_wait_timeout(hetero::no_timeout);  // off: task graphs wait "forever"
  CHECK(hetero::wait_timeout() == hetero::no_timeout);
  CHECK(hetero::wait_timeout().forever());
  CHECK(hetero::detail::resolve_timeout(hetero::inherit_timeout, "t") == hetero::detail::forever_ns);
  const auto policy = hetero::detail::make_wait_policy(MPI_COMM_WORLD);
  CHECK(policy.timeout() == 0);
  CHECK(hetero::detail::make_wait_policy(MPI_COMM_WORLD, 4).timeout() == 4);
  hetero::set_wait_timeout(std::chrono::duration<double>(faults::timeout_seconds()));
}

TEST_CASE("SIGUSR1 prints this rank's waits in progress and the program goes on", "[faults][signal]") {
  REQUIRE(hetero::detail::g_wait_signals.usr1);  // installed by hetero::runtime
  const int me = faults::world_rank();
  const int tag = 70 + static_cast<int>(std::random_device{}() % 100);

  // No wait in progress.
  const std::string idle = capture_stderr([] {
    ::kill(::getpid(), SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  CHECK_THAT(idle, ContainsSubstring("hetero: rank " + std::to_string(me)) &&
                       ContainsSubstring("no hetero wait in progress"));

  // A wait for a message from this rank itself that a helper thread sends after the signal.
  int sent = tag, received = -1;
  const std::string report = capture_stderr([&] {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Irecv(&received, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &request);
    std::thread helper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::kill(::getpid(), SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      MPI_Send(&sent, 1, MPI_INT, 0, tag, MPI_COMM_SELF);
    });
    const hetero::detail::wait_call call{"hetero::test::", "report", -1, -1};
    const hetero::detail::wait_call_scope scope(call);
    hetero::detail::wait_one(request, hetero::detail::make_wait_policy(MPI_COMM_SELF), "a message from itself",
                             hetero::wait_kind::point_to_point, 0);
    helper.join();
  });
  CHECK(received == tag);
  INFO(report);
  CHECK_THAT(report, ContainsSubstring("hetero: rank " + std::to_string(me) + " (pid ") &&
                         ContainsSubstring(" s in hetero::test::report: a message from itself") &&
                         ContainsSubstring("on a communicator of 1 rank(s) as rank 0") &&
                         ContainsSubstring("not arrived: rank 0"));
}

TEST_CASE("SIGTERM prints the waits in progress, then the process dies by SIGTERM", "[faults][signal]") {
  REQUIRE(hetero::detail::g_wait_signals.term);
  const int size = 2 + static_cast<int>(std::random_device{}() % 30);
  const int root = static_cast<int>(std::random_device{}() % 100);
  {  // this thread's slot exists before the fork: the child allocates nothing. Its name has the
     // child's lengths, so the child's record must replace text that compares equal in size.
    hetero::detail::wait_record warm;
    warm.begin(hetero::detail::monotonic_ns(), 1, 0, {"hetero::test::", "sigtemp", -1, -1, "shapE"});
  }
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // no MPI here: only the record and the signal
    // Catch2 handles SIGTERM while a test runs: put back the handler the runtime installed.
    struct sigaction report {};
    report.sa_sigaction = hetero::detail::on_wait_report_signal;
    report.sa_flags = SA_SIGINFO;
    sigemptyset(&report.sa_mask);
    ::sigaction(SIGTERM, &report, nullptr);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    hetero::detail::wait_record record;
    record.begin(hetero::detail::coarse_monotonic_ns(), size, 1, {"hetero::test::", "sigterm", root, 8, "shape"});
    ::raise(SIGTERM);
    ::_exit(0);  // not reached: the default action of SIGTERM ends the child
  }
  ::close(pipe_fds[1]);
  std::string output;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    output.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK_THAT(output, ContainsSubstring("s in hetero::test::sigterm (root " + std::to_string(root) +
                                       ", 8 B): shape on a communicator of " + std::to_string(size) +
                                       " rank(s) as rank 1"));
}

TEST_CASE("the watchdog finds a blocking call past twice the wait limit, and its report names the call",
          "[faults][watchdog]") {
  using namespace hetero::detail;
  const int k = 4 + static_cast<int>(std::random_device{}() % 9);  // limit k/8 s: 0.5 to 1.5 s, exact
  const double limit = k / 8.0;
  const std::int64_t second = 1000000000;
  // Nothing watched: no blocking call, or one made with the timeout off.
  CHECK(overdue_blocked_call(monotonic_ns() + 1000 * second) == nullptr);
  {
    const blocking_call unwatched(wait_policy{false, 0, 2, 0, {}}, "off", hetero::wait_kind::collective);
    CHECK(overdue_blocked_call(monotonic_ns() + 1000 * second) == nullptr);
  }
  // The clock is moved, not waited for: the runtime's own watchdog (this folder's main starts
  // one) sees a call that lasts microseconds.
  const wait_call call{"hetero::test::", "flush", -1, -1};
  const wait_call_scope scope(call);
  const blocking_call blocked(wait_policy{false, limit, 3, 1, {}}, "flush", hetero::wait_kind::point_to_point);
  const std::int64_t at = monotonic_ns();
  CHECK(overdue_blocked_call(at + static_cast<std::int64_t>(1.9 * limit * 1e9)) == nullptr);
  const std::int64_t later = at + static_cast<std::int64_t>(2.1 * limit * 1e9);
  const wait_slot* overdue = overdue_blocked_call(later);
  REQUIRE(overdue != nullptr);
  const std::string report = capture_stderr([&] { report_blocked_call(STDERR_FILENO, *overdue, later); });
  INFO(report);
  char twice[32];
  std::snprintf(twice, sizeof twice, "%d.%03d", k / 4, (k % 4) * 250);  // 2 k / 8 s
  CHECK_THAT(report, ContainsSubstring("hetero: rank " + std::to_string(faults::world_rank()) + " (pid ") &&
                         ContainsSubstring(" s in hetero::test::flush, past " + std::string(twice) +
                                           " s (twice the wait limit); MPI cannot abandon this call") &&
                         ContainsSubstring("raise the limit (HETERO_WAIT_TIMEOUT") &&
                         ContainsSubstring("in hetero::test::flush on a communicator of 3 rank(s) as rank 1"));
}

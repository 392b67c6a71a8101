// The main of the fault-injection tests: hetero's test main with a short wait timeout, set
// through the runtime option (so every hetero wait in these tests gives up after 1 s).
#include <hetero/core/runtime.hpp>

#include "catch_mpi.hpp"
#include "faults_support.hpp"

int main(int argc, char** argv) {
  hetero::runtime runtime(argc, argv, {.wait_timeout = std::chrono::duration<double>(faults::timeout_seconds())});
  return hetero::testing::run_catch_session(argc, argv);
}

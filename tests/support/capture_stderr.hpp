// Runs a function with file descriptor 2 sent to a file and returns what was written there:
// for the errors hetero prints where it cannot raise (destructors, a second error of a call).
#ifndef HETERO_TESTS_CAPTURE_STDERR_HPP
#define HETERO_TESTS_CAPTURE_STDERR_HPP

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hetero::testing {

/// Runs `f` with fd 2 sent to a file of this process; returns what was written there. The
/// descriptor is restored also where `f` throws (the exception goes on).
template <class F>
std::string capture_stderr(F&& f) {
  const std::string path = "hetero-stderr-" + std::to_string(::getpid()) + ".txt";
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  if (saved < 0 || file < 0) throw std::runtime_error("capture_stderr: cannot open " + path);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
  struct restore {
    int saved;
    ~restore() {
      std::fflush(stderr);
      ::dup2(saved, STDERR_FILENO);
      ::close(saved);
    }
  };
  {
    const restore back{saved};
    f();
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return text.str();
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_CAPTURE_STDERR_HPP

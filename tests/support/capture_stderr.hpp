// Runs a function with file descriptor 2 sent to a temporary file and returns what was written
// there: for the errors hetero prints where it cannot raise (destructors, a second error of a
// call).
#ifndef HETERO_TESTS_CAPTURE_STDERR_HPP
#define HETERO_TESTS_CAPTURE_STDERR_HPP

#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace hetero::testing {

/// Runs `f` with fd 2 sent to an unnamed temporary file; returns what was written there, and
/// writes it to the restored fd 2 as well (a sanitizer's report during `f` stays in the test's
/// log). The descriptor is restored also where `f` throws (the exception goes on).
template <class F>
std::string capture_stderr(F&& f) {
  std::FILE* file = std::tmpfile();
  if (file == nullptr) throw std::runtime_error("capture_stderr: no temporary file");
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  if (saved < 0) {
    std::fclose(file);
    throw std::runtime_error("capture_stderr: cannot duplicate fd 2");
  }
  ::dup2(::fileno(file), STDERR_FILENO);
  struct restore {
    int saved;
    ~restore() {
      std::fflush(stderr);
      ::dup2(saved, STDERR_FILENO);
      ::close(saved);
    }
  };
  std::string text;
  try {
    {
      const restore back{saved};
      f();
    }
    std::rewind(file);
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
  } catch (...) {
    std::fclose(file);
    throw;
  }
  std::fclose(file);
  std::fputs(text.c_str(), stderr);
  return text;
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_CAPTURE_STDERR_HPP

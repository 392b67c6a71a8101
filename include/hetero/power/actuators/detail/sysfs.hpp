/// @file
/// Reading and writing the one-value files of Linux's sysfs (cpufreq, powercap), with errors that
/// name the file, say why it failed and what to use instead.
#ifndef HETERO_POWER_ACTUATORS_DETAIL_SYSFS_HPP
#define HETERO_POWER_ACTUATORS_DETAIL_SYSFS_HPP

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "hetero/core/error.hpp"
#include "hetero/power/actuators/actuator.hpp"

namespace hetero::power::detail {

/// The message for a failed `action` ("read", "write") on `file` with `error` (an errno value).
inline std::string sysfs_error(const std::filesystem::path& file, std::string_view action, int error,
                               std::string_view what) {
  std::string why;
  if (error == ENOENT)
    why = "it does not exist: the kernel does not expose " + std::string(what) +
          " there (no driver loaded, a virtual machine, or another sysfs root)";
  else if (error == EACCES || error == EPERM || error == EROFS)
    why = "permission denied: changing " + std::string(what) +
          " needs root, or write access to this file granted by an administrator";
  else
    why = std::strerror(error);
  return ::hetero::detail::message("cannot ", action, " ", file.string(), ": ", why, " (errno ", error, "); ",
                                   no_hardware_hint);
}

/// The trimmed contents of a sysfs file; throws `hetero::backend_error` naming the file.
inline std::string read_sysfs(const std::filesystem::path& file, std::string_view what) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw backend_error(sysfs_error(file, "read", errno, what));
  char buffer[256];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  const int error = errno;
  ::close(fd);
  if (n < 0) throw backend_error(sysfs_error(file, "read", error, what));
  std::string text(buffer, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

/// `read_sysfs` as an integer; throws `hetero::backend_error` when it is not one.
inline long long read_sysfs_integer(const std::filesystem::path& file, std::string_view what) {
  const std::string text = read_sysfs(file, what);
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0')
    ::hetero::detail::raise<backend_error>(file.string(), " holds \"", text, "\", not an integer");
  return value;
}

/// Throws `hetero::backend_error` naming `file` unless this process may write it.
inline void check_writable(const std::filesystem::path& file, std::string_view what) {
  if (::access(file.c_str(), W_OK) != 0) throw backend_error(sysfs_error(file, "write", errno, what));
}

/// Writes `value` to a sysfs file (whole, in one write, as sysfs wants); throws
/// `hetero::backend_error` naming the file.
inline void write_sysfs(const std::filesystem::path& file, std::string_view value, std::string_view what) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw backend_error(sysfs_error(file, "write", errno, what));
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int error = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    throw backend_error(sysfs_error(file, "write", n < 0 ? error : EIO, what));
}

}  // namespace hetero::power::detail

#endif  // HETERO_POWER_ACTUATORS_DETAIL_SYSFS_HPP

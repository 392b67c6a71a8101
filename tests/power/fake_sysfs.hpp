// A fake sysfs tree in a fresh temporary directory, removed at the end of the test: the cpufreq
// and RAPL actuators are pointed at it instead of /sys.
#ifndef HETERO_TESTS_POWER_FAKE_SYSFS_HPP
#define HETERO_TESTS_POWER_FAKE_SYSFS_HPP

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace hetero::testing {

class fake_sysfs {
 public:
  fake_sysfs() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hetero-sysfs-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    m_root = pattern;
  }
  ~fake_sysfs() {
    std::error_code ignored;
    std::filesystem::remove_all(m_root, ignored);
  }
  fake_sysfs(const fake_sysfs&) = delete;
  fake_sysfs& operator=(const fake_sysfs&) = delete;

  [[nodiscard]] const std::filesystem::path& root() const noexcept { return m_root; }

  // Writes `text` (and a newline, as the kernel does) to root/relative, creating folders.
  void write(const std::filesystem::path& relative, const std::string& text) const {
    const auto file = m_root / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text << '\n';
  }
  // The contents of root/relative without the trailing newline.
  [[nodiscard]] std::string read(const std::filesystem::path& relative) const {
    std::ifstream in(m_root / relative);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

 private:
  std::filesystem::path m_root;
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_POWER_FAKE_SYSFS_HPP

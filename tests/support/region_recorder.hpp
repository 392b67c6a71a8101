// An observer that records, in order, the trace regions one module opens (hetero::observer's
// region_begin): for tests that check which regions a call opens.
#ifndef HETERO_TESTS_SUPPORT_REGION_RECORDER_HPP
#define HETERO_TESTS_SUPPORT_REGION_RECORDER_HPP

#include <hetero/core.hpp>

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hetero::testing {

class region_recorder : public hetero::observer {
 public:
  /// Records the regions "hetero:<module>:<label>[:<part>]".
  explicit region_recorder(std::string module) : m_module(std::move(module)) {}

  void region_begin(std::string_view module, std::string_view label, std::string_view part) noexcept override {
    if (module != m_module) return;
    std::lock_guard lock(m_mutex);
    m_seen.emplace_back(std::string(label), std::string(part));
  }
  [[nodiscard]] hetero::observer_events events() const noexcept override {
    return hetero::observer_events::regions;
  }

  /// (label, part) of each region opened so far, in order.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> seen() {
    std::lock_guard lock(m_mutex);
    return m_seen;
  }
  /// The parts of the regions named `label`, in order.
  [[nodiscard]] std::vector<std::string> parts(std::string_view label) {
    std::lock_guard lock(m_mutex);
    std::vector<std::string> parts;
    for (const auto& [l, p] : m_seen)
      if (l == label) parts.push_back(p);
    return parts;
  }

 private:
  std::string m_module;
  std::mutex m_mutex;
  std::vector<std::pair<std::string, std::string>> m_seen;
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_SUPPORT_REGION_RECORDER_HPP

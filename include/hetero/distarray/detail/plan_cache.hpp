/// @file
/// Exchange plans are computed once per pair of layouts: a process-wide registry lets every
/// array with the same layouts share one plan while any of them holds it (weak references,
/// so nothing outlives its arrays), and each array keeps strong references to the plans it
/// used last.
#ifndef HETERO_DISTARRAY_DETAIL_PLAN_CACHE_HPP
#define HETERO_DISTARRAY_DETAIL_PLAN_CACHE_HPP

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hetero::detail {

/// A key made of integers and names, compared byte by byte.
class plan_key {
 public:
  plan_key& add(std::int64_t v) {
    char bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    m_text.append(bytes, sizeof v);
    return *this;
  }
  plan_key& add(std::string_view name) {
    add(static_cast<std::int64_t>(name.size()));
    m_text.append(name);
    return *this;
  }
  plan_key& add(const std::vector<std::int64_t>& values) {
    add(static_cast<std::int64_t>(values.size()));
    for (auto v : values) add(v);
    return *this;
  }
  template <std::size_t N>
  plan_key& add(const std::array<std::int64_t, N>& values) {
    for (auto v : values) add(v);
    return *this;
  }
  [[nodiscard]] const std::string& str() const noexcept { return m_text; }

 private:
  std::string m_text;
};

/// How many plans (of any kind) this process has built: lets tests see that a plan is reused.
inline std::atomic<std::int64_t>& plan_builds() {
  static std::atomic<std::int64_t> count{0};
  return count;
}

/// The plan for `key`, shared with whoever holds one already, else made by `build()`.
template <class Plan, class Build>
std::shared_ptr<Plan> shared_plan(const std::string& key, Build&& build) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::weak_ptr<Plan>> registry;
  std::lock_guard lock(mutex);
  if (auto it = registry.find(key); it != registry.end()) {
    if (auto plan = it->second.lock()) return plan;
  }
  for (auto it = registry.begin(); it != registry.end();) it = it->second.expired() ? registry.erase(it) : ++it;
  std::shared_ptr<Plan> plan = build();
  ++plan_builds();
  registry[key] = plan;
  return plan;
}

/// The plans one array holds: the most recently used first, at most `capacity` of them.
class plan_cache {
 public:
  /// The plan for `key` (`kind` names the plan type): from this cache, else (when `shared`)
  /// from another array with the same layouts, else built. Plans whose buffers may stay in
  /// use after a call returns (asynchronous halo exchanges) must not be shared.
  template <class Plan, class Build>
  std::shared_ptr<Plan> get(std::string_view kind, const std::string& key, bool shared, Build&& build) {
    std::string full(kind);
    full += '\0';
    full += key;
    std::lock_guard lock(m_mutex);
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
      if (it->first != full) continue;
      m_entries.splice(m_entries.begin(), m_entries, it);
      return std::static_pointer_cast<Plan>(it->second);
    }
    std::shared_ptr<Plan> plan;
    if (shared) {
      plan = shared_plan<Plan>(full, std::forward<Build>(build));
    } else {
      plan = build();
      ++plan_builds();
    }
    m_entries.emplace_front(std::move(full), plan);
    if (m_entries.size() > capacity) m_entries.pop_back();
    return plan;
  }

  /// Drops every plan.
  void clear() {
    std::lock_guard lock(m_mutex);
    m_entries.clear();
  }

 private:
  static constexpr std::size_t capacity = 16;
  std::mutex m_mutex;
  std::list<std::pair<std::string, std::shared_ptr<void>>> m_entries;
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_PLAN_CACHE_HPP

/// @file
/// `hetero::tracer`: records what each thread of this rank did (regions: tasks, collectives,
/// split loops' parts, reflect and gmove, coarray synchronisations, power settings; waits, the
/// task workers' idle time included; split loops' weights; phases) as Chrome trace events, the
/// JSON that Perfetto and chrome://tracing open. The runtime runs one when asked
/// (`runtime_options::trace_file` or `HETERO_TRACE`) and merges every rank's into one file at
/// its end (docs/trace.md).
#ifndef HETERO_CORE_TRACE_HPP
#define HETERO_CORE_TRACE_HPP

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hetero/core/observer.hpp"

namespace hetero {

/// An observer that records this rank's regions, waits, split loops and phases per thread, in
/// memory, for `tracer::json_events`. Recording one event costs a clock read and an append under
/// the thread's own (uncontended) lock. A thread keeps at most `max_events_per_thread` events;
/// the rest are counted as dropped (`dropped`), never blocked on.
class tracer final : public observer {
 public:
  /// Events a thread keeps at most (2^20 by default: about 64 MiB per thread at most).
  explicit tracer(std::size_t max_events_per_thread = std::size_t{1} << 20U)
      : m_id(next_id()), m_limit(max_events_per_thread), m_origin(clock::now()) {}

  /// Times are measured from now on (the runtime calls it right after a barrier, so that every
  /// rank's zero is the same moment to within the barrier's skew).
  void restart_clock() noexcept { m_origin = clock::now(); }

  void wait_begin(wait_kind kind, std::string_view label) noexcept override {
    // The task workers' idle wait is idle time, not a wait for something.
    const bool idle = kind == wait_kind::task && label == detail::idle_worker_wait;
    open(idle ? "idle" : "wait", idle ? std::string_view("idle") : label, {}, detail::module_of(kind));
  }
  void wait_end(wait_kind, std::string_view) noexcept override { close(); }
  void region_begin(std::string_view module, std::string_view label, std::string_view part) noexcept override {
    open(module, label, part, {});
  }
  void region_end() noexcept override { close(); }
  void phase_end() noexcept override { instant("phase", "phase end", {}); }
  void split_loop_end(const split_loop_event& e) noexcept override {
    char args[160];
    std::snprintf(args, sizeof args, R"("cpu_weight":%.4f,"device_items":%lld,"host_items":%lld)", e.cpu_weight,
                  static_cast<long long>(e.device_items), static_cast<long long>(e.host_items));
    instant("exec", e.label, args);
  }

  /// Events not recorded because a thread's buffer was full.
  [[nodiscard]] std::uint64_t dropped() const noexcept { return m_dropped.load(std::memory_order_relaxed); }

  /// This rank's events as Chrome trace events (comma-separated JSON objects, no brackets), with
  /// `pid` = `rank`: one track per thread, named "rank R thread T" (T = 0 for the thread that
  /// created the tracer), and the process named "rank R". Regions still open are left out.
  [[nodiscard]] std::string json_events(int rank) const {
    std::string out;
    const auto add_meta = [&](std::string_view what, int tid, std::string_view key, std::string_view name) {
      if (!out.empty()) out += ",\n";
      out += R"({"ph":"M","pid":)" + std::to_string(rank) + R"(,"tid":)" + std::to_string(tid) + R"(,"name":")";
      out.append(what).append(R"(","args":{")").append(key).append(R"(":")");
      escape(out, name);
      out += "\"}}";
    };
    add_meta("process_name", 0, "name", "rank " + std::to_string(rank));
    if (const std::uint64_t lost = dropped(); lost > 0)
      add_meta("process_labels", 0, "labels",
               std::to_string(lost) + " events dropped (a thread's buffer was full)");
    std::scoped_lock lock(m_threads_mutex);
    for (std::size_t t = 0; t < m_threads.size(); ++t) {
      const thread_log& log = *m_threads[t];
      const int tid = static_cast<int>(t);
      add_meta("thread_name", tid, "name", "rank " + std::to_string(rank) + " thread " + std::to_string(t));
      std::scoped_lock log_lock(log.mutex);
      for (const record& r : log.records) {
        if (!r.instant && r.duration_ns < 0) continue;  // still open
        out += ",\n";
        out += R"({"ph":")";
        out += r.instant ? "i" : "X";
        out += R"(","pid":)" + std::to_string(rank) + R"(,"tid":)" + std::to_string(tid) + R"(,"cat":")";
        escape(out, r.category);
        out += R"(","name":")";
        escape(out, r.name);
        char times[96];
        if (r.instant)
          std::snprintf(times, sizeof times, R"(","s":"t","ts":%.3f)", static_cast<double>(r.start_ns) * 1e-3);
        else
          std::snprintf(times, sizeof times, R"(","ts":%.3f,"dur":%.3f)", static_cast<double>(r.start_ns) * 1e-3,
                        static_cast<double>(r.duration_ns) * 1e-3);
        out += times;
        if (!r.args.empty()) out += R"(,"args":{)" + r.args + "}";
        out += "}";
      }
    }
    return out;
  }

  /// Appends `text` to `out` as the inside of a JSON string.
  static void escape(std::string& out, std::string_view text) {
    for (const char c : text) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char code[8];
        std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        out += code;
      } else {
        out += c;
      }
    }
  }

 private:
  using clock = std::chrono::steady_clock;

  struct record {
    std::int64_t start_ns = 0;
    std::int64_t duration_ns = -1;  // -1: not ended yet
    bool instant = false;
    std::string category, name, args;
  };
  struct open_region {
    std::int64_t start_ns;
    std::size_t slot;  // the record it fills in at its end; npos when dropped
  };
  struct thread_log {
    std::thread::id thread = std::this_thread::get_id();
    mutable std::mutex mutex;
    std::vector<record> records;
    std::vector<open_region> open;
  };

  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> ids{0};
    return ids.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  [[nodiscard]] std::int64_t now_ns() const noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - m_origin).count();
  }

  // This thread's log in this tracer (created at its first event; nullptr when out of memory).
  thread_log* log() noexcept {
    struct cached {
      std::uint64_t tracer = 0;
      thread_log* log = nullptr;
    };
    thread_local cached mine;
    if (mine.tracer == m_id) return mine.log;
    try {
      std::scoped_lock lock(m_threads_mutex);
      for (const auto& l : m_threads)  // this thread alternates between two tracers
        if (l->thread == std::this_thread::get_id()) {
          mine = {m_id, l.get()};
          return mine.log;
        }
      m_threads.push_back(std::make_unique<thread_log>());
      mine = {m_id, m_threads.back().get()};
      return mine.log;
    } catch (...) {
      return nullptr;
    }
  }

  void open(std::string_view category, std::string_view label, std::string_view part,
            std::string_view wait_module) noexcept {
    thread_log* l = log();
    if (!l) return;
    const std::int64_t start = now_ns();
    std::scoped_lock lock(l->mutex);
    try {
      std::size_t slot = npos;
      if (l->records.size() < m_limit) {
        record& r = l->records.emplace_back();
        r.start_ns = start;
        r.category.assign(category);
        r.name.assign(label);
        if (!part.empty()) r.name.append(":").append(part);
        if (!wait_module.empty()) r.args.append(R"("module":")").append(wait_module).append("\"");
        slot = l->records.size() - 1;
      } else {
        m_dropped.fetch_add(1, std::memory_order_relaxed);
      }
      l->open.push_back({start, slot});
    } catch (...) {
      m_dropped.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void close() noexcept {
    thread_log* l = log();
    if (!l) return;
    const std::int64_t end = now_ns();
    std::scoped_lock lock(l->mutex);
    if (l->open.empty()) return;  // began before this tracer listened
    const open_region o = l->open.back();
    l->open.pop_back();
    if (o.slot != npos) l->records[o.slot].duration_ns = end - o.start_ns;
  }

  void instant(std::string_view category, std::string_view name, std::string_view args) noexcept {
    thread_log* l = log();
    if (!l) return;
    const std::int64_t at = now_ns();
    std::scoped_lock lock(l->mutex);
    try {
      if (l->records.size() >= m_limit) {
        m_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      record& r = l->records.emplace_back();
      r.start_ns = at;
      r.instant = true;
      r.category.assign(category);
      r.name.assign(name);
      r.args.assign(args);
    } catch (...) {
      m_dropped.fetch_add(1, std::memory_order_relaxed);
    }
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  std::uint64_t m_id;
  std::size_t m_limit;
  clock::time_point m_origin;
  std::atomic<std::uint64_t> m_dropped{0};
  mutable std::mutex m_threads_mutex;
  std::vector<std::unique_ptr<thread_log>> m_threads;
};

}  // namespace hetero

#endif  // HETERO_CORE_TRACE_HPP

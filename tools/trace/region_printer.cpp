// hetero_region_printer: a Kokkos Tools library (loaded the usual way, KOKKOS_PROFILE_LIBRARY or
// --kokkos-tools-library) that prints, at Kokkos::finalize, every region each rank entered, nested
// as it ran: per thread a tree of region names with how often each was entered and the time spent
// in it. It sees hetero's regions (`hetero:<module>:<label>`, docs/trace.md) beside the user's own
// and Kokkos' (Kokkos::Profiling::pushRegion).
//
// Environment: HETERO_REGION_PRINTER_OUTPUT=<prefix> writes rank R's report to <prefix>.<R>
// instead of stderr; HETERO_REGION_PRINTER_DEPTH=<n> prints n levels at most (default 6).
// The tests read the nesting through hetero_region_printer_paths().
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct totals {
  std::uint64_t count = 0;
  double seconds = 0;
};

struct open_region {
  std::string path;  // the names from the outermost region down, joined by '>'
  clock_type::time_point start;
};

struct thread_stack {
  int index = 0;
  std::vector<open_region> open;
};

std::mutex g_mutex;
std::map<std::pair<int, std::string>, totals> g_totals;  // (thread, path) -> totals
int g_threads = 0;
std::string g_paths;  // hetero_region_printer_paths' answer, rebuilt on each call

thread_stack& stack() {
  thread_local thread_stack mine = [] {
    std::scoped_lock lock(g_mutex);
    return thread_stack{g_threads++, {}};
  }();
  return mine;
}

std::string rank_name() {
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"})
    if (const char* value = std::getenv(name)) return value;
  return "0";
}

void report() {
  const std::string rank = rank_name();
  int depth_limit = 6;
  if (const char* d = std::getenv("HETERO_REGION_PRINTER_DEPTH")) depth_limit = std::atoi(d);
  std::string text = "== regions of rank " + rank + " (count, seconds inside), per thread ==\n";
  int thread = -1;
  std::scoped_lock lock(g_mutex);
  for (const auto& [key, t] : g_totals) {
    const auto& [index, path] = key;
    int depth = 0;
    std::size_t last = 0;
    for (std::size_t at = path.find('>'); at != std::string::npos; at = path.find('>', at + 1)) {
      ++depth;
      last = at + 1;
    }
    if (depth >= depth_limit) continue;
    if (index != thread) {
      thread = index;
      text += "thread " + std::to_string(index) + "\n";
    }
    char line[512];
    std::snprintf(line, sizeof line, "%*s%-*s %8llu %10.6f\n", 2 + 2 * depth, "", 90 - 2 * depth,
                  path.substr(last).c_str(), static_cast<unsigned long long>(t.count), t.seconds);
    text += line;
  }
  const char* prefix = std::getenv("HETERO_REGION_PRINTER_OUTPUT");
  std::FILE* out = prefix ? std::fopen((std::string(prefix) + "." + rank).c_str(), "w") : stderr;
  if (!out) {
    std::fprintf(stderr, "hetero_region_printer: cannot write %s.%s\n", prefix, rank.c_str());
    out = stderr;
  }
  std::fwrite(text.data(), 1, text.size(), out);
  if (out != stderr) std::fclose(out);
}

}  // namespace

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {}

void kokkosp_finalize_library() { report(); }

void kokkosp_push_profile_region(const char* name) {
  thread_stack& s = stack();
  std::string path = s.open.empty() ? std::string(name) : s.open.back().path + ">" + name;
  s.open.push_back({std::move(path), clock_type::now()});
}

void kokkosp_pop_profile_region() {
  thread_stack& s = stack();
  if (s.open.empty()) return;
  const open_region r = std::move(s.open.back());
  s.open.pop_back();
  const double seconds = std::chrono::duration<double>(clock_type::now() - r.start).count();
  std::scoped_lock lock(g_mutex);
  totals& t = g_totals[{s.index, r.path}];
  ++t.count;
  t.seconds += seconds;
}

/// Every region path closed so far on any thread ("outer>inner>..."), one per line, sorted.
const char* hetero_region_printer_paths() {
  std::scoped_lock lock(g_mutex);
  std::map<std::string, std::uint64_t> paths;
  for (const auto& [key, t] : g_totals) paths[key.second] += t.count;
  g_paths.clear();
  for (const auto& [path, count] : paths) g_paths += path + "\n";
  return g_paths.c_str();
}

}  // extern "C"

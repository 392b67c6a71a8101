/// @file
/// The waits in progress in this process, for a report on a signal: every thread that waits
/// for other ranks (through core/mpi/wait.hpp) records what it waits for, since when, on how
/// many ranks and, where known, which ranks have not arrived, in a slot of its own. Slots are
/// linked into one list on a thread's first long wait and reused after the thread ends, so
/// recording a wait costs a few stores and nothing is allocated on the way. On SIGUSR1 (report
/// and continue) or SIGTERM (report, then die as before) the handler writes the active slots
/// to stderr with write(2) only: no lock, no allocation, no stdio.
#ifndef HETERO_CORE_DETAIL_WAIT_REGISTRY_HPP
#define HETERO_CORE_DETAIL_WAIT_REGISTRY_HPP

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace hetero::detail {

inline constexpr std::size_t wait_text_bytes = 200;  // the wait's description, cut if longer
inline constexpr int wait_missing_max = 16;          // missing ranks listed in a report

/// Appends to a fixed buffer without allocating (async-signal-safe).
class signal_safe_line {
 public:
  void text(std::string_view s) noexcept {
    for (char c : s)
      if (m_size < sizeof(m_buffer) - 1) m_buffer[m_size++] = c;
  }
  void text(const char* s) noexcept {
    while (s && *s && m_size < sizeof(m_buffer) - 1) m_buffer[m_size++] = *s++;
  }
  void number(long long v) noexcept {
    char digits[24];
    int n = 0;
    const bool negative = v < 0;
    unsigned long long u =
        negative ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0 && n < 24);
    if (negative) text("-");
    while (n > 0)
      if (m_size < sizeof(m_buffer) - 1) m_buffer[m_size++] = digits[--n];
  }
  /// `ns` as seconds with three decimals.
  void seconds(std::int64_t ns) noexcept {
    const std::int64_t ms = ns / 1000000;
    number(ms / 1000);
    text(".");
    const auto frac = static_cast<int>(ms % 1000);
    if (frac < 100) text("0");
    if (frac < 10) text("0");
    number(frac);
  }
  /// Copies the line into `out` (NUL-terminated, cut at `bytes`).
  void copy_to(char* out, std::size_t bytes) const noexcept {
    if (bytes == 0) return;
    const std::size_t n = std::min(m_size, bytes - 1);
    for (std::size_t i = 0; i < n; ++i) out[i] = m_buffer[i];
    out[n] = '\0';
  }
  void write(int fd) noexcept {
    m_buffer[m_size++] = '\n';
    std::size_t done = 0;
    while (done < m_size) {
      const ssize_t w = ::write(fd, m_buffer + done, m_size - done);
      if (w <= 0 && errno != EINTR) break;
      if (w > 0) done += static_cast<std::size_t>(w);
    }
    m_size = 0;
  }

 private:
  char m_buffer[512] = {};
  std::size_t m_size = 0;
};

/// The pieces a wait's description is made of: the public call around it (`api` + `name`,
/// its root and byte count where told) and the wait's own name `what`.
struct wait_words {
  std::string_view api;   ///< e.g. "hetero::communicator::" (empty: no call around the wait)
  std::string_view name;  ///< e.g. "gather"
  int root = -1;          ///< -1: none
  long long bytes = -1;   ///< -1: not told
  std::string_view what;
};

/// Writes the description of `w` ("hetero::communicator::gather (root 0, 8 B): shape").
inline void describe(signal_safe_line& line, const wait_words& w) noexcept {
  if (w.api.empty() && w.name.empty()) return line.text(w.what);
  line.text(w.api);
  line.text(w.name);
  if (w.root >= 0 || w.bytes >= 0) {
    line.text(" (");
    if (w.root >= 0) {
      line.text("root ");
      line.number(w.root);
      if (w.bytes >= 0) line.text(", ");
    }
    if (w.bytes >= 0) {
      line.number(w.bytes);
      line.text(" B");
    }
    line.text(")");
  }
  if (w.what != w.name) {
    line.text(": ");
    line.text(w.what);
  }
}

/// `wait_words` copied into fixed buffers (each cut at its size), so that a report can format
/// them after the strings they came from are gone: a few short copies per recorded wait, where
/// formatting the text up front cost more than a small MPI call's own front end.
class wait_words_copy {
 public:
  void assign(const wait_words& w) noexcept {
    copy(m_api, m_api_size, w.api);
    copy(m_name, m_name_size, w.name);
    copy(m_what, m_what_size, w.what);
    m_root = w.root;
    m_bytes = w.bytes;
  }
  [[nodiscard]] wait_words get() const noexcept {
    return {{m_api, m_api_size}, {m_name, m_name_size}, m_root, m_bytes, {m_what, m_what_size}};
  }

 private:
  // A thread waits in the same few calls over and over: comparing is cheaper than copying.
  template <std::size_t N>
  static void copy(char (&to)[N], std::size_t& size, std::string_view from) noexcept {
    const std::size_t n = std::min(N, from.size());
    // An empty view's data() may be null: neither compared nor copied.
    if (n != 0 && (n != size || std::memcmp(to, from.data(), n) != 0)) std::memcpy(to, from.data(), n);
    size = n;
  }
  char m_api[48] = {};
  char m_name[48] = {};
  char m_what[104] = {};
  std::size_t m_api_size = 0, m_name_size = 0, m_what_size = 0;
  int m_root = -1;
  long long m_bytes = -1;
};

/// One thread's record. Written by its thread only; read by the signal handler (any thread),
/// which sees either the old or the new values of each word: a report may mix two waits of a
/// thread that changed wait exactly then, never crash.
struct wait_slot {
  std::atomic<bool> in_use{false};  ///< owned by a live thread
  std::atomic<bool> active{false};  ///< a wait is recorded
  std::atomic<std::int64_t> since_ns{0};
  /// A call that cannot give up by itself (a blocking MPI call): past `since_ns + limit_ns` the
  /// watchdog ends the process with a report (0: not watched; core/detail/watchdog.hpp).
  std::atomic<std::int64_t> limit_ns{0};
  std::atomic<int> limits{2};  ///< how many wait limits `limit_ns` is (for the report)
  std::atomic<int> comm_size{0};
  std::atomic<int> rank{-1};
  std::atomic<int> missing_count{-1};  ///< -1: not known
  std::atomic<int> missing[wait_missing_max] = {};
  wait_words_copy words;  ///< what it waits in, copied (formatted only by a report)
  int thread_number = 0;
  wait_slot* next = nullptr;  ///< immutable once linked
};

struct wait_registry_state {
  std::atomic<wait_slot*> head{nullptr};
  std::atomic<int> threads{0};
  std::atomic<int> world_rank{-1};
};
inline wait_registry_state g_wait_registry;

/// CLOCK_MONOTONIC in nanoseconds (what steady_clock reads on Linux; async-signal-safe).
inline std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// CLOCK_MONOTONIC_COARSE in nanoseconds: the same clock at the kernel's tick (a few ms), read
/// in a few ns; a report's start time for waits too short to be worth a precise clock read.
inline std::int64_t coarse_monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// The calling thread's slot, taken on first use (a free one, else a new one linked in) and
/// freed when the thread ends. Slots are never deleted: the handler may be reading one.
class thread_wait_slot {
 public:
  thread_wait_slot() = default;
  thread_wait_slot(const thread_wait_slot&) = delete;
  thread_wait_slot& operator=(const thread_wait_slot&) = delete;
  ~thread_wait_slot() {
    if (!m_slot) return;
    m_slot->active.store(false, std::memory_order_release);
    m_slot->in_use.store(false, std::memory_order_release);
  }

  wait_slot& get() {
    if (m_slot) return *m_slot;
    auto& r = g_wait_registry;
    for (wait_slot* s = r.head.load(std::memory_order_acquire); s; s = s->next) {
      bool unused = false;
      if (s->in_use.compare_exchange_strong(unused, true)) return *(m_slot = s);
    }
    auto* s = new wait_slot;  // NOLINT: lives as long as the process (the handler may read it)
    s->in_use.store(true, std::memory_order_relaxed);
    s->thread_number = r.threads.fetch_add(1) + 1;
    s->next = r.head.load(std::memory_order_relaxed);
    while (!r.head.compare_exchange_weak(s->next, s, std::memory_order_release, std::memory_order_relaxed)) {
    }
    return *(m_slot = s);
  }

 private:
  wait_slot* m_slot = nullptr;
};
inline thread_local thread_wait_slot t_wait_slot;

/// Records one wait of this thread while it lives (RAII); a wait nested in another recorded
/// one (same thread) is not recorded again.
class wait_record {
 public:
  wait_record() = default;
  wait_record(const wait_record&) = delete;
  wait_record& operator=(const wait_record&) = delete;
  ~wait_record() {
    if (m_slot) m_slot->active.store(false, std::memory_order_release);
  }

  /// Starts recording a wait described by `words` (copied) since `since_ns` (monotonic). A
  /// blocking call that cannot give up passes its wait limit as `limit_ns` (> 0), which arms
  /// the watchdog for it, and says how many wait limits that is (`limits`).
  void begin(std::int64_t since_ns, int comm_size, int rank, const wait_words& words, std::int64_t limit_ns = 0,
             int limits = 2) noexcept {
    if (m_slot) return;
    wait_slot& s = t_wait_slot.get();
    if (s.active.load(std::memory_order_relaxed)) return;  // an outer wait is recorded
    s.words.assign(words);
    s.since_ns.store(since_ns, std::memory_order_relaxed);
    s.limit_ns.store(limit_ns, std::memory_order_relaxed);
    s.limits.store(limits, std::memory_order_relaxed);
    s.comm_size.store(comm_size, std::memory_order_relaxed);
    s.rank.store(rank, std::memory_order_relaxed);
    s.missing_count.store(-1, std::memory_order_relaxed);
    s.active.store(true, std::memory_order_release);
    m_slot = &s;
  }

  /// The ranks not arrived yet (the first `wait_missing_max` are kept).
  void missing(std::span<const int> ranks) noexcept {
    if (!m_slot) return;
    const auto n = static_cast<int>(std::min<std::size_t>(ranks.size(), wait_missing_max));
    m_slot->missing_count.store(-1, std::memory_order_relaxed);
    for (int i = 0; i < n; ++i)
      m_slot->missing[i].store(ranks[static_cast<std::size_t>(i)], std::memory_order_relaxed);
    m_slot->missing_count.store(static_cast<int>(ranks.size()), std::memory_order_release);
  }

  [[nodiscard]] bool recorded() const noexcept { return m_slot != nullptr; }

 private:
  wait_slot* m_slot = nullptr;
};

/// Writes one line per wait in progress in this process to `fd` (async-signal-safe).
inline void write_pending_waits(int fd) noexcept {
  const std::int64_t now = monotonic_ns();
  const int world_rank = g_wait_registry.world_rank.load(std::memory_order_relaxed);
  int shown = 0;
  signal_safe_line line;
  for (wait_slot* s = g_wait_registry.head.load(std::memory_order_acquire); s; s = s->next) {
    if (!s->active.load(std::memory_order_acquire)) continue;
    ++shown;
    line.text("hetero: rank ");
    line.number(world_rank);
    line.text(" (pid ");
    line.number(static_cast<long long>(::getpid()));
    line.text(", thread ");
    line.number(s->thread_number);
    line.text("): waiting ");
    line.seconds(std::max<std::int64_t>(0, now - s->since_ns.load(std::memory_order_relaxed)));
    line.text(" s in ");
    describe(line, s->words.get());
    const int size = s->comm_size.load(std::memory_order_relaxed);
    if (size > 0) {
      line.text(" on a communicator of ");
      line.number(size);
      line.text(" rank(s) as rank ");
      line.number(s->rank.load(std::memory_order_relaxed));
    }
    const int missing = s->missing_count.load(std::memory_order_acquire);
    if (missing >= 0) {
      line.text("; not arrived: ");
      if (missing == 0) line.text("none (finishing)");
      for (int i = 0; i < std::min(missing, wait_missing_max); ++i) {
        if (i > 0) line.text(", ");
        line.text("rank ");
        line.number(s->missing[i].load(std::memory_order_relaxed));
      }
      if (missing > wait_missing_max) line.text(", ...");
    } else {
      line.text("; ranks not arrived: not known");
    }
    line.write(fd);
  }
  if (shown == 0) {
    line.text("hetero: rank ");
    line.number(world_rank);
    line.text(" (pid ");
    line.number(static_cast<long long>(::getpid()));
    line.text("): no hetero wait in progress");
    line.write(fd);
  }
}

/// The signal handlers hetero::runtime installs, and the actions they replaced.
struct wait_signal_state {
  struct sigaction old_usr1 {};
  struct sigaction old_term {};
  bool usr1 = false;
  bool term = false;
};
inline wait_signal_state g_wait_signals;

/// Prints the waits in progress, then does what the replaced action did: calls a handler
/// that was there (MPICH installs one for SIGUSR1), dies by SIGTERM where that was the
/// default, and otherwise (SIGUSR1's default would kill) lets the program go on.
inline void on_wait_report_signal(int signal_number, siginfo_t* info, void* context) {
  const int saved = errno;
  write_pending_waits(STDERR_FILENO);
  const auto& st = g_wait_signals;
  const struct sigaction& old = signal_number == SIGTERM ? st.old_term : st.old_usr1;
  if ((old.sa_flags & SA_SIGINFO) != 0) {
    if (old.sa_sigaction != nullptr) old.sa_sigaction(signal_number, info, context);
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(signal_number);
  } else if (signal_number == SIGTERM) {
    // Die as the default action would: the signal is blocked in its handler, so it is
    // delivered, with the default action, once the handler returns.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    ::sigaction(SIGTERM, &default_action, nullptr);
    ::raise(SIGTERM);
  }
  errno = saved;
}

/// Installs the report on SIGUSR1 and SIGTERM, unless the program ignores the signal; a
/// handler already there is called after the report. Returns whether anything was installed
/// now (false when it already was: the first installer removes them).
inline bool install_wait_report_signals() noexcept {
  auto& st = g_wait_signals;
  const auto install = [](int sig, struct sigaction& old) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) return false;
    if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN) return false;
    struct sigaction report {};
    report.sa_sigaction = on_wait_report_signal;
    sigemptyset(&report.sa_mask);
    report.sa_flags = SA_RESTART | SA_SIGINFO;
    old = current;
    return ::sigaction(sig, &report, nullptr) == 0;
  };
  if (st.usr1 || st.term) return false;  // installed by an outer runtime, which removes them
  st.usr1 = install(SIGUSR1, st.old_usr1);
  st.term = install(SIGTERM, st.old_term);
  return st.usr1 || st.term;
}

/// Puts back the actions `install_wait_report_signals` replaced.
inline void remove_wait_report_signals() noexcept {
  auto& st = g_wait_signals;
  if (st.usr1) ::sigaction(SIGUSR1, &st.old_usr1, nullptr);
  if (st.term) ::sigaction(SIGTERM, &st.old_term, nullptr);
  st.usr1 = st.term = false;
}

}  // namespace hetero::detail

#endif  // HETERO_CORE_DETAIL_WAIT_REGISTRY_HPP

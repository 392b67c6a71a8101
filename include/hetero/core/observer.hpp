/// @file
/// The one interface through which modules tell observers (the power module's monitor, a
/// tracer, a user's logger) that this rank starts or stops waiting, that a time step (phase)
/// ends, that a work-sharing loop finished, and that a thread enters or leaves a named region
/// of hetero's work (a task, a collective, a split loop's part). Lower modules call
/// `wait_scope`, `mark_phase`, `detail::notify_split_loop` and `region`; none of them knows who
/// listens. Any number of observers may listen at once (`add_observer`); each sees every event
/// it asked for. Waits and regions are also Kokkos Tools regions (`hetero:<module>:<label>`)
/// when a Kokkos Tools library is loaded (docs/trace.md).
#ifndef HETERO_CORE_OBSERVER_HPP
#define HETERO_CORE_OBSERVER_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hetero {

/// What a rank is waiting for.
enum class wait_kind {
  collective,      ///< a collective operation (comm module, MPI collectives)
  halo,            ///< a halo exchange or section move (distarray module)
  task,            ///< a task-graph wait or a task waiting for a remote event (task module)
  point_to_point,  ///< a send/receive or one-sided synchronisation
  user             ///< marked by hand
};

/// What one run of a work-sharing loop (exec module: a loop split between a device part and a
/// host part) measured. The label and the numbers are valid during the notification only.
struct split_loop_event {
  std::string_view label;         ///< the loop's label
  double device_seconds = 0;      ///< the device part's time, moves to the device included (0: no device part)
  double host_seconds = 0;        ///< the host part's time, moves to the host included (0: no host part)
  double cpu_weight = 0;          ///< the CPU weight (host share) this run used
  std::int64_t device_items = 0;  ///< iterations run by the device
  std::int64_t host_items = 0;    ///< iterations run by the host
};

/// The kinds of events an observer asks for (a bit mask): an observer is told only of those,
/// and a kind nobody asked for costs one relaxed atomic load where it happens.
enum class observer_events : unsigned {
  waits = 1U << 0U,    ///< `wait_begin` / `wait_end`
  phases = 1U << 1U,   ///< `phase_end`
  loops = 1U << 2U,    ///< `split_loop_end`
  regions = 1U << 3U,  ///< `region_begin` / `region_end`
  all = waits | phases | loops | regions
};

/// The union of two event masks.
[[nodiscard]] constexpr observer_events operator|(observer_events a, observer_events b) noexcept {
  return static_cast<observer_events>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

/// True when `mask` contains `kind`.
[[nodiscard]] constexpr bool has_event(observer_events mask, observer_events kind) noexcept {
  return (static_cast<unsigned>(mask) & static_cast<unsigned>(kind)) != 0;
}

/// Receives wait, phase and loop notifications; every hook does nothing unless overridden.
/// Implementations must be thread-safe and cheap: they are called on the critical path,
/// possibly from several threads at once.
class observer {
 public:
  virtual ~observer() = default;
  /// The calling thread starts waiting (`label` names the operation, e.g. "allreduce").
  virtual void wait_begin(wait_kind kind, std::string_view label) noexcept {
    (void)kind;
    (void)label;
  }
  /// The calling thread stops waiting (pairs with the last `wait_begin` of this thread).
  virtual void wait_end(wait_kind kind, std::string_view label) noexcept {
    (void)kind;
    (void)label;
  }
  /// One time step (phase) of the application ended.
  virtual void phase_end() noexcept {}
  /// A work-sharing loop finished one run (called on the thread that ran the loop).
  virtual void split_loop_end(const split_loop_event& event) noexcept { (void)event; }
  /// The calling thread enters a region of hetero's work: `module` ("task", "comm", "exec",
  /// "distarray", "power"), `label` (the task's label, the collective's name...) and `part`
  /// (empty, or e.g. "device" / "host" for a split loop's parts). The views are valid during
  /// the call only.
  virtual void region_begin(std::string_view module, std::string_view label, std::string_view part) noexcept {
    (void)module;
    (void)label;
    (void)part;
  }
  /// The calling thread leaves the region it entered last.
  virtual void region_end() noexcept {}
  /// The events this observer wants; read once, when it is registered.
  [[nodiscard]] virtual observer_events events() const noexcept { return observer_events::all; }
};

namespace detail {

/// The registered observers, one list per event kind; immutable once published.
struct observer_list {
  std::vector<std::shared_ptr<observer>> waits, phases, loops, regions;
};

/// Which event kinds have at least one listener: the hot paths' only check.
/// Two more bits say what hetero knows of Kokkos Tools (`refresh_kokkos_tool`): a library is
/// loaded, or nobody looked yet. Together they make the hot paths' check a single load.
inline constexpr unsigned kokkos_tool_bit = 1U << 30U;
inline constexpr unsigned kokkos_unknown_bit = 1U << 31U;
inline constexpr unsigned kokkos_bits = kokkos_tool_bit | kokkos_unknown_bit;
inline std::atomic<unsigned> g_listened_events{kokkos_unknown_bit};

/// The observer of `set_observer` (not owned).
inline std::atomic<observer*> g_single_observer{nullptr};

/// True when some registered observer listens to `kind` (a relaxed load: a registration racing
/// with an event may or may not see it, as with any registration not ordered before the event).
[[nodiscard]] inline bool listened(observer_events kind) noexcept {
  return (g_listened_events.load(std::memory_order_relaxed) & static_cast<unsigned>(kind)) != 0;
}

/// Every observer of this process. Registration takes a mutex and publishes a new immutable
/// list; an event reads the current list without locking and keeps it (and so its observers)
/// alive while it notifies them, so a wait scope's end reaches the observers its begin reached.
class observer_registry {
 public:
  static observer_registry& instance() {
    static observer_registry registry;
    return registry;
  }

  observer_registry(const observer_registry&) = delete;
  observer_registry& operator=(const observer_registry&) = delete;
  ~observer_registry() { g_listened_events.fetch_and(kokkos_bits, std::memory_order_relaxed); }

  /// The current list (never null).
  [[nodiscard]] std::shared_ptr<const observer_list> snapshot() const noexcept {
    return m_published.load(std::memory_order_acquire);
  }

  /// Adds `o` unless it is registered already; returns whether it was added.
  bool add(std::shared_ptr<observer> o) {
    std::scoped_lock lock(m_mutex);
    if (find(o.get()) != m_added.end()) return false;
    m_added.push_back(std::move(o));
    publish();
    return true;
  }

  /// Removes `o`; returns whether it was registered.
  bool remove(const observer* o) {
    std::scoped_lock lock(m_mutex);
    const auto it = find(o);
    if (it == m_added.end()) return false;
    m_added.erase(it);
    publish();
    return true;
  }

  [[nodiscard]] bool contains(const observer* o) const {
    std::scoped_lock lock(m_mutex);
    return find(o) != m_added.end();
  }

  /// Replaces the observer of `set_observer` (kept apart from the added ones); returns the old one.
  observer* exchange_single(observer* o) {
    std::scoped_lock lock(m_mutex);
    observer* previous = g_single_observer.exchange(o, std::memory_order_acq_rel);
    publish();
    return previous;
  }

 private:
  observer_registry() : m_published(std::make_shared<const observer_list>()) {}

  using entry_iterator = std::vector<std::shared_ptr<observer>>::const_iterator;
  [[nodiscard]] entry_iterator find(const observer* o) const {
    return std::find_if(m_added.begin(), m_added.end(), [&](const auto& entry) { return entry.get() == o; });
  }

  // Called with m_mutex held.
  void publish() {
    auto list = std::make_shared<observer_list>();
    unsigned listened = 0;
    auto enlist = [&](const std::shared_ptr<observer>& o) {
      const observer_events wanted = o->events();
      if (has_event(wanted, observer_events::waits)) list->waits.push_back(o);
      if (has_event(wanted, observer_events::phases)) list->phases.push_back(o);
      if (has_event(wanted, observer_events::loops)) list->loops.push_back(o);
      if (has_event(wanted, observer_events::regions)) list->regions.push_back(o);
      listened |= static_cast<unsigned>(wanted);
    };
    // The single observer is not owned: an aliasing pointer without an owner carries it.
    if (observer* single = g_single_observer.load(std::memory_order_relaxed))
      enlist(std::shared_ptr<observer>(std::shared_ptr<observer>(), single));
    for (const auto& o : m_added) enlist(o);
    m_published.store(std::move(list), std::memory_order_release);
    unsigned current = g_listened_events.load(std::memory_order_relaxed);  // keeps the Kokkos bits
    while (!g_listened_events.compare_exchange_weak(current, listened | (current & kokkos_bits),
                                                    std::memory_order_relaxed)) {
    }
  }

  mutable std::mutex m_mutex;
  std::vector<std::shared_ptr<observer>> m_added;
  std::atomic<std::shared_ptr<const observer_list>> m_published;
};

}  // namespace detail

/// Registers `o` (not null): from now on it sees every event it asks for (`observer::events`),
/// alongside every other registered observer. Registering an observer twice has no effect.
/// Thread-safe; hetero keeps `o` alive until it is removed and no event still notifies it.
/// <!-- snippet: fragment
/// struct my_tracer : hetero::observer {};
/// -->
/// @code
/// auto tracer = std::make_shared<my_tracer>();
/// hetero::add_observer(tracer);
/// // ...
/// hetero::remove_observer(*tracer);
/// @endcode
inline void add_observer(std::shared_ptr<observer> o) {
  if (o) detail::observer_registry::instance().add(std::move(o));
}

/// Registers `o` without owning it, as above; the caller keeps `o` alive until it is removed
/// and no wait scope that began meanwhile is still open.
inline void add_observer(observer& o) {
  detail::observer_registry::instance().add(std::shared_ptr<observer>(std::shared_ptr<observer>(), &o));
}

/// Unregisters `o`; returns false when it was not registered. An event that already started
/// notifying (a wait scope that began before) may still reach it.
inline bool remove_observer(const observer& o) { return detail::observer_registry::instance().remove(&o); }

/// True when `o` is registered through `add_observer` (or `scoped_observer`).
[[nodiscard]] inline bool has_observer(const observer& o) {
  return detail::observer_registry::instance().contains(&o);
}

/// Registers an observer that the caller owns for the lifetime of this object (RAII). The
/// caller keeps the observer alive while any wait scope that began during the registration
/// has not ended.
/// <!-- snippet: fragment
/// struct my_tracer : hetero::observer {};
/// -->
/// @code
/// my_tracer tracer;
/// hetero::scoped_observer listening(tracer);
/// @endcode
class scoped_observer {
 public:
  /// Registers `o` (not owned) unless it is registered already.
  explicit scoped_observer(observer& o)
      : m_observer(&o),
        m_added(detail::observer_registry::instance().add(
            std::shared_ptr<observer>(std::shared_ptr<observer>(), &o))) {}
  /// Registers `o` and shares its ownership until it is removed.
  explicit scoped_observer(std::shared_ptr<observer> o)
      : m_observer(o.get()), m_added(o && detail::observer_registry::instance().add(std::move(o))) {}
  ~scoped_observer() {
    if (m_added) detail::observer_registry::instance().remove(m_observer);
  }
  scoped_observer(const scoped_observer&) = delete;
  scoped_observer& operator=(const scoped_observer&) = delete;

 private:
  observer* m_observer;
  bool m_added;  // false when it was registered already: then its owner removes it
};

/// Installs `o` as the one "single" observer (nullptr removes it) and returns the previous
/// one; observers registered with `add_observer` keep listening beside it. The caller keeps
/// `o` alive until it is removed. A convenience for code written before observer lists.
inline observer* set_observer(observer* o) { return detail::observer_registry::instance().exchange_single(o); }

/// The observer installed by `set_observer`, or nullptr.
[[nodiscard]] inline observer* current_observer() noexcept {
  return detail::g_single_observer.load(std::memory_order_acquire);
}

namespace detail {

/// Looks for a Kokkos Tools library now and keeps the answer in `g_listened_events` (none
/// before Kokkos is initialised: looks again at the next region). Kokkos' own check compares its
/// whole table of callbacks, too slow for every task, so hetero looks once Kokkos is up and keeps
/// the answer; `hetero::detect_kokkos_tools` looks again.
inline bool refresh_kokkos_tool() noexcept {
  const bool up = Kokkos::is_initialized();
  const bool loaded = up && Kokkos::Profiling::profileLibraryLoaded();
  const unsigned bits = !up ? kokkos_unknown_bit : loaded ? kokkos_tool_bit : 0U;
  unsigned current = g_listened_events.load(std::memory_order_relaxed);
  while (!g_listened_events.compare_exchange_weak(current, (current & ~kokkos_bits) | bits,
                                                  std::memory_order_relaxed)) {
  }
  return loaded;
}

/// Whether a Kokkos Tools library is loaded or an observer listens to `kind`: one relaxed load
/// once hetero looked for the library.
[[nodiscard]] inline bool tool_or_listened(observer_events kind) noexcept {
  const unsigned events = g_listened_events.load(std::memory_order_relaxed);
  if ((events & (static_cast<unsigned>(kind) | kokkos_bits)) == 0) [[likely]]
    return false;
  if ((events & kokkos_unknown_bit) != 0) refresh_kokkos_tool();
  return true;  // the caller looks again, in detail
}

/// Whether a Kokkos Tools library is loaded (looks for one if nobody did yet).
[[nodiscard]] inline bool kokkos_tool_loaded() noexcept {
  const unsigned events = g_listened_events.load(std::memory_order_relaxed);
  if ((events & kokkos_unknown_bit) != 0) [[unlikely]]
    return refresh_kokkos_tool();
  return (events & kokkos_tool_bit) != 0;
}

/// Opens the Kokkos Tools region `hetero:<module>:<label>[:<part>]`; returns false (nothing
/// to close) where the name cannot be built.
inline bool push_kokkos_region(std::string_view module, std::string_view label, std::string_view part) noexcept {
  try {
    std::string name;
    name.reserve(8 + module.size() + label.size() + part.size());
    name.append("hetero:").append(module).append(":").append(label);
    if (!part.empty()) name.append(":").append(part);
    Kokkos::Profiling::pushRegion(name);
    return true;
  } catch (...) {
    return false;
  }
}

/// The label of the wait of a task worker that found no work (the task module's), which a trace
/// shows as idle time rather than as a wait for something.
inline constexpr std::string_view idle_worker_wait = "task worker idle";

/// The module a wait of `kind` belongs to, as region names spell it.
[[nodiscard]] constexpr std::string_view module_of(wait_kind kind) noexcept {
  switch (kind) {
    case wait_kind::collective: return "comm";
    case wait_kind::halo: return "distarray";
    case wait_kind::task: return "task";
    case wait_kind::point_to_point: return "comm";
    case wait_kind::user: return "user";
  }
  return "user";
}

}  // namespace detail

/// Marks the scope of a wait; costs one relaxed atomic load when nobody listens. A loaded Kokkos Tools library
/// sees it as the region `hetero:<module>:wait:<label>`.
/// <!-- snippet: fragment
/// MPI_Request r = MPI_REQUEST_NULL;
/// MPI_Status* s = MPI_STATUS_IGNORE;
/// -->
/// @code
/// { hetero::wait_scope waiting(hetero::wait_kind::collective, "allreduce"); MPI_Wait(&r, s); }
/// @endcode
class wait_scope {
 public:
  /// Begins a wait of `kind` named `label` (which must outlive the scope); it ends when the object is destroyed.
  wait_scope(wait_kind kind, std::string_view label) noexcept : m_kind(kind), m_label(label) {
    if (!detail::tool_or_listened(observer_events::waits)) [[likely]]
      return;
    if (detail::kokkos_tool_loaded())
      m_kokkos = detail::push_kokkos_region(detail::module_of(kind), "wait", label);
    if (!detail::listened(observer_events::waits)) return;
    m_list = detail::observer_registry::instance().snapshot();
    for (const auto& o : m_list->waits) o->wait_begin(m_kind, m_label);
  }
  ~wait_scope() {
    if (m_list)
      for (const auto& o : m_list->waits) o->wait_end(m_kind, m_label);
    if (m_kokkos) Kokkos::Profiling::popRegion();
  }
  wait_scope(const wait_scope&) = delete;
  wait_scope& operator=(const wait_scope&) = delete;

 private:
  std::shared_ptr<const detail::observer_list> m_list;  // the observers told of the begin
  wait_kind m_kind;
  bool m_kokkos = false;  // a Kokkos Tools region is open
  std::string_view m_label;
};

/// Marks a region of hetero's work on the calling thread while in scope: a task, a collective,
/// a split loop's part, a reflect or gmove, a coarray synchronisation, a power setting. Observers
/// of `observer_events::regions` (hetero's trace) see it, and so does a loaded Kokkos Tools
/// library, as the region `hetero:<module>:<label>[:<part>]` nested in whatever region this
/// thread is in. With neither, it costs one relaxed atomic load.
/// The views must outlive the constructor only.
/// <!-- snippet: fragment
/// auto assemble = [] {};
/// -->
/// @code
/// { hetero::region working("user", "assemble"); assemble(); }
/// @endcode
class region {
 public:
  /// Enters the region `label` of `module` ("task", "comm", "exec", "distarray", "power", "user"); `part` is
  /// empty or names a part of it (e.g. "device" / "host"). The region ends when the object is destroyed.
  region(std::string_view module, std::string_view label, std::string_view part = {}) noexcept {
    if (!detail::tool_or_listened(observer_events::regions)) [[likely]]
      return;
    if (detail::kokkos_tool_loaded()) m_kokkos = detail::push_kokkos_region(module, label, part);
    if (!detail::listened(observer_events::regions)) return;
    m_list = detail::observer_registry::instance().snapshot();
    for (const auto& o : m_list->regions) o->region_begin(module, label, part);
  }
  ~region() {
    if (m_list)
      for (const auto& o : m_list->regions) o->region_end();
    if (m_kokkos) Kokkos::Profiling::popRegion();
  }
  region(const region&) = delete;
  region& operator=(const region&) = delete;

 private:
  std::shared_ptr<const detail::observer_list> m_list;  // the observers told of the begin
  bool m_kokkos = false;                                // a Kokkos Tools region is open
};

/// Looks again for a Kokkos Tools library. hetero looks when Kokkos is up (its runtime looks
/// right after initialising Kokkos) and keeps the answer; a program that installs Kokkos Tools
/// callbacks by hand later (`Kokkos::Tools::Experimental::set_push_region_callback`) calls this
/// after doing so, for hetero's regions to reach them.
inline void detect_kokkos_tools() noexcept { (void)detail::refresh_kokkos_tool(); }

/// True when a region (`hetero::region`) would reach anyone: a Kokkos Tools library or an
/// observer of regions. Code that must build a region's label first asks this.
[[nodiscard]] inline bool regions_observed() noexcept {
  return detail::tool_or_listened(observer_events::regions) &&
         (detail::kokkos_tool_loaded() || detail::listened(observer_events::regions));
}

/// Tells the observers that one time step (phase) ended; call once per step.
inline void mark_phase() noexcept {
  if (!detail::listened(observer_events::phases)) return;
  const auto list = detail::observer_registry::instance().snapshot();
  for (const auto& o : list->phases) o->phase_end();
}

namespace detail {

/// Tells the observers that a work-sharing loop finished a run (called by the exec module).
inline void notify_split_loop(const split_loop_event& event) noexcept {
  if (!listened(observer_events::loops)) return;
  const auto list = observer_registry::instance().snapshot();
  for (const auto& o : list->loops) o->split_loop_end(event);
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_CORE_OBSERVER_HPP

/// @file
/// A node of a task graph on one rank: a task body (CPU or device), a notification from
/// another rank, an external operation, or a marker `wait(event)` waits for. A node carries its
/// own dependency counter and successor list, so a finishing node releases its successors
/// itself (no polling, no central queue of edges).
#ifndef HETERO_TASK_DETAIL_NODE_HPP
#define HETERO_TASK_DETAIL_NODE_HPP

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/task/detail/data_state.hpp"
#include "hetero/task/detail/event_state.hpp"
#include "hetero/task/detail/idle.hpp"
#include "hetero/task/rank_set.hpp"

namespace hetero::detail {

/// What a node stands for.
enum class node_kind : std::uint8_t {
  cpu,       ///< a task body run by a CPU worker
  device,    ///< a task body run on a device execution space instance
  receive,   ///< the notification(s) of a remote write of an event
  external,  ///< an operation outside the graph (an MPI request, a collective's handle)
  marker,    ///< what `wait(event)` waits for
  transfer   ///< starts a move of task data to or from another rank: runs even when the graph is cancelled
};

/// How a task uses an event.
enum class event_access : std::uint8_t { read, write };

/// One event a task uses (kept for the deadlock report).
struct event_use {
  event_state* event;
  event_access mode;
};

/// Ranks to notify when a node finishes: a write of `event`, number `generation` among the
/// event's writes that named remote ranks.
struct notification {
  event_state* event;
  std::uint64_t generation;
  rank_set targets;  ///< without the sending rank
};

/// What names one remote write in messages: the event, its write number, and for recorded
/// graphs the recording and the replay (0, 0 for tasks run as declared).
struct remote_key {
  std::uint64_t event_id = 0;
  std::uint64_t generation = 0;
  std::uint64_t plan = 0;
  std::uint64_t run = 0;
  friend bool operator==(const remote_key&, const remote_key&) = default;
};

struct remote_key_hash {
  std::size_t operator()(const remote_key& k) const noexcept {
    std::uint64_t h = k.event_id * 0x9e3779b97f4a7c15ULL;
    h ^= (k.generation + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
    h ^= (k.plan << 32 | (k.run & 0xffffffffULL)) * 0x94d049bb133111ebULL;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

/// What a receive node waits for.
struct receive_info {
  remote_key key;
  int expected = 0;  ///< messages (one per sending rank)
  rank_set senders;
  std::string writer_label;
};

class label_record;

/// The most pieces of task data one task may name (a data body indexes its uses in 16 bits).
inline constexpr std::size_t max_data_uses = 65535;

/// What a node that uses task data does with it (nodes with `node::data_bit`).
enum class data_node_kind : std::uint8_t {
  task,           ///< a task body: its data is made valid where it runs
  send_start,     ///< posts the send of a tile to another rank (its host copy made current first)
  send_done,      ///< that send completed
  receive_start,  ///< posts the receive of a tile from its owner into this rank's host copy
  receive_done,   ///< that receive completed: the host copy holds the owner's version
  pull_release    ///< the tasks here that read a version in its owner's memory finished: tells the owner
};

/// The task data of a node (see data_registry).
struct node_data {
  std::vector<data_use> uses;
  data_node_kind kind = data_node_kind::task;
  label_record* label = nullptr;   ///< tasks: where their times are recorded
  std::size_t bytes = 0;           ///< of all its data
  std::int8_t place = 0;           ///< where it ran (host_place, or 1 + a device memory)
  std::int16_t slot = -1;          ///< the device slot it ran on, or -1
  bool acquired = false;           ///< its copies are pinned where it runs
  bool trying = false;             ///< a calibration try of its label's side (placement.hpp)
  std::uint64_t moves_before = 0;  ///< device tasks: the slot's moves enqueued before its kernels
  std::int64_t estimate_ns = 0;    ///< what it added to its side's queued work
  std::int64_t started_ns = 0;     ///< its body's start (steady clock)

  void clear() noexcept {
    uses.clear();
    kind = data_node_kind::task;
    label = nullptr;
    bytes = 0;
    place = 0;
    slot = -1;
    acquired = false;
    trying = false;
    moves_before = 0;
    estimate_ns = 0;
    started_ns = 0;
  }
};

/// Cold data of a node, kept across reuses so that strings and vectors keep their capacity.
struct node_extra {
  std::string label;
  std::vector<event_use> uses;
  std::vector<notification> notifications;
  std::unique_ptr<receive_info> receive;  ///< receive nodes only
  node_data data;                         ///< nodes with data_bit only

  void clear() noexcept {
    label.clear();
    uses.clear();
    notifications.clear();
    data.clear();
  }
};

struct node;

/// Nodes that finish one node together: the inner tasks of a subgraph, or the tasks of a
/// recording composed into a graph. Each member leaves the group when it finishes; the one that
/// leaves last closes the group and finishes `owner` (the task standing for the whole group), so
/// nobody waits for the members.
struct node_group {
  std::atomic<std::int64_t> outstanding{0};       ///< members not finished (+1 while being started)
  node* owner = nullptr;                          ///< finished when the last member finished
  void (*close)(node_group&) noexcept = nullptr;  ///< before `owner` finishes (a subgraph frees itself)
};

/// Bytes of a task body stored inside the node; larger bodies go to the heap.
inline constexpr std::size_t body_capacity = 64;

/// A node of the graph on this rank. The fields a running graph touches for every node come
/// first and fill one cache line; the rest is only used while declaring and in reports.
struct alignas(64) node {
  static constexpr std::uint8_t lock_bit = 1;
  static constexpr std::uint8_t done_bit = 2;
  static constexpr std::uint8_t tracked_bit = 4;  ///< in an event's history: may still gain successors
  /// A member of `group` (set before the node is published; `mark_done` clears it, `finish` reads it first).
  static constexpr std::uint8_t grouped_bit = 8;
  /// Uses task data (`extra.data`; set before the node is published, read before `mark_done`).
  static constexpr std::uint8_t data_bit = 16;
  /// Has a host and a device body: the data registry picks its side when it becomes ready.
  static constexpr std::uint8_t either_bit = 32;
  /// Dependency counter bias while a node is being declared: edges are added one by one and
  /// the node must not become ready before the last one.
  static constexpr std::int32_t declaring = 1 << 30;

  // --- hot: one cache line ---
  std::atomic<std::int32_t> pending{0};  ///< unfinished predecessors (+ messages, + external)
  std::atomic<std::uint8_t> flags{0};    ///< lock_bit, done_bit (declared-and-run nodes)
  node_kind kind = node_kind::cpu;
  bool recorded = false;           ///< belongs to a recording (never recycled)
  bool notifies = false;           ///< has notifications to send when it finishes
  std::int16_t device = -1;        ///< device tasks: the pinned device, or -1 for any
  bool live = false;               ///< pool nodes: taken and not yet reclaimed (declaring thread)
  bool urgent = false;             ///< priority above 0: in the shared priority queue
  std::int32_t reset_pending = 0;  ///< recorded: `pending` at the start of each replay
  std::uint32_t successor_count = 0;
  std::atomic<std::uint32_t> finished_run{0};  ///< recorded: the last replay that finished it
  void (*invoke)(node&, const void* device) = nullptr;
  void (*destroy)(node&) noexcept = nullptr;
  std::array<node*, 3> successors{};

  // --- warm ---
  std::vector<node*> more_successors;
  std::uint64_t serial = 0;       ///< incarnation (bumped on reuse by the declaring thread)
  std::uint64_t sequence = 0;     ///< declaration number on this rank (priority order, reports)
  std::int32_t priority = 0;      ///< the task's priority(...) clause
  bool outside_window = false;    ///< pool nodes: not counted in the insertion window (declaring thread)
  bool (*poll)(node&) = nullptr;  ///< external nodes: tests the operation (true when complete)
  node* next_finished = nullptr;  ///< link in the pool's finished stack
  node_group* group = nullptr;    ///< with grouped_bit: the group it leaves when it finishes
  node_extra extra;
  alignas(std::max_align_t) std::byte body[body_capacity];

  [[nodiscard]] node* successor(std::uint32_t i) const noexcept {
    return i < successors.size() ? successors[i] : more_successors[i - successors.size()];
  }

  void append_successor(node* s) {
    if (successor_count < successors.size()) {
      successors[successor_count] = s;
    } else {
      more_successors.push_back(s);
    }
    ++successor_count;
  }

  void lock() noexcept {
    while (flags.fetch_or(lock_bit, std::memory_order_acquire) & lock_bit) cpu_relax();
  }

  /// Declaring thread: records `s` as a successor unless this node already finished (then
  /// returns false: there is nothing to wait for).
  bool add_successor(node* s) {
    if (flags.load(std::memory_order_acquire) & done_bit) return false;
    lock();
    const bool done = (flags.load(std::memory_order_relaxed) & done_bit) != 0;
    if (!done) append_successor(s);
    flags.fetch_and(static_cast<std::uint8_t>(~lock_bit), std::memory_order_release);
    return !done;
  }

  /// Finishing thread: closes the successor list; afterwards it can be read without the lock.
  /// A node in no event's history cannot gain successors: no lock needed.
  void mark_done() noexcept {
    if (flags.load(std::memory_order_relaxed) & tracked_bit) lock();
    flags.store(done_bit, std::memory_order_release);
  }

  /// Declaring thread, before the node is published: it enters an event's history.
  void mark_tracked() noexcept {
    flags.store(flags.load(std::memory_order_relaxed) | tracked_bit, std::memory_order_relaxed);
  }

  [[nodiscard]] bool done() const noexcept { return (flags.load(std::memory_order_acquire) & done_bit) != 0; }

  /// Destroys the body, if any.
  void drop_body() noexcept {
    if (destroy) destroy(*this);
    destroy = nullptr;
    invoke = nullptr;
    poll = nullptr;
  }
};

/// A body made before its node is taken: the copy (or move) of `F`, which may throw, happens
/// here, so that a spawn whose body cannot be copied leaves the graph as it was; `store`, which
/// puts it into a node, cannot throw. Kept here where it fits a node and moves without throwing,
/// else on the heap. `Call` (stateless) runs it as `Call{}(f, n, device)`.
template <class Call, class F>
class prepared_body {
  using body_type = std::decay_t<F>;
  static constexpr bool fits = sizeof(body_type) <= body_capacity &&
                               alignof(body_type) <= alignof(std::max_align_t) &&
                               std::is_nothrow_move_constructible_v<body_type>;

 public:
  explicit prepared_body(F&& f) {
    if constexpr (fits) {
      m_body.emplace(std::forward<F>(f));
    } else {
      m_body = std::make_unique<body_type>(std::forward<F>(f));
    }
  }
  prepared_body(const prepared_body&) = delete;
  prepared_body& operator=(const prepared_body&) = delete;

  /// Moves the body into `n` (once).
  void store(node& n) noexcept {
    if constexpr (fits) {
      ::new (static_cast<void*>(n.body)) body_type(std::move(*m_body));
      n.invoke = [](node& self, const void* device) {
        Call{}(*std::launder(reinterpret_cast<body_type*>(self.body)), self, device);
      };
      n.destroy = [](node& self) noexcept { std::launder(reinterpret_cast<body_type*>(self.body))->~body_type(); };
    } else {
      ::new (static_cast<void*>(n.body)) body_type*(m_body.release());
      n.invoke = [](node& self, const void* device) {
        Call{}(**std::launder(reinterpret_cast<body_type**>(self.body)), self, device);
      };
      n.destroy = [](node& self) noexcept { delete *std::launder(reinterpret_cast<body_type**>(self.body)); };
    }
  }

 private:
  std::conditional_t<fits, std::optional<body_type>, std::unique_ptr<body_type>> m_body;
};

/// Calls a body as `f()` (`Device` void) or as `f(device_instance)`.
template <class Device>
struct device_call {
  template <class B>
  void operator()(B& b, node&, const void* device) const {
    if constexpr (std::is_void_v<Device>) {
      (void)device;
      std::invoke(b);
    } else {
      std::invoke(b, *static_cast<const Device*>(device));
    }
  }
};

/// Calls a body as `f(n)` (tasks that stand for a group of nodes).
struct node_call {
  template <class B>
  void operator()(B& b, node& self, const void*) const {
    b(self);
  }
};

/// `f` made ready to be the body of a node, called as `f()` (`Device` void) or as
/// `f(device_instance)`.
template <class Device, class F>
prepared_body<device_call<Device>, F> prepare_body(F&& f) {
  return prepared_body<device_call<Device>, F>(std::forward<F>(f));
}

/// `f` made ready to be the body of a node, called as `f(n)`.
template <class F>
prepared_body<node_call, F> prepare_node_body(F&& f) {
  return prepared_body<node_call, F>(std::forward<F>(f));
}

/// Stores `f` as the body of `n` (the runtime's own nodes; a user's body is prepared before its
/// node is taken). With `Device` void the body is called as `f()`, otherwise as `f(device_instance)`.
template <class Device, class F>
void set_body(node& n, F&& f) {
  prepare_body<Device>(std::forward<F>(f)).store(n);
}

/// An operation completing outside the graph, made before its node is taken (its move may throw).
template <class Source>
std::unique_ptr<std::decay_t<Source>> prepare_source(Source&& s) {
  return std::make_unique<std::decay_t<Source>>(std::forward<Source>(s));
}

/// Stores the operation `s` in `n`: `n.poll` tests it (`s->test()`), `n.destroy` destroys it.
template <class Source>
void set_source(node& n, std::unique_ptr<Source>& s) noexcept {
  static_assert(sizeof(Source*) <= body_capacity, "hetero: a pointer fits a node's body storage");
  ::new (static_cast<void*>(n.body)) Source*(s.release());
  n.poll = [](node& self) {
    return static_cast<bool>((*std::launder(reinterpret_cast<Source**>(self.body)))->test());
  };
  n.destroy = [](node& self) noexcept { delete *std::launder(reinterpret_cast<Source**>(self.body)); };
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_NODE_HPP

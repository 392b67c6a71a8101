/// @file
/// What a rank knows about one event: its last writer and the readers since, in program order
/// (OpenMP `depend` semantics), and, for remote-capable events, how many writes named remote
/// ranks so far (the same count on every rank, so sender and receiver agree on each message).
#ifndef HETERO_TASK_DETAIL_EVENT_STATE_HPP
#define HETERO_TASK_DETAIL_EVENT_STATE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "hetero/core/error.hpp"

namespace hetero::detail {

struct node;

/// A node as seen at one moment: the node and its incarnation (dynamic nodes are reused; a
/// reference whose serial no longer matches names a node that finished long ago).
struct node_ref {
  node* ptr = nullptr;
  std::uint64_t serial = 0;
};

/// The accesses of one event so far, as one rank sees them.
struct access_history {
  node_ref writer;                  ///< the last task (or notification) writing the event
  std::vector<node_ref> readers;    ///< tasks reading it since that write
  std::uint64_t remote_writes = 0;  ///< writes so far that named remote ranks (every rank counts them)
  /// Remote-capable events: the spawn number (from 1, the same on every rank) of the last write
  /// when it runs on other ranks only and does not notify this one; 0 when this rank sees it.
  std::uint64_t unseen_write = 0;

  void clear() noexcept {
    writer = {};
    readers.clear();
    remote_writes = 0;
    unseen_write = 0;
  }
};

struct event_block;

/// One event of a task graph.
struct event_state {
  access_history live;             ///< tasks declared to run now
  access_history recorded;         ///< tasks of the recording in progress
  std::uint64_t recording_id = 0;  ///< the recording `recorded` belongs to (reset lazily)
  const event_block* block = nullptr;
  std::size_t index = 0;

  /// "EA[2][3]" (the block's name and this event's indices).
  [[nodiscard]] std::string name() const;
  /// The id naming this event in messages; equal on every rank for remote-capable events.
  [[nodiscard]] std::uint64_t global_id() const noexcept;
  /// Whether out(...).to(...) may name remote ranks for this event.
  [[nodiscard]] bool remote_capable() const noexcept;
};

/// Events created together (`event`, `events`, `remote_events`): name, shape and storage.
struct event_block {
  std::string name;
  std::vector<std::size_t> extents;
  bool remote = false;
  std::uint64_t first_id = 0;   ///< remote blocks: the same on every rank (assigned collectively)
  const void* owner = nullptr;  ///< the graph (or subgraph) that created the block
  bool subgraph = false;        ///< created by a subgraph: its inner tasks alone may name it
  std::unique_ptr<event_state[]> events;
  std::size_t count = 0;

  /// A block of as many events as `extents` hold (one for no extent), named `name`, made by
  /// `owner`; each event knows its block and its index.
  static std::unique_ptr<event_block> create(std::string name, std::vector<std::size_t> extents,
                                             const void* owner) {
    std::size_t count = 1;
    for (std::size_t e : extents) count *= e;
    auto block = std::make_unique<event_block>();
    block->name = std::move(name);
    block->extents = std::move(extents);
    block->owner = owner;
    block->count = count;
    block->events = std::make_unique<event_state[]>(count);
    for (std::size_t i = 0; i < count; ++i) {
      block->events[i].block = block.get();
      block->events[i].index = i;
    }
    return block;
  }
};

/// The extents of the event array `name` (`events("f", 4, 2)`), checked: 1 or more in every
/// dimension.
template <class... Extents>
std::array<std::size_t, sizeof...(Extents)> event_extents(const std::string& name, Extents... extents) {
  static_assert(sizeof...(Extents) >= 1, "hetero: an event array has at least one extent");
  const std::array<long long, sizeof...(Extents)> given{static_cast<long long>(extents)...};
  std::array<std::size_t, sizeof...(Extents)> sizes{};
  std::size_t count = 1;
  for (std::size_t d = 0; d < given.size(); ++d) {
    HETERO_EXPECTS(given[d] > 0, "event array '", name, "' has extent ", given[d], " in dimension ", d,
                   "; allowed: 1 or more");
    sizes[d] = static_cast<std::size_t>(given[d]);
    // The product must not wrap (to 0 events, then indexed past them).
    HETERO_EXPECTS(count <= (std::size_t{1} << 40) / sizes[d], "event array '", name,
                   "' would hold more than 2^40 ", "events (extent ", given[d], " in dimension ", d,
                   " brings it past); allowed: at most 2^40");
    count *= sizes[d];
  }
  return sizes;
}

inline std::string event_state::name() const {
  if (!block) return "(null event)";
  std::ostringstream out;
  out << block->name;
  std::size_t rest = index;
  std::vector<std::size_t> indices(block->extents.size());
  for (std::size_t d = block->extents.size(); d-- > 0;) {
    indices[d] = rest % block->extents[d];
    rest /= block->extents[d];
  }
  for (std::size_t i : indices) out << '[' << i << ']';
  return out.str();
}

inline std::uint64_t event_state::global_id() const noexcept { return block->first_id + index; }

inline bool event_state::remote_capable() const noexcept { return block && block->remote; }

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_EVENT_STATE_HPP

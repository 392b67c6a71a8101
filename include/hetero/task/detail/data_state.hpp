/// @file
/// The coherence state of one piece of task data (a registered View, or one tile of a tile
/// array): the copies it has in each place of this rank (host memory, each device memory),
/// which of them hold the current version, which are in use, and, for a tile with an owner
/// rank, what the declaration has sent to or fetched from other ranks so far.
#ifndef HETERO_TASK_DETAIL_DATA_STATE_HPP
#define HETERO_TASK_DETAIL_DATA_STATE_HPP

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hetero/task/detail/event_state.hpp"
#include "hetero/task/detail/spin_mutex.hpp"

namespace hetero::detail {

/// Places of one rank a piece of data can have a copy in: host memory (place 0) and up to
/// `max_device_memories` device memories (places 1, 2, ...).
inline constexpr int max_device_memories = 8;
inline constexpr int max_places = 1 + max_device_memories;
inline constexpr int host_place = 0;

/// The most dimensions of a registered View.
inline constexpr int max_data_rank = 8;

struct data_state;

/// One copy of a piece of data in one place. Guarded by its `data_state`'s mutex.
struct data_copy {
  void* ptr = nullptr;                   ///< its memory (the host copy of owned data is the user's memory)
  bool valid = false;                    ///< holds the current version (once `arriving` has arrived)
  bool filling = false;                  ///< a thread is allocating or copying into it: others wait
  std::int16_t arriving_slot = -1;       ///< the device slot whose stream still carries the copy in, or -1
  std::uint64_t arriving_ticket = 0;     ///< ... as that slot's move number `arriving_ticket`
  int pins = 0;                          ///< tasks using it (started or starting): never evicted then
  std::list<data_state*>::iterator lru;  ///< device places: its entry in the memory's recency list
  bool listed = false;                   ///< device places: `lru` is in the list (memory allocated)
};

/// What declaring a task that uses a piece of data does.
enum class data_mode : std::uint8_t {
  read,       ///< `reads`: the body reads the current version
  write,      ///< `writes`: the body writes every element; the old values are not moved
  read_write  ///< `updates`: both
};

/// Whether `m` reads the old values.
constexpr bool reads_old(data_mode m) noexcept { return m != data_mode::write; }
/// Whether `m` makes a new version.
constexpr bool writes_new(data_mode m) noexcept { return m != data_mode::read; }

class data_registry;

/// One piece of task data on this rank.
struct data_state {
  static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();

  std::string name;       ///< "A", or "L[2][1]" for a tile
  std::size_t bytes = 0;  ///< of every copy
  int owner = -1;         ///< the rank owning a tile; -1: local data (each rank its own)
  std::uint64_t id = 0;   ///< tiles: the same on every rank (names its messages)
  std::array<std::int64_t, max_data_rank> extents{};  ///< of the registered View
  std::shared_ptr<void> keep_alive;                   ///< the registered View (keeps its memory alive)
  std::unique_ptr<event_block> order;                 ///< its hidden event: orders the tasks using it
  data_registry* registry = nullptr;                  ///< null once the graph is gone
  bool host_allocated = false;                        ///< copies[host_place].ptr was allocated by hetero
  /// A tile of a rank of this node: the number of the shared slab holding this rank's copy
  /// (node_copies.hpp), + 1; 0 where the copy is this process's own memory.
  std::uint64_t shared_slab = 0;
  /// A tile of a rank of this node whose memory this process maps (`task_graph::tiles`'
  /// `peer_view_of`): the owner's tile as mapped here, which host tasks here read in place
  /// (and from which the first device task reading a version copies it, `pull_version`);
  /// null otherwise.
  const void* node_source = nullptr;
  /// A tile of an array registered with `peer_view_of`: its readers of this node read it in
  /// its owner's memory (the owner offers each version instead of copying it over).
  bool peer_views = false;
  /// The version the owner said is in its memory (`node_source`) and not yet copied into this
  /// rank's host copy (which only device tasks use); `none`: nothing to copy.
  std::atomic<std::uint64_t> pull_version{none};
  /// Declaring thread: the version taken here from the owner's memory whose release is not
  /// declared yet (the owner keeps it unchanged until then); `none`: none.
  std::uint64_t pull_open = none;

  /// Guards `copies`: taken a few times per task, for a few dozen instructions (a copy is made
  /// outside it, its target marked `filling`).
  spin_mutex mutex;
  std::array<data_copy, max_places> copies{};

  /// Tasks (and transfers) declared with it and not finished (any thread decrements).
  std::atomic<std::int64_t> unfinished{0};

  /// Tiles of other ranks: a receive into the host copy completed since a host task last read
  /// it (the next one reads it through first, `read_through`; a cancelled receive sets it too,
  /// but then no body runs).
  std::atomic<bool> received_unread{false};

  // Declaring thread only. Versions count the writes declared so far (every rank declares
  // every task, so every rank counts alike).
  std::uint64_t declared_writes = 0;
  std::uint64_t fetched = none;     ///< tiles of other ranks: the version this rank's copy will hold
  std::vector<std::uint64_t> sent;  ///< tiles of this rank: per rank, the version last sent there

  /// The hidden event ordering the tasks that use this piece (created with the state).
  [[nodiscard]] event_state* event() const noexcept { return &order->events[0]; }
};

/// A use of one piece of data by one node.
struct data_use {
  data_state* data = nullptr;
  data_mode mode = data_mode::read;
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_STATE_HPP

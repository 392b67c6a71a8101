/// @file
/// `hetero::task_statistics`: what a task graph's data moved and where its tasks ran, on this
/// rank, since the graph was built (or since `task_graph::reset_statistics`).
#ifndef HETERO_TASK_STATISTICS_HPP
#define HETERO_TASK_STATISTICS_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

/// A number of moves and the bytes they carried.
struct move_count {
  std::uint64_t moves = 0;  ///< The number of moves.
  std::uint64_t bytes = 0;  ///< The bytes they carried, in total.
};

/// The moves of a graph's task data on this rank, per direction.
struct data_moves {
  /// Host memory to a device memory.
  move_count to_device;
  /// A device memory to host memory: for a host task, `wait(data)`, the end of the graph, a send
  /// to another rank, or a write-back before an eviction.
  move_count to_host;
  /// Tiles received from their owner rank.
  move_count from_ranks;
  /// Tiles sent to other ranks.
  move_count to_ranks;
  /// Of `from_ranks`, the tiles that moved through the node's shared memory (owner on this
  /// rank's node, `task_options::node_shared_copies`) rather than through MPI: copied by their
  /// owner into this rank's copy, or by this rank from the owner's memory (`pulled`).
  std::uint64_t from_node_memory = 0;
  /// Of `from_ranks`, the versions that a host task read first: that task read the tile through
  /// once, front to back, before its body (timed with the body), since a version received long
  /// before sits in memory and a kernel reading it cold waits longer than the sweep.
  std::uint64_t read_through = 0;
  /// Of `from_node_memory`, the versions taken here in their owner's memory (tiles registered
  /// with `peer_view_of`, `task_graph::tiles`), counted when the owner says they are there: no
  /// copy by the owner, none by this rank for a host task (it reads the owner's tile in
  /// place), no read-through; the first device task reading one copies it into this rank's
  /// host copy, whence it moves to the device. The owner writes the tile again once every task
  /// here reading it finished.
  std::uint64_t pulled = 0;
  /// Device copies dropped to make room under the cap.
  std::uint64_t evictions = 0;
  /// Of them, the ones that held the only current version (moved to the host first).
  std::uint64_t write_backs = 0;
};

/// Where the tasks of one label ran and how long their bodies took (tasks with data clauses or
/// with a host and a device body, "(no label)" for those without one). A body's time runs from
/// when its data is in place to its end (its device's fence for a device task, which on a GPU
/// includes the task's own moves still on the stream).
struct label_statistics {
  std::string label;              ///< the label ("(no label)" for tasks without one)
  std::uint64_t host_runs = 0;    ///< tasks of the label run on the host
  std::uint64_t device_runs = 0;  ///< tasks of the label run on a device
  double host_seconds = 0;        ///< summed over the host runs
  double device_seconds = 0;      ///< summed over the device runs
};

/// What `task_graph::statistics()` returns.
struct task_statistics {
  data_moves moves;                      ///< the moves of task data, per direction
  std::vector<label_statistics> labels;  ///< in the order the labels were first declared

  /// The entry of `label`, or nullptr.
  [[nodiscard]] const label_statistics* find(const std::string& label) const noexcept {
    for (const auto& l : labels)
      if (l.label == label) return &l;
    return nullptr;
  }
};

}  // namespace hetero

#endif  // HETERO_TASK_STATISTICS_HPP

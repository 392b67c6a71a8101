/// @file
/// `hetero::task_options`: how a task graph runs on each rank.
#ifndef HETERO_TASK_OPTIONS_HPP
#define HETERO_TASK_OPTIONS_HPP

#include <mpi.h>

#include <chrono>
#include <cstddef>

#include "hetero/core/mpi/comm_ref.hpp"
#include "hetero/core/wait_timeout.hpp"

namespace hetero {

/// How a task graph runs; every rank of the communicator passes the same options.
/// <!-- snippet: fragment -->
/// @code
/// hetero::task_graph graph({.workers = 2, .no_progress_timeout = std::chrono::seconds(10)});
/// const hetero::communicator world;
/// hetero::task_graph on_world({.comm = world});  // or a process_grid, or an MPI_Comm
/// @endcode
struct task_options {
  /// Threads that run tasks on this rank, counting the thread that calls `wait()` (it runs
  /// tasks while it waits). 0: the host threads Kokkos was given (this rank's share of the
  /// node's cores).
  int workers = 0;
  /// The ranks of the graph: a hetero handle (`hetero::communicator`, `process_grid`, ...) or
  /// an `MPI_Comm`. Duplicated when the graph is built (collectively), so the handle need only
  /// live until then.
  comm_ref comm = MPI_COMM_WORLD;
  /// The most tasks (and pending notifications and tile moves) declared and not finished on
  /// this rank: when it is reached, `spawn` runs tasks until one finishes, so a huge graph does
  /// not exhaust memory. A tile move's two nodes are taken together (in a window of 1, the
  /// second outside it).
  std::size_t window = 4096;
  /// `wait()` raises `hetero::deadlock_error` on every rank after this long without a task
  /// running, finishing or a notification arriving while work is still pending
  /// (`hetero::no_timeout`: never). The default, `hetero::inherit_timeout`, follows the
  /// process-wide `hetero::wait_timeout()` (30 s unless HETERO_WAIT_TIMEOUT,
  /// `runtime_options::wait_timeout` or `hetero::set_wait_timeout` say otherwise). See
  /// docs/faults.md.
  timeout no_progress_timeout = inherit_timeout;
  /// How long an idle worker keeps looking for work before it sleeps.
  std::chrono::duration<double> spin = std::chrono::microseconds(50);
  /// How long the thread in `wait()` keeps looking while tasks run on other workers, before it
  /// sleeps: the end of the graph usually comes within it, and is then seen at once instead of
  /// after a wake-up (tens of microseconds). Longer tasks let it sleep.
  std::chrono::duration<double> wait_spin = std::chrono::milliseconds(1);
  /// While notifications from other ranks are pending, how long one idle worker keeps polling
  /// MPI after the last one arrived before it sleeps (and then polls on a timer, 50 us doubling
  /// to 1 ms): remote dependencies sit on the critical path.
  std::chrono::duration<double> mpi_poll = std::chrono::milliseconds(2);
  /// The most bytes of task data (`graph.data`, `graph.tiles`) one device memory holds at once;
  /// past it the least recently used copies no task uses are evicted (written back to the host
  /// first when they hold the only current version). 0: what the device has (90 % of a GPU's
  /// free memory when the graph is made), no cap for a host space standing in for a device.
  std::size_t device_memory = 0;
  /// Tiles read from a rank of the same node come through shared memory (POSIX, in /dev/shm):
  /// their owner copies each version into this rank's copy and sends a small message, where MPI
  /// would make both ranks handle the whole tile (docs/task.md). False: through MPI. The same on
  /// every rank of a graph (tiles() checks). Where /dev/shm has no room for a slab of copies
  /// when its first tile is read, those tiles go through MPI anyway.
  bool node_shared_copies = true;
};

}  // namespace hetero

#endif  // HETERO_TASK_OPTIONS_HPP

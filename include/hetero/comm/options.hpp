/// @file
/// `hetero::communicator_options`: what a communicator sets up once at construction.
#ifndef HETERO_COMM_OPTIONS_HPP
#define HETERO_COMM_OPTIONS_HPP

#include <cstddef>
#include <optional>
#include <string>

#include "hetero/comm/tuning.hpp"
#include "hetero/core/mpi/staging.hpp"
#include "hetero/core/wait_timeout.hpp"

namespace hetero {

/// How far an argument error of one rank travels (docs/comm.md, "Argument checks").
/// - `local`: it raises on its rank only; the others may wait (until the no-progress timeout).
/// - `consistent` (the default): on a node's shared-memory window, an error of a rooted
///   collective's root (a receive buffer too small at a gather's root, a send buffer or counts
///   list at a scatter's root, ...) raises on every rank, and so does one rank's error in a
///   rootless collective (allreduce, allgather, ...); it travels in the window's slots. Without
///   a window (ranks on several nodes, or `shared_memory` off) every blocking call first agrees
///   on its arguments by message, as `full` does: any rank's error and any mismatch raise on
///   every rank. A reduction whose user operation throws raises on every rank (one extra 4-byte
///   allreduce, for user operations only).
/// - `full`: one extra small allreduce of every call's signature and error flag: any local
///   error and any mismatch of collective, count, root or operation raises on every rank.
enum class argument_check { local, consistent, full };

/// What a communicator sets up once at construction.
struct communicator_options {
  /// Use a shared-memory window for small messages when all ranks share a node.
  bool shared_memory = true;
  /// Payload bytes of one shared-memory slot (each rank owns two); larger messages take
  /// another algorithm.
  std::size_t shm_slot_bytes = 64 * 1024;
  /// How buffers in device memory are moved (see `device_buffer_path`).
  device_buffer_path device_path = device_buffer_path::automatic;
  /// Chunk size of the staging pipeline (device -> host copy, collective, host -> device copy
  /// overlap chunk by chunk).
  std::size_t staging_chunk_bytes = std::size_t{1} << 20;
  /// How far an argument error travels (see `argument_check`); `consistent` by default.
  argument_check argument_checks = argument_check::consistent;
  /// Kept for source compatibility: true means `argument_checks = argument_check::full`.
  bool verify_arguments = false;
  /// How long a rank waits for the others in one collective before raising a
  /// `hetero::deadlock_error` (`hetero::no_timeout`: forever, as MPI does); the default,
  /// `hetero::inherit_timeout`, follows the process-wide `hetero::wait_timeout()` (30 s unless
  /// HETERO_WAIT_TIMEOUT, the runtime option or `hetero::set_wait_timeout` say otherwise; see
  /// docs/faults.md). In 0.1 this was `wait_timeout_seconds`, a double.
  timeout wait_timeout = inherit_timeout;
  /// Size thresholds; when empty, the file `tuning_file`, else the file named by the
  /// environment variable HETERO_COMM_TUNING, else `comm_tuning::defaults(size, node_aware)`. A file made for
  /// another shape (ranks, nodes) is ignored: see `communicator::tuning_source()`.
  std::optional<comm_tuning> tuning;
  /// A tuning file to read (by rank 0, then shared with all ranks).
  std::string tuning_file;
};

}  // namespace hetero

#endif  // HETERO_COMM_OPTIONS_HPP

/// @file
/// `hetero::communicator_options`: what a communicator sets up once at construction.
#ifndef HETERO_COMM_OPTIONS_HPP
#define HETERO_COMM_OPTIONS_HPP

#include <cstddef>
#include <optional>
#include <string>

#include "hetero/comm/tuning.hpp"
#include "hetero/core/mpi/staging.hpp"

namespace hetero {

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
  /// Before every collective, agree among all ranks on the collective, counts, root and
  /// operation (one small extra allreduce), so that any mismatch or local argument error
  /// raises on every rank instead of hanging. Mismatches on the shared-memory path are found
  /// without it.
  bool verify_arguments = false;
  /// Seconds a rank waits for the others in one collective before raising a
  /// `hetero::deadlock_error` (0: wait forever, as MPI does). Applies to hetero's own waits.
  double wait_timeout_seconds = 0;
  /// Size thresholds; when empty, the file `tuning_file`, else the file named by the
  /// environment variable HETERO_COMM_TUNING, else `comm_tuning::defaults(size)`. A file made for
  /// another shape (ranks, nodes) is ignored: see `communicator::tuning_source()`.
  std::optional<comm_tuning> tuning;
  /// A tuning file to read (by rank 0, then shared with all ranks).
  std::string tuning_file;
};

}  // namespace hetero

#endif  // HETERO_COMM_OPTIONS_HPP

/// @file
/// `hetero::communicator_options`: what a communicator sets up once at construction.
#ifndef HETERO_COMM_OPTIONS_HPP
#define HETERO_COMM_OPTIONS_HPP

#include <cstddef>
#include <optional>
#include <string>

#include "hetero/comm/tuning.hpp"

namespace hetero {

/// How a collective moves buffers the host cannot address (device memory), and how to force
/// the same code paths for host memory so that they are exercised on any machine.
enum class device_buffer_path {
  /// Device pointers go to MPI when it is GPU-aware (asked at run time); otherwise data is
  /// staged through host buffers. Host memory is used directly.
  automatic,
  /// Always stage through the communicator's host buffers, pipelined in chunks of
  /// `staging_chunk_bytes`, even for host memory.
  staged,
  /// Always hand the buffer's pointers to MPI and combine reductions with Kokkos kernels in the
  /// buffer's memory space (no shared-memory path), even for host memory. For device memory
  /// this needs a GPU-aware MPI.
  direct
};

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

/// @file
/// Errors MPI finds while completing a request, returned to hetero instead of ending the job.
/// MPICH (4.0 measured) hands such an error (a message truncated because ranks passed different
/// counts, "message sizes do not match across processes") to MPI_COMM_WORLD's error handler,
/// not to the handler of the request's communicator: with MPI_COMM_WORLD's default,
/// MPI_ERRORS_ARE_FATAL, `MPI_Test`, `MPI_Testall` and `MPI_Request_get_status` end the whole
/// job even on a communicator whose handler is MPI_ERRORS_RETURN. The runtime therefore puts a
/// handler of its own on MPI_COMM_WORLD (only where the default is in place) that returns the
/// error to the caller while the calling thread is inside a `request_errors_returned` scope
/// (hetero's waits), and otherwise ends the job as the default does.
#ifndef HETERO_CORE_MPI_REQUEST_ERRORS_HPP
#define HETERO_CORE_MPI_REQUEST_ERRORS_HPP

#include <mpi.h>

#include <cstdio>
#include <string>

#include "hetero/core/mpi.hpp"

namespace hetero::detail {

/// How many `request_errors_returned` scopes the calling thread is in.
inline thread_local int t_request_errors_returned = 0;

/// Within this scope, an error that MPI hands to MPI_COMM_WORLD's handler while this thread
/// completes a request returns as an error code (which `HETERO_MPI_CHECK` raises as
/// `hetero::mpi_error`), provided the runtime installed its handler.
class request_errors_returned {
 public:
  request_errors_returned() noexcept { ++t_request_errors_returned; }
  ~request_errors_returned() { --t_request_errors_returned; }
  request_errors_returned(const request_errors_returned&) = delete;
  request_errors_returned& operator=(const request_errors_returned&) = delete;
};

/// The runtime's handler on MPI_COMM_WORLD (MPI_ERRHANDLER_NULL: none installed).
inline MPI_Errhandler& own_world_handler() {
  static MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  return handler;
}

/// MPI_COMM_WORLD's handler while the runtime's is installed: inside a hetero wait it returns
/// (MPI then returns the code to the caller); elsewhere it does what the handler it replaced,
/// MPI_ERRORS_ARE_FATAL, does: says what failed and ends the job. (MPICH does not allow a
/// handler to put the previous one back and call it.)
inline void world_error_handler(MPI_Comm* comm, int* code, ...) {
  if (t_request_errors_returned > 0) return;
  const std::string text = mpi_error_text(*code);
  std::fprintf(stderr, "Fatal error in MPI (MPI_COMM_WORLD, errors are fatal): %s\n", text.c_str());
  std::fflush(stderr);
  MPI_Abort(*comm, *code);
}

/// Installs `world_error_handler` on MPI_COMM_WORLD when its handler is MPI's default,
/// MPI_ERRORS_ARE_FATAL (a handler the program chose is left alone). Returns whether it did.
inline bool install_world_error_handler() {
  MPI_Errhandler current = MPI_ERRHANDLER_NULL;
  if (MPI_Comm_get_errhandler(MPI_COMM_WORLD, &current) != MPI_SUCCESS) return false;
  const bool fatal = current == MPI_ERRORS_ARE_FATAL;
  if (current != MPI_ERRHANDLER_NULL && current != MPI_ERRORS_ARE_FATAL && current != MPI_ERRORS_RETURN)
    MPI_Errhandler_free(&current);  // a reference to the program's own handler
  if (!fatal || own_world_handler() != MPI_ERRHANDLER_NULL) return false;
  if (MPI_Comm_create_errhandler(&world_error_handler, &own_world_handler()) != MPI_SUCCESS) return false;
  return MPI_Comm_set_errhandler(MPI_COMM_WORLD, own_world_handler()) == MPI_SUCCESS;
}

/// Puts MPI_COMM_WORLD's previous handler back (when the runtime leaves MPI running).
inline void remove_world_error_handler() {
  if (own_world_handler() == MPI_ERRHANDLER_NULL) return;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&own_world_handler());
  own_world_handler() = MPI_ERRHANDLER_NULL;
}

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_REQUEST_ERRORS_HPP

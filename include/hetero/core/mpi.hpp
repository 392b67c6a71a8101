/// @file
/// Checked MPI calls: one checker for MPI return codes that names the call, checked counts,
/// thread levels and the run-time question "can MPI take device pointers?".
#ifndef HETERO_CORE_MPI_HPP
#define HETERO_CORE_MPI_HPP

#include <mpi.h>

#include <climits>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

#include "hetero/core/error.hpp"

#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_Query_cuda_support and friends
#endif

namespace hetero {

namespace detail {

/// What MPI says error `code` is (`MPI_Error_string`; empty if it cannot say).
inline std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  return std::string(text, static_cast<std::size_t>(length));
}

/// The class of MPI error `code` (`MPI_Error_class`; `code` itself if it cannot say).
inline int mpi_error_class(int code) {
  int error_class = code;
  MPI_Error_class(code, &error_class);
  return error_class;
}

}  // namespace detail

/// Throws `hetero::mpi_error` naming `call` when `code` is not `MPI_SUCCESS`.
/// MPI only returns codes where the communicator's error handler is `MPI_ERRORS_RETURN`;
/// hetero installs it on the communicators it creates.
inline void check_mpi(int code, std::string_view call) {
  if (code == MPI_SUCCESS) return;
  throw mpi_error(std::string(call), code,
                  detail::message(call, " failed: ", detail::mpi_error_text(code), " (MPI error code ", code,
                                  ", class ", detail::mpi_error_class(code), ")"));
}

/// MPI thread support levels, in increasing order.
enum class thread_level : int {
  single = MPI_THREAD_SINGLE,
  funneled = MPI_THREAD_FUNNELED,
  serialized = MPI_THREAD_SERIALIZED,
  multiple = MPI_THREAD_MULTIPLE
};

/// "single", "funneled", "serialized" or "multiple".
inline const char* to_string(thread_level level) noexcept {
  switch (level) {
    case thread_level::single: return "single";
    case thread_level::funneled: return "funneled";
    case thread_level::serialized: return "serialized";
    case thread_level::multiple: return "multiple";
  }
  return "unknown";
}

/// A device kind whose memory MPI may or may not accept.
enum class gpu_kind { cuda, hip, level_zero };

/// What the MPI library says about device buffers of one kind.
enum class gpu_support { yes, no, unknown };

/// Asks the MPI library at run time whether it accepts device pointers of `kind` (MPICH's
/// `MPIX_GPU_query_support`, Open MPI's `MPIX_Query_*_support`). Needs MPI initialised.
inline gpu_support mpi_gpu_support(gpu_kind kind) {
#if defined(MPIX_GPU_SUPPORT_CUDA)
  int type = MPIX_GPU_SUPPORT_CUDA;
  if (kind == gpu_kind::hip) {
#if defined(MPIX_GPU_SUPPORT_HIP)
    type = MPIX_GPU_SUPPORT_HIP;
#else
    return gpu_support::unknown;
#endif
  } else if (kind == gpu_kind::level_zero) {
#if defined(MPIX_GPU_SUPPORT_ZE)
    type = MPIX_GPU_SUPPORT_ZE;
#else
    return gpu_support::unknown;
#endif
  }
  int supported = 0;
  if (MPIX_GPU_query_support(type, &supported) != MPI_SUCCESS) return gpu_support::unknown;
  return supported ? gpu_support::yes : gpu_support::no;
#elif defined(OPEN_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT)
  if (kind == gpu_kind::cuda) return MPIX_Query_cuda_support() ? gpu_support::yes : gpu_support::no;
  return gpu_support::unknown;
#else
  (void)kind;
  return gpu_support::unknown;
#endif
}

/// "yes", "no" or "unknown".
inline const char* to_string(gpu_support s) noexcept {
  return s == gpu_support::yes ? "yes" : s == gpu_support::no ? "no" : "unknown";
}

namespace detail {

/// Converts a count to the `int` MPI takes, refusing (never narrowing) what does not fit.
template <std::integral Int>
int mpi_count(Int n, std::string_view what) {
  if constexpr (std::is_signed_v<Int>) {
    if (n < 0) raise<invalid_argument>(what, " is negative (", n, "); MPI counts must be >= 0");
  }
  if (static_cast<unsigned long long>(n) > static_cast<unsigned long long>(INT_MAX))
    raise<invalid_argument>(what, " is ", n, ", more than MPI's int count allows (", INT_MAX,
                            "); split the transfer");
  return static_cast<int>(n);
}

inline bool mpi_initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

inline bool mpi_finalized() {
  int flag = 0;
  MPI_Finalized(&flag);
  return flag != 0;
}

}  // namespace detail
}  // namespace hetero

/// Calls the MPI function `fn` with the remaining arguments and checks its return code:
/// `HETERO_MPI_CHECK(MPI_Send, buf, n, MPI_INT, dest, tag, comm);` throws a `hetero::mpi_error`
/// whose message starts with "MPI_Send failed".
#define HETERO_MPI_CHECK(fn, ...) ::hetero::check_mpi(fn(__VA_ARGS__), #fn)

namespace hetero::detail {

/// The thread level MPI provides (MPI initialised).
inline thread_level provided_thread_level() {
  int provided = MPI_THREAD_SINGLE;
  HETERO_MPI_CHECK(MPI_Query_thread, &provided);
  return static_cast<thread_level>(provided);
}

/// Raises `runtime_error` unless MPI provides `MPI_THREAD_MULTIPLE`: "<who> needs
/// MPI_THREAD_MULTIPLE, but MPI provided '<level>'; initialise MPI with MPI_THREAD_MULTIPLE
/// (hetero::runtime asks for it)<other_ways>". `who` says what calls MPI from which thread;
/// `other_ways`, appended as it is, the other ways out (" or use 1 worker").
inline void require_thread_multiple(std::string_view who, std::string_view other_ways = {}) {
  const thread_level provided = provided_thread_level();
  if (provided < thread_level::multiple)
    throw runtime_error(message(who, " needs MPI_THREAD_MULTIPLE, but MPI provided '", to_string(provided),
                                "'; initialise MPI with MPI_THREAD_MULTIPLE (hetero::runtime asks for it)",
                                other_ways));
}

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_HPP

/// @file
/// What a task body's exception becomes before `wait()` rethrows it: the exception itself,
/// except for Kokkos 3's refusal to initialise a View on a worker thread, which becomes a
/// `hetero::runtime_error` saying what to do instead.
#ifndef HETERO_TASK_DETAIL_BODY_ERROR_HPP
#define HETERO_TASK_DETAIL_BODY_ERROR_HPP

#include <Kokkos_Core.hpp>

#include <exception>
#include <stdexcept>
#include <string_view>

#include "hetero/core/error.hpp"

namespace hetero::detail {

/// Kokkos 3 keeps OpenMP's (and Threads') instance in a thread-local of the thread that
/// initialised Kokkos, so on hetero's worker threads that space reads as uninitialised and a
/// View constructor that would fill the data with it throws. The user cannot tell why from
/// Kokkos' text: say it, and say what works. Other exceptions pass unchanged.
inline std::exception_ptr task_body_error(std::exception_ptr e) {
#if KOKKOS_VERSION < 40000
  try {
    std::rethrow_exception(e);
  } catch (const std::runtime_error& kokkos) {
    const std::string_view what = kokkos.what();
    if (what.find("initializing data with uninitialized execution space") == std::string_view::npos) return e;
    try {
      raise<runtime_error>(
          "a task body constructed a Kokkos View whose data would be initialised by ",
          Kokkos::DefaultExecutionSpace::name(), ", which Kokkos ", KOKKOS_VERSION / 10000, ".",
          KOKKOS_VERSION / 100 % 100,
          " treats as uninitialised on every thread but the one that initialised Kokkos (task workers are other "
          "threads). In a task, allocate with Kokkos::view_alloc(Kokkos::WithoutInitializing, label) and fill the "
          "View yourself, or initialise it on an execution space usable from any thread "
          "(Kokkos::view_alloc(label, Kokkos::Serial()) where Serial is enabled), or create the View before "
          "spawning the task; Kokkos 4 and later need none of this. Kokkos said: ",
          what);
    } catch (...) {
      return std::current_exception();
    }
  } catch (...) {
  }
#endif
  return e;
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_BODY_ERROR_HPP

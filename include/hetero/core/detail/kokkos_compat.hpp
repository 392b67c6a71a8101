/// @file
/// The few places where Kokkos 3.4 and Kokkos 4.x/5.x differ, behind one interface.
#ifndef HETERO_CORE_DETAIL_KOKKOS_COMPAT_HPP
#define HETERO_CORE_DETAIL_KOKKOS_COMPAT_HPP

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

#include "hetero/config.hpp"

// config.hpp was written for one Kokkos; compiling against another with different backends
// would silently select the wrong code paths.
#if HETERO_HAS_CUDA() != defined(KOKKOS_ENABLE_CUDA) || HETERO_HAS_HIP() != defined(KOKKOS_ENABLE_HIP) || \
    HETERO_HAS_OPENMP() != defined(KOKKOS_ENABLE_OPENMP) || HETERO_HAS_SERIAL() != defined(KOKKOS_ENABLE_SERIAL)
#error \
    "hetero: hetero/config.hpp was generated for a Kokkos with other backends than the one being compiled against; reconfigure hetero with this Kokkos (Kokkos_ROOT)"
#endif

namespace hetero::detail {

/// True once Kokkos has been finalised in this process (Kokkos 4+ cannot start again then).
inline bool kokkos_finalized() {
#if KOKKOS_VERSION >= 40000
  return Kokkos::is_finalized();
#else
  return false;  // Kokkos 3 may be initialised again after finalize
#endif
}

/// True for a host space whose kernels run in parallel only when launched from the thread that
/// initialised Kokkos: Kokkos 3's OpenMP and Threads keep their thread pool in a thread-local of
/// that thread, and a launch from any other thread runs serially on it. Kokkos 4's instances
/// (an instance lock, the pool in the instance) run in parallel from any thread.
template <class Space>
inline constexpr bool parallel_only_on_master_thread = false;
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_OPENMP)
template <>
inline constexpr bool parallel_only_on_master_thread<Kokkos::OpenMP> = true;
#endif
#if KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_THREADS)
template <>
inline constexpr bool parallel_only_on_master_thread<Kokkos::Threads> = true;
#endif

/// Whether the calling thread can launch kernels of `Space` in parallel (false for a
/// `parallel_only_on_master_thread` space on another thread than Kokkos' master thread).
template <class Space>
bool launches_in_parallel_here() {
  if constexpr (parallel_only_on_master_thread<Space>) {
#if KOKKOS_VERSION < 40000
    return !Space::in_parallel();  // Kokkos 3: true on every thread but the master (outside regions)
#endif
  }
  return true;
}

/// The command-line flag that sets the host thread count.
inline const char* kokkos_threads_flag() {
#if KOKKOS_VERSION >= 30700
  return "--kokkos-num-threads";
#else
  return "--kokkos-threads";
#endif
}

/// The command-line flag that selects the device.
inline const char* kokkos_device_flag() { return "--kokkos-device-id"; }

/// Names of the execution spaces this Kokkos was built with, default first.
inline std::vector<std::string> kokkos_backends() {
  std::vector<std::string> names;
  names.emplace_back(Kokkos::DefaultExecutionSpace::name());
  auto add = [&](const char* name) {
    if (names.front() != name) names.emplace_back(name);
  };
#if defined(KOKKOS_ENABLE_CUDA)
  add(Kokkos::Cuda::name());
#endif
#if defined(KOKKOS_ENABLE_HIP)
  add("HIP");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  add(Kokkos::OpenMP::name());
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  add(Kokkos::Threads::name());
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
  add(Kokkos::Serial::name());
#endif
  return names;
}

/// While in scope, copies of Kokkos Views made on this thread do not count references (as
/// Kokkos itself copies a functor into its kernel object): for a copy that lives no longer than
/// the functor it was copied from. Each reference count is an atomic add on the View's record,
/// three Views' worth of which were a tenth of a 1e3-element loop's time. Nests: an inner scope
/// (or one opened inside a kernel, where Kokkos has tracking off) leaves the state as it found it.
class untracked_copy_scope {
 public:
  untracked_copy_scope() : m_was_on(Kokkos::Impl::SharedAllocationRecord<void, void>::tracking_enabled()) {
    if (m_was_on) Kokkos::Impl::SharedAllocationRecord<void, void>::tracking_disable();
  }
  ~untracked_copy_scope() {
    if (m_was_on) Kokkos::Impl::SharedAllocationRecord<void, void>::tracking_enable();
  }
  untracked_copy_scope(const untracked_copy_scope&) = delete;
  untracked_copy_scope& operator=(const untracked_copy_scope&) = delete;

 private:
  bool m_was_on;
};

}  // namespace hetero::detail

#endif  // HETERO_CORE_DETAIL_KOKKOS_COMPAT_HPP

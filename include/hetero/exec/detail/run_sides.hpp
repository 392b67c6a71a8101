/// @file
/// Runs the device part and the host part of one split loop at the same time, one on the
/// calling thread and one on the helper thread, times each, and hands exceptions back only
/// after both parts have finished.
#ifndef HETERO_EXEC_DETAIL_RUN_SIDES_HPP
#define HETERO_EXEC_DETAIL_RUN_SIDES_HPP

#include <exception>
#include <mutex>
#include <string_view>

#include "hetero/core/timer.hpp"
#include "hetero/exec/detail/disjoint_cores.hpp"
#include "hetero/exec/detail/helper_thread.hpp"
#include "hetero/exec/detail/running_split.hpp"
#include "hetero/exec/spaces.hpp"

namespace hetero::detail {

/// Seconds of each side of one run.
struct side_seconds {
  double device = 0, host = 0;
};

template <class Part>
struct helper_job {
  Part* part;
  std::string_view label;
  double seconds = 0;

  static void run(void* context) {
    auto& job = *static_cast<helper_job*>(context);
    running_split_scope scope(job.label);
    stopwatch watch;
    (*job.part)();
    job.seconds = watch.seconds();
  }
};

/// Runs `device_part()` and `host_part()` concurrently (one of them on `*helper`, which must
/// not be null then) when both have work (otherwise the one
/// with work on this thread). A space that Kokkos 3 drives only from its master thread (OpenMP,
/// Threads) keeps the calling thread; the other side goes to the helper thread. With
/// `device_threads` > 0 the device part's kernels are held to that many threads while the host
/// part runs (`run_with_threads`). Returns after both finished; then rethrows the host part's
/// exception, else the device part's.
template <class Device, class Host, class DevicePart, class HostPart>
side_seconds run_sides(helper_thread* helper, std::string_view label, DevicePart& device_part, HostPart& host_part,
                       bool device_runs, bool host_runs, int device_threads = 0) {
  side_seconds seconds;
  if (!device_runs || !host_runs) {
    stopwatch watch;
    if (device_runs) device_part();
    if (host_runs) host_part();
    (device_runs ? seconds.device : seconds.host) = watch.seconds();
    return seconds;
  }
  std::scoped_lock lock(split_run_mutex());
  constexpr bool device_on_caller = runs_on_master_thread<Device>;
  std::exception_ptr device_error, host_error;
  auto run_here = [&](auto& part, double& spent, std::exception_ptr& error) {
    running_split_scope scope(label);
    stopwatch watch;
    try {
      part();
    } catch (...) {
      error = std::current_exception();
    }
    spent = watch.seconds();
  };
  if constexpr (device_on_caller) {
    helper_job<HostPart> job{&host_part, label};
    helper->post(&helper_job<HostPart>::run, &job);
    auto device_here = [&] { run_here(device_part, seconds.device, device_error); };
    run_with_threads<Device>(device_threads, device_here);
    host_error = helper->wait();
    seconds.host = job.seconds;
  } else {
    helper_job<DevicePart> job{&device_part, label};
    helper->post(&helper_job<DevicePart>::run, &job);
    run_here(host_part, seconds.host, host_error);
    device_error = helper->wait();
    seconds.device = job.seconds;
  }
  if (host_error) std::rethrow_exception(host_error);
  if (device_error) std::rethrow_exception(device_error);
  return seconds;
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_RUN_SIDES_HPP

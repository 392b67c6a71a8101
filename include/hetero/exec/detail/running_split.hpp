/// @file
/// Which split loop's part the calling thread runs: set on the part's own thread, on each host
/// chunk of `split_for` and each guarded block of `parallel_for`, so that a split loop started
/// there is refused (`refuse_nested_split`) instead of waiting for ever for the running one.
#ifndef HETERO_EXEC_DETAIL_RUNNING_SPLIT_HPP
#define HETERO_EXEC_DETAIL_RUNNING_SPLIT_HPP

#include <string_view>

#include "hetero/core/error.hpp"

namespace hetero::detail {

/// The label of the split loop whose part this thread is running (empty outside one).
inline thread_local std::string_view t_running_split;

/// Marks this thread as running a part of split loop `label` while in scope (an empty `label`,
/// a loop that does not split, keeps the thread's mark as it is).
class running_split_scope {
 public:
  explicit running_split_scope(std::string_view label) noexcept : m_previous(t_running_split) {
    if (!label.empty()) t_running_split = label;
  }
  ~running_split_scope() { t_running_split = m_previous; }
  running_split_scope(const running_split_scope&) = delete;
  running_split_scope& operator=(const running_split_scope&) = delete;

 private:
  std::string_view m_previous;
};

/// Raises `runtime_error` where a split loop that runs both sides, `label`, is started inside a
/// part of another (on a thread marked by `running_split_scope`: the part's own thread, a host
/// chunk of `split_for`, a guarded block of `parallel_for`): it would wait for ever for the
/// helper thread and the lock that the other one holds.
inline void refuse_nested_split(std::string_view label) {
  if (!t_running_split.empty())
    raise<runtime_error>("split loop '", label, "' was started inside a part of split loop '", t_running_split,
                         "'; split loops do not nest (both would need the helper thread): run the inner loop "
                         "with a plain Kokkos::parallel_for on the part's execution space");
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_RUNNING_SPLIT_HPP

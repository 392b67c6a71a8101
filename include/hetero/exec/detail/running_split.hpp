/// @file
/// Which split loop's part the calling thread runs: set on the part's own thread, on each host
/// chunk of `split_for` and each guarded block of `parallel_for`, so that a split loop started
/// there is refused (`refuse_nested_split`) instead of waiting for ever for the running one.
#ifndef HETERO_EXEC_DETAIL_RUNNING_SPLIT_HPP
#define HETERO_EXEC_DETAIL_RUNNING_SPLIT_HPP

#include <string_view>

namespace hetero::detail {

/// The label of the split loop whose part this thread is running (empty outside one).
inline thread_local std::string_view t_running_split;

/// Marks this thread as running a part of split loop `label` while in scope.
class running_split_scope {
 public:
  explicit running_split_scope(std::string_view label) noexcept : m_previous(t_running_split) {
    t_running_split = label;
  }
  ~running_split_scope() { t_running_split = m_previous; }
  running_split_scope(const running_split_scope&) = delete;
  running_split_scope& operator=(const running_split_scope&) = delete;

 private:
  std::string_view m_previous;
};

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_RUNNING_SPLIT_HPP

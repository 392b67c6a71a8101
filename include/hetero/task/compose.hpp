/// @file
/// `hetero::compose`: a recording run as one task of its graph, declared as it is or recorded
/// into another recording, so that an outer recorded graph replays the inner one each time.
#ifndef HETERO_TASK_COMPOSE_HPP
#define HETERO_TASK_COMPOSE_HPP

#include <atomic>
#include <memory>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/scheduler.hpp"
#include "hetero/task/recording.hpp"

namespace hetero {

/// A recording as the body of a task (made by `compose`): the task starts the recording's
/// tasks when its dependencies are met, and its `out` events are written once all of them
/// finished. Holds the recording.
class composed_recording {
 public:
  /// Wraps `recording`; an empty one is refused (`invalid_argument`).
  explicit composed_recording(const task_recording& recording) : m_plan(recording.m_plan) {
    if (!m_plan)
      detail::raise<invalid_argument>(
          "compose(recording) of an empty task_recording; allowed: a recording made "
          "by task_graph::record");
  }

  /// The recording's plan (for the graph).
  [[nodiscard]] const std::shared_ptr<detail::recorded_plan>& plan() const noexcept { return m_plan; }

 private:
  std::shared_ptr<detail::recorded_plan> m_plan;
};

/// The recording `recording` as a task body, for `task_graph::spawn` (also inside
/// `task_graph::record`). The recording must be of the same graph and local to each rank (no
/// `out(...).to(...)` in it); two composed runs of one recording never overlap: each waits for
/// the one declared before it (as if all wrote one event).
/// <!-- snippet: fragment
/// hetero::task_graph graph;
/// hetero::event x = graph.event("x");
/// auto declare_step = [](auto&) {};
/// -->
/// @code
/// auto step = graph.record([&] { declare_step(graph); });
/// auto steps = graph.record([&] {
///   for (int k = 0; k < 4; ++k) graph.spawn("step", hetero::inout(x), hetero::compose(step));
/// });
/// graph.run(steps);  // the four steps, one after the other
/// @endcode
[[nodiscard]] inline composed_recording compose(const task_recording& recording) {
  return composed_recording(recording);
}

namespace detail {

/// The body of a composed task: starts the plan's roots on the running worker and leaves the
/// task to the plan's last finishing node.
struct composed_task {
  scheduler* runner;
  std::shared_ptr<recorded_plan> plan;

  void operator()(node& self) const {
    recorded_plan& p = *plan;
    p.begin_composition(self);
    runner->make_ready_all(t_worker, p.roots, p.queued_roots);
    if (p.composition.outstanding.fetch_sub(1, std::memory_order_acq_rel) != 1) {
      t_finish_deferred = true;  // this body (and the plan it holds) may be gone from here on
      return;
    }
    p.composition.close(p.composition);  // every node finished already (or there is none)
  }
};

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_TASK_COMPOSE_HPP

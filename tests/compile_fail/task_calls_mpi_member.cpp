// Must not compile: a completion source that says whether its test() calls MPI with a data
// member, not a static constexpr bool (the graph reads it before any object exists).
#include <hetero/task.hpp>

#include <atomic>

namespace {
struct flag_source {
  bool calls_mpi = false;
  const std::atomic<bool>* flag;
  [[nodiscard]] bool test() const { return flag->load(); }
};
}  // namespace

void adopt_flag(hetero::task_graph<>& graph, const std::atomic<bool>& flag) {
  hetero::event done = graph.event("done");
  graph.adopt(hetero::out(done), flag_source{false, &flag}, "flag");
}

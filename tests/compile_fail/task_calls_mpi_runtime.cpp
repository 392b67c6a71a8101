// Must not compile: a completion source whose static calls_mpi is set at run time, not a
// constant (the graph decides at compile time whether its workers may poll it).
#include <hetero/task.hpp>

#include <atomic>
#include <cstdlib>

namespace {
bool from_environment() { return std::getenv("FLAG_SOURCE_CALLS_MPI") != nullptr; }
struct flag_source {
  static const bool calls_mpi;
  const std::atomic<bool>* flag;
  [[nodiscard]] bool test() const { return flag->load(); }
};
const bool flag_source::calls_mpi = from_environment();
}  // namespace

void adopt_flag(hetero::task_graph<>& graph, const std::atomic<bool>& flag) {
  hetero::event done = graph.event("done");
  graph.adopt(hetero::out(done), flag_source{&flag}, "flag");
}

// Must not compile: on(...) on an inner task of a subgraph (it runs on its enclosing task's rank).
#include <hetero/task.hpp>

void inner_on(hetero::task_graph<>& graph) {
  graph.spawn("outer", [](hetero::subgraph<>& sg) { sg.spawn("inner", hetero::on(1), [] {}); });
}

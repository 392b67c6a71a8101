// Must not compile: two labels on one task (the second would silently replace the first).
#include <hetero/task.hpp>

void two_labels(hetero::task_graph<>& graph) {
  graph.spawn("first", "second", [] {});
}

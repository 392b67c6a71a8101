// Must not compile: two on(...) clauses on one task (the second would contradict the first).
#include <hetero/task.hpp>

void two_rank_sets(hetero::task_graph<>& graph) {
  graph.spawn("t", hetero::on(0), hetero::on(1), [] {});
}

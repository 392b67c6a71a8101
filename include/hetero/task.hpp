/// @file
/// The task module: event-based tasklet graphs across MPI ranks with CPU and device ready
/// queues (`hetero::task_graph`, events, clauses, recordings, adopted operations, subgraphs and
/// composed recordings, task data that follows the tasks between host, devices and ranks).
#ifndef HETERO_TASK_HPP
#define HETERO_TASK_HPP

#include "hetero/task/clauses.hpp"
#include "hetero/task/completion_source.hpp"
#include "hetero/task/compose.hpp"
#include "hetero/task/data.hpp"
#include "hetero/task/event.hpp"
#include "hetero/task/host_or_device.hpp"
#include "hetero/task/options.hpp"
#include "hetero/task/rank_set.hpp"
#include "hetero/task/recording.hpp"
#include "hetero/task/statistics.hpp"
#include "hetero/task/subgraph.hpp"
#include "hetero/task/task_graph.hpp"

#endif  // HETERO_TASK_HPP

/// @file
/// hetero's power module: DVFS power shifting under a power budget (seed 004). A `monitor`
/// records when each rank computes and when it waits; a `controller` turns that into
/// criticalities every phase and divides the budget by Algorithm 1 (`allocate`); an `actuator`
/// applies each rank's setting (cpufreq, RAPL, NVML, emulated, dry run). The `simulator`
/// compares the policies on models, and `node_power_shifter` splits a node's budget between its
/// GPU and its CPU. The PMPI layer (`hetero/power/pmpi.hpp`) is not included here: it defines
/// MPI's functions and goes into one translation unit of the application.
#ifndef HETERO_POWER_HPP
#define HETERO_POWER_HPP

#include "hetero/power/activity_timeline.hpp"
#include "hetero/power/actuator.hpp"
#include "hetero/power/allocator.hpp"
#include "hetero/power/controller.hpp"
#include "hetero/power/cpufreq_actuator.hpp"
#include "hetero/power/dry_run_actuator.hpp"
#include "hetero/power/emulated_actuator.hpp"
#include "hetero/power/frequency_table.hpp"
#include "hetero/power/imbalance_patterns.hpp"
#include "hetero/power/monitor.hpp"
#include "hetero/power/node_shift.hpp"
#include "hetero/power/nvml_actuator.hpp"
#include "hetero/power/phase_detection.hpp"
#include "hetero/power/rapl_actuator.hpp"
#include "hetero/power/simulator.hpp"

#endif  // HETERO_POWER_HPP

/// @file
/// hetero's power module: DVFS power shifting under a power budget. A `monitor` records when
/// each rank computes and when it waits; a `controller` turns that into criticalities every
/// phase and divides the budget with `allocate` (the critical ranks get the higher frequencies);
/// an actuator (`hetero/power/actuators/`: cpufreq, RAPL, NVML, emulated, dry run) applies each
/// rank's setting, and `node_power_shifter` splits a node's budget between its GPU and its CPU.
/// The PMPI layer (`hetero/power/pmpi.hpp`) is not included here: it defines MPI's functions and
/// goes into one translation unit of the application.
#ifndef HETERO_POWER_HPP
#define HETERO_POWER_HPP

#include "hetero/power/activity_timeline.hpp"
#include "hetero/power/actuators/actuator.hpp"
#include "hetero/power/actuators/cpufreq.hpp"
#include "hetero/power/actuators/dry_run.hpp"
#include "hetero/power/actuators/emulated.hpp"
#include "hetero/power/actuators/nvml.hpp"
#include "hetero/power/actuators/rapl.hpp"
#include "hetero/power/allocator.hpp"
#include "hetero/power/controller.hpp"
#include "hetero/power/frequency_table.hpp"
#include "hetero/power/monitor.hpp"
#include "hetero/power/node_shift.hpp"
#include "hetero/power/phase_detection.hpp"

#endif  // HETERO_POWER_HPP

// The PMPI layer of hetero's power module, compiled in this one translation unit of the
// program: every blocking MPI call the program makes is reported to the monitor as a wait.
#define HETERO_POWER_PMPI_DEFINE
#include <hetero/power/pmpi.hpp>

/// @file
/// The exec module: GPU/CPU work sharing. A loop is split by a CPU weight into a device part and
/// a host part that run at the same time (`parallel_for`, `parallel_reduce`, `split_for`), with
/// mirrored arrays that move only the rows each side lacks, and one tuner per loop label, kept
/// in a `work_sharing` handle (`default_work_sharing()` unless one is passed).
#ifndef HETERO_EXEC_HPP
#define HETERO_EXEC_HPP

#include "hetero/exec/access.hpp"
#include "hetero/exec/mirrored_array.hpp"
#include "hetero/exec/model_tuner.hpp"
#include "hetero/exec/parallel_for.hpp"
#include "hetero/exec/spaces.hpp"
#include "hetero/exec/split_config.hpp"
#include "hetero/exec/split_for.hpp"
#include "hetero/exec/split_policy.hpp"
#include "hetero/exec/split_stats.hpp"
#include "hetero/exec/tuner.hpp"
#include "hetero/exec/weights_file.hpp"
#include "hetero/exec/work_sharing.hpp"

#endif  // HETERO_EXEC_HPP

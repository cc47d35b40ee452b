#pragma once
/// @file
/// The machine workflow: overrides from flags and environment, then detection
/// (probe/machine.h). Used by `gpulock probe --machine` and by resolve's GPU policy.

#include "gpulock/core/error.h"
#include "gpulock/probe/machine.h"

namespace gpulock::app {

/// `--driver`, `--cuda-ceiling`, `--gpu-arch` as given; empty = not given (then
/// GPULOCK_DRIVER, GPULOCK_CUDA_CEILING, GPULOCK_GPU_ARCH apply).
using MachineRequest = probe::OverrideFlags;

/// Reads the overrides (flags first, then the environment; also GPULOCK_TEST_ROOT and
/// GPULOCK_PROBE_TIMEOUT_MS) and detects the machine. Errors: Usage (a bad override value,
/// naming the flag or variable). Everything the detection meets is part of the result.
[[nodiscard]] core::Result<probe::MachineInfo> probe_machine(const MachineRequest& request);

}  // namespace gpulock::app

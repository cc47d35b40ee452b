#pragma once
/// @file
/// `--driver`, `--cuda-ceiling` and `--gpu-arch`, declared here once for every command that
/// describes a machine (issue 43): resolve (the machine to lock for), check and install (the
/// machine a lock must fit) and probe (assumed instead of detected). The text is kept as given
/// (gpu::MachineFlags) and parsed by gpu::parse_machine, through probe's overrides, which add
/// GPULOCK_DRIVER, GPULOCK_CUDA_CEILING and GPULOCK_GPU_ARCH for what the flags leave unset.

#include <CLI/CLI.hpp>

#include "gpulock/gpu/machine_flags.h"

namespace gpulock::cli {

/// What the machine is to the command, which words its help.
enum class MachineRole {
  Target,    ///< resolve: the machine the lock is for
  Describe,  ///< check, install: this machine, described instead of detected
  Assume,    ///< probe: assumed instead of detected
};

void add_machine_flags(CLI::App& sub, gpu::MachineFlags& into, MachineRole role);

}  // namespace gpulock::cli

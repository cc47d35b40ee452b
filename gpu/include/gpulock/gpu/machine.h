#pragma once
/// @file
/// A machine as gpulock knows it (issue 43 item 1): one value for the fit rule (fit.h), for the
/// resolve's GPU policy (GpuContext, gpu_policy.h: this and the lock's `--cuda-compat`), and
/// for what probe reads of a real machine (probe::fit_machine). Pure.

#include <optional>
#include <string>
#include <vector>

#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::gpu {

/// An OS and CPU architecture, as a wheel's platform tag names them.
struct Platform {
  std::string os;   ///< "linux", "macos", "windows"
  std::string cpu;  ///< "x86_64", "aarch64", "arm64", "ppc64le", "s390x", ...
  friend bool operator==(const Platform&, const Platform&) = default;
};

/// The machine. Every fact may be unknown.
struct Machine {
  std::optional<Platform> platform;  ///< unknown: not compared, and said
  bool no_gpu = false;               ///< known to have no NVIDIA GPU (`--driver none`)
  std::optional<DriverVersion> driver;
  std::optional<CudaVersion> ceiling;    ///< the driver's CUDA ceiling (stated or derived)
  std::string ceiling_method;            ///< how the ceiling is known ("nvml", "override", ...)
  std::vector<ComputeCapability> archs;  ///< empty: unknown
};

}  // namespace gpulock::gpu

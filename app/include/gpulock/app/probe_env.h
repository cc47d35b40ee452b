#pragma once
/// @file
/// The environment probe workflow (`gpulock probe`; DESIGN.md §Probe, issue "Post-install:
/// `gpulock install` and the cuDNN/CUDA load probe"): find the environment (ask the
/// interpreter for its site-packages, or take a directory), run the load probe
/// (probe/load_probe.h), detect the machine (probe/machine.h), and compare all of it with the
/// lock: versions installed vs locked, the locked wheels' files (the shared libraries and the
/// whole member list the lock records, issue 44 item 4), a CPU torch where the lock has a CUDA
/// variant, the driver against the lock's minimum, the GPU architectures against the torch
/// build's arch list.

#include <optional>
#include <string>
#include <vector>

#include "gpulock/app/machine.h"
#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/index/client.h"
#include "gpulock/probe/environment.h"
#include "gpulock/probe/load_probe.h"
#include "gpulock/probe/machine.h"

namespace gpulock::app {

struct ProbeRequest {
  /// The interpreter to ask (`--python`); empty: `$VIRTUAL_ENV/bin/python` when VIRTUAL_ENV is
  /// set, else `python3` on PATH. Ignored when `site_packages` is given.
  std::string python;
  /// `--site-packages DIR`: read this directory instead of asking an interpreter.
  std::string site_packages;
  /// `--lock FILE`; empty: `pylock.toml` in the current directory when it exists, else none.
  std::string lock;
  bool run_kernels = false;
  /// `--require-gpu`: no usable GPU is a failure when the lock is for a CUDA variant.
  bool require_gpu = false;
  MachineRequest machine;  ///< --driver, --cuda-ceiling, --gpu-arch
  /// The cache the locked wheels' member lists are read from (always offline: the cache, or a
  /// wheel the lock names as a local file; issue 44 item 4).
  index::ClientOptions client;
  /// Compare every installed locked wheel's files with the member list the lock records
  /// (`locked-file-mismatch`). Off for `check --env`, which compares them itself (after RECORD).
  bool member_lists = true;
};

/// One locked package against what is installed.
struct PackageCheck {
  std::string name;       ///< normalized
  std::string locked;     ///< the lock's version
  std::string installed;  ///< empty: not installed
  bool matches = false;
};

/// What the lock says about the GPU side, as read (`[tool.gpulock.gpu]`, typed by the reader).
struct LockGpuFacts {
  std::optional<std::string> variant;
  std::optional<gpu::CudaVersion> cuda;
  std::optional<std::string> cudnn;
  std::optional<gpu::DriverVersion> min_driver;
  std::vector<gpu::ComputeCapability> archs;
};

struct EnvironmentReport {
  probe::PythonEnvironment environment;
  probe::LoadReport load;
  probe::MachineInfo machine;
  std::string lock_path;  ///< empty: no lock compared
  std::optional<LockGpuFacts> lock_gpu;
  std::vector<PackageCheck> packages;  ///< locked packages for this environment, lock order
  std::vector<probe::Finding> findings;
  std::vector<std::string> warnings;  ///< lock reader warnings, environment warnings

  /// No finding of severity Fail.
  [[nodiscard]] bool ok() const noexcept;
};

/// The interpreter `probe_environment` asks: the request's, else `$VIRTUAL_ENV/bin/python`,
/// else `./.venv/bin/python` when it exists (what `gpulock install` makes), else `python3`.
[[nodiscard]] std::string default_python(const std::string& requested);

/// Runs the workflow. Errors: Usage (bad overrides, --python with --site-packages), Io (the
/// interpreter cannot be run or fails, a site-packages directory cannot be read, --lock names a
/// file that does not exist), InvalidLockfile (the lock). Every finding about the environment
/// is part of the result.
[[nodiscard]] core::Result<EnvironmentReport> probe_environment(const ProbeRequest& request);

}  // namespace gpulock::app

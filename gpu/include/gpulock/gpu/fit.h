#pragma once
/// @file
/// Does a lock run on a machine? One rule (issue 43), for `check --machine`, install's choice
/// among locks, `install --print-target`, `check --all-targets --machine` and the fleet: a lock
/// fits a machine when
///  1. the machine's OS and CPU architecture are among the lock's platforms;
///  2. the driver runs the lock's CUDA: its minimum driver is met, and the driver's CUDA ceiling
///     (under the lock's `--cuda-compat minor`, the driver branch's CUDA major) reaches the
///     lock's CUDA;
///  3. every locked GPU build has kernels for each GPU: SASS of the same major and a minor <=
///     the GPU's, or PTX for an arch <= it, by the arch tables (kernels_of; cuDNN 9.11 and
///     newer need 7.5).
/// The GPUs named when the lock was made are a record, not a requirement. Python is install's
/// to check (an inventory has none). A fact the machine description lacks is unknown: the
/// verdict says what was assumed. Pure: no I/O.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/core/version.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/gpu/machine.h"

namespace gpulock::gpu {

/// The platform of a wheel platform tag: `manylinux_2_28_x86_64`, `musllinux_1_2_aarch64`,
/// `linux_x86_64` -> linux; `macosx_11_0_arm64` -> macos; `win_amd64` -> windows/x86_64 (AMD64
/// is x86_64), `win_arm64`. nullopt for `any` and tags it cannot read.
[[nodiscard]] std::optional<Platform> platform_of_tag(std::string_view tag);

/// One locked package, as the fit reads it.
struct LockedPackage {
  std::string name;  ///< PEP 503 normalized
  core::Version version;
  std::size_t line = 0;  ///< its line in the lock
};

/// What a lock says of itself that the fit needs (from `[tool.gpulock.target]`,
/// `[tool.gpulock.gpu]` and `[[packages]]`).
struct LockFacts {
  std::vector<std::string> platforms;  ///< the platform tags it is for; empty: any
  std::optional<CudaVersion> cuda;     ///< the CUDA its builds need (recorded)
  /// The CUDA of its torch-family build (the recorded variant, `cu126` -> 12.6), when it has one.
  std::optional<CudaVersion> build_cuda;
  std::optional<DriverVersion> min_driver;  ///< the driver it needs (recorded)
  CudaCompat compat = CudaCompat::Strict;
  bool cuda_builds = false;  ///< it has CUDA builds (else any GPU or none runs it)
  std::string cpu;           ///< the CPU its arch tables are read for ("x86_64"); empty: x86_64
  std::vector<LockedPackage> packages;
  std::size_t gpu_line = 0;  ///< the line of `[tool.gpulock.gpu]`
};

/// Why a lock does not fit.
enum class FitProblem : std::uint8_t {
  Platform,      ///< the machine's OS/CPU is not among the lock's platforms
  NoDriver,      ///< a CUDA lock, and no driver (or `--driver none`): cannot run
  DriverBelow,   ///< the driver is older than the lock's minimum
  CeilingBelow,  ///< the driver's CUDA ceiling is below the lock's CUDA
  NoKernels,     ///< a locked build has no kernels for a GPU
  CudnnArch,     ///< the locked cuDNN dropped a GPU's architecture
};

struct FitReason {
  FitProblem problem = FitProblem::NoKernels;
  std::string subject;   ///< "platform", "driver", "cuda", or the GPU ("sm_61")
  std::string package;   ///< the locked package it is about, else empty
  std::string version;   ///< that package's version
  std::size_t line = 0;  ///< the lock line to point at
  std::string expected;  ///< what the lock needs ("560.28.03", "12.6", "7.5, 8.0, 9.0+PTX")
  std::string actual;    ///< what the machine has
  /// NoKernels: the arch list compared was assumed (no list is known for the build).
  bool assumed = false;
  /// NoKernels: the predicate as the resolver words it ("has no kernels for your GPU's sm_61
  /// (its CUDA 12.8 build carries ...)").
  std::string detail;
};

struct Fit {
  bool fits = false;
  bool cuda_lock = false;          ///< the lock has CUDA builds
  std::vector<FitReason> reasons;  ///< empty when it fits; in rule order
  /// Facts the machine description lacks and what was assumed for them ("GPU architectures
  /// unknown: not compared with the locked builds").
  std::vector<std::string> unknown;
  /// Locked builds whose kernels were compared with an assumed list (no list known).
  std::vector<std::string> assumed_lists;
};

/// The locked package that raised the lock's CUDA above its torch build's (an unpinned
/// `nvidia-cublas-cu12 12.9.1.4` beside a `+cu126` torch makes the lock need CUDA 12.9): the
/// first whose version names its CUDA release and equals the lock's CUDA. nullptr when the
/// lock's CUDA is its build's (or either is unknown).
[[nodiscard]] const LockedPackage* cuda_raised_by(const LockFacts& lock);

/// The sentence every command uses for a reason about the lock's own builds or platform
/// (Platform, NoKernels, CudnnArch): "torch 2.13.0+cu130 has no kernels for this machine's GPU
/// (sm_61): it carries sm_75, ...". Empty for the driver's reasons, which each command words
/// with what it knows of the machine.
[[nodiscard]] std::string reason_text(const FitReason& reason);

/// The one fit rule (see the file comment).
[[nodiscard]] Fit lock_fits(const LockFacts& lock, const Machine& machine);

}  // namespace gpulock::gpu

#pragma once
/// @file
/// Machine detection: the NVIDIA driver version, its CUDA ceiling, the kernel module, and the
/// GPUs with their compute capabilities (DESIGN.md §GPU model; issue "Machine detection").
///
/// `detect_machine` tries, in order, and records every step with its outcome:
///  1. overrides (`--driver`/`--cuda-ceiling`/`--gpu-arch` or `GPULOCK_DRIVER`,
///     `GPULOCK_CUDA_CEILING`, `GPULOCK_GPU_ARCH`; an empty variable counts as unset);
///  2. NVML, `dlopen("libnvidia-ml.so.1")`, and
///  3. libcuda, `dlopen("libcuda.so.1")` (then `/usr/lib/wsl/lib/...` on WSL), each in a child
///     process with a timeout so that a hanging or crashing driver cannot take gpulock down;
///  4. `/sys/module/nvidia/version`, `/proc/driver/nvidia/version`, the `/dev/nvidia*` nodes;
///  5. `nvidia-smi --query-gpu=driver_version,name,compute_cap,uuid --format=csv,noheader`, with
///     a timeout, when the steps above left the driver version or the GPU list unknown.
/// Neither NVML nor libcuda is ever linked. Values are taken as follows:
///  - driver version: NVML, else the kernel module (sysfs, then procfs), else nvidia-smi, else
///    the version in the file name of the libcuda that loaded;
///  - CUDA ceiling: override, else `cuDriverGetVersion` (what the CUDA runtime accepts, counting
///    forward-compatibility packages), else `nvmlSystemGetCudaDriverVersion_v2`, else the driver
///    version mapped through NVIDIA's table (cuda_versions.h);
///  - GPUs: NVML (no CUDA context needed), else libcuda, else nvidia-smi; architectures for
///    compatibility: override, else every detected GPU's.
/// A driver override (`--driver VERSION` or `none`) describes another machine: no detection
/// runs. A ceiling or architecture override alone replaces only that value.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/fit.h"
#include "gpulock/gpu/machine_flags.h"
#include "gpulock/sys/env.h"

namespace gpulock::probe {

/// How a value was obtained.
enum class Method : std::uint8_t {
  Override,     ///< a flag or an environment variable
  Nvml,         ///< libnvidia-ml.so.1
  Libcuda,      ///< libcuda.so.1 (the CUDA driver API)
  Sysfs,        ///< /sys/module/nvidia/version
  Procfs,       ///< /proc/driver/nvidia/version
  NvidiaSmi,    ///< the nvidia-smi program
  DriverTable,  ///< the driver version mapped through NVIDIA's table
};

/// "override", "nvml", "libcuda", "sysfs", "procfs", "nvidia-smi", "driver-table".
[[nodiscard]] std::string_view method_name(Method method) noexcept;

/// A value with the method that gave it, the exact source within that method (a function,
/// file, variable or flag) and the raw text it was read from.
template <class T>
struct Detected {
  T value;
  Method method = Method::Override;
  std::string source;  ///< "cuDriverGetVersion", "/sys/module/nvidia/version", "GPULOCK_DRIVER"
  std::string raw;     ///< "12040", "550.54.14"
};

/// One GPU as a method reported it.
struct GpuInfo {
  std::uint32_t index = 0;  ///< NVML index, CUDA ordinal, or nvidia-smi line number
  std::string name;         ///< "NVIDIA H100 80GB HBM3"; may be empty
  std::string uuid;         ///< "GPU-5b4e..."; empty when unknown
  std::optional<gpu::ComputeCapability> compute_capability;
  std::optional<std::uint64_t> memory_bytes;  ///< total memory
  Method method = Method::Nvml;
};

/// The outcome of one detection step.
enum class StepOutcome : std::uint8_t {
  Ok,        ///< answered
  NotFound,  ///< not present here (library, file, program; a stub libcuda counts as absent)
  Failed,    ///< present but failed (an error code, unreadable output)
  TimedOut,  ///< killed after the timeout
  Crashed,   ///< the child process died of a signal
  Skipped,   ///< not needed, or not run because of an override
};

/// "ok", "not-found", "failed", "timeout", "crashed", "skipped".
[[nodiscard]] std::string_view step_outcome_name(StepOutcome outcome) noexcept;

/// A step tried: "overrides", "nvml", "libcuda", "sysfs", "procfs", "devices", "nvidia-smi".
struct ProbeStep {
  std::string name;
  StepOutcome outcome = StepOutcome::Skipped;
  std::string detail;  ///< one line: what answered, or why not
};

/// The verdict. Each is a normal result.
enum class MachineStatus : std::uint8_t {
  Gpu,              ///< a driver and at least one GPU visible to CUDA
  DriverOnly,       ///< a driver (kernel module) but nothing could list the GPUs
  NoDevice,         ///< a driver but no GPU visible (container, CUDA_VISIBLE_DEVICES="")
  NoPermission,     ///< /dev/nvidia* present but not accessible to this user
  DriverMismatch,   ///< driver updated but not reloaded: user-space and kernel module differ
  ModuleNotLoaded,  ///< user-space driver libraries present, kernel module not loaded
  NoDriver,         ///< no NVIDIA driver at all (a toolkit's stub libcuda counts as none)
  Override,         ///< the driver was given (`--driver VERSION`): another machine described
  NoGpuOverride,    ///< `--driver none`: no GPU, CPU builds only
};

/// "gpu", "driver-only", "no-device", "no-permission", "driver-mismatch", "module-not-loaded",
/// "no-driver", "override", "no-gpu".
[[nodiscard]] std::string_view machine_status_name(MachineStatus status) noexcept;

/// What detect_machine found.
struct MachineInfo {
  MachineStatus status = MachineStatus::NoDriver;
  std::string verdict;             ///< one sentence for people
  std::vector<std::string> hints;  ///< what to do about it, if anything

  std::optional<Detected<gpu::DriverVersion>> driver;
  /// Absent when no driver was found (and no override given): the resolver then needs
  /// `--driver VERSION` or `--driver none`.
  std::optional<Detected<gpu::CudaVersion>> cuda_ceiling;
  std::optional<Detected<gpu::DriverVersion>> kernel_module;  ///< the loaded module (sysfs/procfs)

  std::vector<GpuInfo> gpus;
  /// Distinct architectures, sorted, that a build must support (every GPU counts); absent when
  /// unknown (no GPU found and no override).
  std::optional<Detected<std::vector<gpu::ComputeCapability>>> gpu_archs;

  bool wsl = false;  ///< WSL 2: the driver is the Windows host's (/usr/lib/wsl/lib)
  std::vector<std::string> warnings;
  std::vector<ProbeStep> steps;

  /// Is there a GPU that CUDA programs here can use?
  [[nodiscard]] bool has_gpu() const noexcept { return status == MachineStatus::Gpu; }
};

/// Override text as given on the command line (gpu/machine_flags.h); an empty string means
/// "not given".
using OverrideFlags = gpu::MachineFlags;

/// Parsed overrides. `*_origin` names the flag or environment variable each came from.
struct Overrides {
  bool no_driver = false;  ///< `none`
  std::optional<gpu::DriverVersion> driver;
  std::optional<gpu::CudaVersion> cuda_ceiling;
  std::optional<std::vector<gpu::ComputeCapability>> gpu_archs;
  std::string driver_origin;
  std::string cuda_ceiling_origin;
  std::string gpu_arch_origin;
  std::string driver_raw, cuda_ceiling_raw, gpu_arch_raw;
};

/// Reads environment variables; `std::getenv` in production, a fake in tests.
using EnvLookup = sys::EnvLookup;

/// Flags first, then `GPULOCK_DRIVER`, `GPULOCK_CUDA_CEILING`, `GPULOCK_GPU_ARCH` for what the
/// flags left unset (empty = unset). Errors: Usage, naming the flag or variable and the value.
[[nodiscard]] core::Result<Overrides> read_overrides(const OverrideFlags& flags,
                                                     EnvLookup getenv_fn = nullptr);

/// `GPULOCK_PROBE_TIMEOUT_MS`: the limit for each child process of detection and of the load
/// probe, in milliseconds (1-600000); nullopt when unset. Errors: Usage naming the variable.
[[nodiscard]] core::Result<std::optional<std::chrono::milliseconds>> probe_timeout_from_env(
    EnvLookup getenv_fn = nullptr);

/// Options of detect_machine.
struct DetectOptions {
  Overrides overrides;
  /// Root under which /sys, /proc, /dev and /usr/lib/wsl are read: "/" except in tests
  /// (`GPULOCK_TEST_ROOT`).
  std::string root = "/";
  /// Limit for each child process (NVML, libcuda, nvidia-smi). `GPULOCK_PROBE_TIMEOUT_MS`.
  std::chrono::milliseconds timeout{30000};
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string cuda_library = "libcuda.so.1";
  std::string nvidia_smi = "nvidia-smi";  ///< looked up on PATH
  /// Tests only (set with GPULOCK_TEST_ROOT): look for the driver libraries in LD_LIBRARY_PATH
  /// alone, never in the ld.so cache or system directories, so that a real driver on the test
  /// machine cannot leak into a test.
  bool hermetic = false;
};

/// read_overrides, plus `GPULOCK_TEST_ROOT` (sets `root` and `hermetic`) and
/// `GPULOCK_PROBE_TIMEOUT_MS` (milliseconds, 1-600000). Errors: Usage.
[[nodiscard]] core::Result<DetectOptions> detect_options_from_env(const OverrideFlags& flags,
                                                                  EnvLookup getenv_fn = nullptr);

/// Runs the detection. Never fails: every problem is a step outcome, a warning or the verdict.
[[nodiscard]] MachineInfo detect_machine(const DetectOptions& options);

/// `info` as the fit rule's machine (gpu/fit.h): its driver, ceiling and GPU architectures, and
/// this host's OS and CPU (uname), which overrides of the driver and GPUs leave as they are.
[[nodiscard]] gpu::Machine fit_machine(const MachineInfo& info);

}  // namespace gpulock::probe

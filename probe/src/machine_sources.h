#pragma once
// Parsers for the text sources of machine detection: the kernel module's version files,
// nvidia-smi's CSV output, and the driver version in a library's file name. Pure functions,
// unit-tested directly (tests/probe).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::probe::detail {

/// `/sys/module/nvidia/version`: "550.54.14\n". nullopt when it is not a driver version.
[[nodiscard]] std::optional<gpu::DriverVersion> parse_sysfs_version(std::string_view content);

/// `/proc/driver/nvidia/version`, first line, e.g.
/// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024"
/// or "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build ...":
/// the module's version, read by gpu::read_proc_module (the reader `fleet` uses); nullopt for a
/// Jetson's L4T release.
[[nodiscard]] std::optional<gpu::DriverVersion> parse_procfs_version(std::string_view content);

/// The version in a driver library's file name: "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14"
/// -> 550.54.14; nullopt for "libcuda.so.1" or a name without ".so.".
[[nodiscard]] std::optional<gpu::DriverVersion> version_from_library_file(std::string_view path);

/// One line of `nvidia-smi --query-gpu=driver_version,name[,compute_cap],uuid
/// --format=csv,noheader`.
struct SmiGpu {
  gpu::DriverVersion driver;
  std::string name;
  std::optional<gpu::ComputeCapability> compute_capability;  ///< absent: "[N/A]" or not queried
  std::string uuid;
};

/// Parses the whole output, one GPU per non-empty line. Errors: InvalidInput naming the first
/// line that does not fit (quoted, cut short).
[[nodiscard]] core::Result<std::vector<SmiGpu>> parse_nvidia_smi(std::string_view output,
                                                                 bool with_compute_cap);

/// The first non-empty line of `text`, trimmed (for one-line messages).
[[nodiscard]] std::string first_line(std::string_view text);

}  // namespace gpulock::probe::detail

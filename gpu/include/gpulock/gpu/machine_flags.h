#pragma once
/// @file
/// A machine as a person describes it (issue 43): `--driver`, `--cuda-ceiling` and `--gpu-arch`
/// on every command that takes them (declared once, cli/machine_flags.h), a declared target's
/// `driver`, `cuda-ceiling` and `gpu-arch` keys, and GPULOCK_DRIVER, GPULOCK_CUDA_CEILING and
/// GPULOCK_GPU_ARCH. The text is kept as given (the lock records it so); parse_machine is its
/// one parser. Pure: no I/O.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::gpu {

/// The three facts as text; an empty string is "not given".
struct MachineFlags {
  std::string driver;        ///< a driver version, `none`, or `auto` (= not given)
  std::string cuda_ceiling;  ///< X.Y
  std::string gpu_arch;      ///< sm_XY[,sm_XY...]
  friend bool operator==(const MachineFlags&, const MachineFlags&) = default;
};

/// The same facts, parsed.
struct MachineSpec {
  DriverSpec driver;                                    ///< Auto when not given
  std::optional<CudaVersion> ceiling;                   ///< not given: nullopt
  std::optional<std::vector<ComputeCapability>> archs;  ///< sorted, distinct; not given: nullopt
};

/// Which of the three a parse error is about.
enum class MachineField : std::uint8_t { Driver, CudaCeiling, GpuArch };

/// A parse error of one of the three: the type's own error, for the caller to name the flag or
/// the variable it came from.
struct MachineFlagError {
  MachineField field = MachineField::Driver;
  core::Error error = core::make_error(core::ErrorCode::Usage, "");
};

/// A `--gpu-arch` list: items separated by commas (spaces around them allowed), each
/// ComputeCapability::parse; sorted, duplicates dropped. Errors: the first item's.
[[nodiscard]] core::Result<std::vector<ComputeCapability>> parse_gpu_archs(std::string_view text);

/// The one parser of a described machine: each given field by its type's parser (`auto` and
/// empty leave the driver Auto; spaces around a value are ignored).
[[nodiscard]] std::expected<MachineSpec, MachineFlagError> parse_machine(const MachineFlags& flags);

}  // namespace gpulock::gpu

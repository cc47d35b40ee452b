#pragma once
/// @file
/// Version vocabulary of the NVIDIA driver stack and NVIDIA's driver -> CUDA table.
///
/// - DriverVersion: the display/kernel driver version ("550.54.14", "570.26", "580").
/// - CudaVersion: a CUDA toolkit "major.minor"; the driver's *CUDA ceiling* is the newest CUDA it
///   runs natively (`cuDriverGetVersion`, 12040 -> 12.4).
/// - ComputeCapability: a GPU architecture (`sm_90` is 9.0).
///
/// The table maps a driver to its ceiling (toolkit GA minimum drivers) and a CUDA version to the
/// minimum driver it needs, strictly or under NVIDIA minor-version compatibility
/// (DESIGN.md §GPU model). Source: NVIDIA CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and
/// Corresponding Driver Versions" and Table 2 (minor version compatibility), as transcribed in
/// shared/data/pytorch-gpu-wheels.json `cuda_drivers` (`cuda_driver_table_source()` names it).

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::gpu {

/// An NVIDIA driver version: 1 to 4 dot-separated decimal numbers ("550.54.14", "570.26",
/// "580"). Compared numerically part by part, missing parts counting as 0 ("580" == "580.0");
/// the original text is kept for display because parts may have leading zeros ("535.54.03").
class DriverVersion {
 public:
  /// Errors: InvalidInput (not 1-4 dot-separated numbers; column of the offending character).
  [[nodiscard]] static core::Result<DriverVersion> parse(std::string_view text);

  /// The text as given ("535.54.03").
  [[nodiscard]] const std::string& to_string() const noexcept { return text_; }
  /// The numeric parts (535, 54, 3).
  [[nodiscard]] const std::vector<std::uint32_t>& parts() const noexcept { return parts_; }
  /// The branch: the first part (550).
  [[nodiscard]] std::uint32_t branch() const noexcept { return parts_.empty() ? 0 : parts_[0]; }

  friend std::strong_ordering operator<=>(const DriverVersion& a, const DriverVersion& b) noexcept;
  friend bool operator==(const DriverVersion& a, const DriverVersion& b) noexcept;

 private:
  std::string text_;
  std::vector<std::uint32_t> parts_;
};

/// A CUDA version "major.minor" (12.4). Ordered numerically.
struct CudaVersion {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;

  /// "12.4", "12" (= 12.0) or "12.4.127" (extra parts ignored). Errors: InvalidInput.
  [[nodiscard]] static core::Result<CudaVersion> parse(std::string_view text);
  /// The CUDA driver API encoding `1000 * major + 10 * minor` (12040 -> 12.4), as returned by
  /// `cuDriverGetVersion` and `nvmlSystemGetCudaDriverVersion_v2`. nullopt outside
  /// [1000, 99990], the range rattler accepts as plausible.
  [[nodiscard]] static std::optional<CudaVersion> from_driver_api(int encoded) noexcept;
  /// "12.4".
  [[nodiscard]] std::string to_string() const;
  friend auto operator<=>(const CudaVersion&, const CudaVersion&) = default;
};

/// A GPU's compute capability (8.6 is `sm_86`, 12.0 is `sm_120`).
struct ComputeCapability {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;

  /// "sm_86", "sm_120", "8.6", "12.0". Errors: InvalidInput.
  [[nodiscard]] static core::Result<ComputeCapability> parse(std::string_view text);
  /// "sm_86".
  [[nodiscard]] std::string to_string() const;
  /// "8.6".
  [[nodiscard]] std::string dotted() const;
  friend auto operator<=>(const ComputeCapability&, const ComputeCapability&) = default;
};

/// How strictly a CUDA build is matched against the driver (`--cuda-compat`).
enum class CudaCompat : std::uint8_t {
  Strict,  ///< a build for CUDA X.Y needs a driver whose ceiling is >= X.Y
  Minor,   ///< NVIDIA minor-version compatibility: X.anything on the major's floor driver
};

/// `--cuda-compat`: "strict" or "minor". The one parser of the flag (issue 21): the CLI's
/// validator, resolve, and check reading a lock's record all call it. Errors: Usage,
/// "invalid --cuda-compat 'x': expected strict or minor".
[[nodiscard]] core::Result<CudaCompat> parse_cuda_compat(std::string_view text);
/// "strict" or "minor".
[[nodiscard]] std::string_view cuda_compat_name(CudaCompat compat) noexcept;

/// `--driver`: which machine's driver a resolve is for. Auto: detect this machine's (or take
/// `GPULOCK_DRIVER`); None: a machine without a GPU; Version: a driver given by version.
class DriverSpec {
 public:
  enum class Kind : std::uint8_t { Auto, None, Version };

  DriverSpec() = default;
  [[nodiscard]] static DriverSpec none() { return DriverSpec(Kind::None, std::nullopt); }
  [[nodiscard]] static DriverSpec of(DriverVersion version) {
    return DriverSpec(Kind::Version, std::move(version));
  }

  /// "auto", "none" or a driver version (DriverVersion::parse). Errors: Usage, "invalid value
  /// for --driver: ..." with a hint, as `gpulock probe --driver` says it.
  [[nodiscard]] static core::Result<DriverSpec> parse(std::string_view text);

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] bool is_auto() const noexcept { return kind_ == Kind::Auto; }
  [[nodiscard]] bool is_none() const noexcept { return kind_ == Kind::None; }
  /// The version, for Kind::Version.
  [[nodiscard]] const std::optional<DriverVersion>& version() const noexcept { return version_; }
  /// "auto", "none" or the version as given.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const DriverSpec& a, const DriverSpec& b) noexcept {
    return a.kind_ == b.kind_ && a.version_ == b.version_;
  }

 private:
  DriverSpec(Kind kind, std::optional<DriverVersion> version)
      : kind_(kind), version_(std::move(version)) {}
  Kind kind_ = Kind::Auto;
  std::optional<DriverVersion> version_;
};

/// One row of NVIDIA's table: the minimum Linux driver of a CUDA toolkit's first release.
struct CudaDriverRow {
  CudaVersion cuda;
  std::string_view release;     ///< "12.4 GA" (11.0: "11.0.1 RC", the earliest row transcribed)
  std::string_view min_driver;  ///< Linux x86_64 minimum driver, "550.54.14"
};

/// The table, oldest CUDA first. CUDA 11.1-11.6 are not transcribed in the source data, so a
/// driver of the 455-510 branches maps to 11.0 (conservative).
[[nodiscard]] std::span<const CudaDriverRow> cuda_driver_table() noexcept;

/// Where the table comes from, for reports and the lock.
[[nodiscard]] std::string_view cuda_driver_table_source() noexcept;

/// The CUDA ceiling of a driver: the newest CUDA whose GA minimum driver is <= `driver`
/// (550.54.14 -> 12.4, 570.26 -> 12.8, 580.65.06 -> 13.0, 580.0 -> 12.9). nullopt below the
/// table's oldest row (450.36.06).
[[nodiscard]] std::optional<CudaVersion> cuda_ceiling_for_driver(const DriverVersion& driver);

/// The first driver of the newest CUDA release in the table: a newer driver's ceiling is assumed.
[[nodiscard]] std::optional<DriverVersion> newest_driver_in_table();

/// The minor-version-compatibility floor of a CUDA major: 11 -> 450.80.02, 12 -> 525.60.13,
/// 13 -> 580; nullopt for a major without one in the table.
[[nodiscard]] std::optional<DriverVersion> minor_compat_floor(std::uint32_t cuda_major);

/// The minimum driver a build for CUDA `cuda` needs. Strict: the GA minimum of `cuda`, or of the
/// next CUDA the table has within the same major (12.7 -> 12.8's 570.26). Minor: the lower of
/// that and the major's minor-compatibility floor (12.8 -> 525.60.13). nullopt when unknown.
[[nodiscard]] std::optional<DriverVersion> min_driver_for_cuda(CudaVersion cuda, CudaCompat compat);

/// Does a driver with CUDA ceiling `ceiling` run a build for CUDA `needed`? Strict:
/// needed <= ceiling. Minor: needed.major <= ceiling.major (a ceiling of 12.x means the driver
/// is at or above the 12.x floor; PTX JIT of newer PTX is not available then).
[[nodiscard]] bool ceiling_allows(CudaVersion ceiling, CudaVersion needed,
                                  CudaCompat compat) noexcept;

}  // namespace gpulock::gpu

#pragma once
/// @file
/// What a lock records of each wheel's files (issue 44 item 1): per wheel file name, under
/// `[packages.tool.gpulock.files."<wheel file name>"]` (PEP 751's `[[packages.wheels]]` entries
/// have no `tool` table of their own, so the package's holds them, keyed by file name):
///
///     [packages.tool.gpulock.files."nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl"]
///     members = 31
///     members-sha256 = "5d1f..."
///     shared-libraries = ["nvidia/cudnn/lib/libcudnn.so.9", ...]
///     missing-libraries = ["libcudnn_engines_tensor_ir.so.9"]   # only for a wheel with a hazard
///
/// `members-sha256` is index::members_digest over (path, uncompressed size, CRC-32) of every
/// file in the wheel's zip; `shared-libraries` the members whose file name is `lib*.so*`. Both
/// come from the zip's central directory, read at lock time. Stored in Package::tool (the raw
/// table, so keys of a newer writer are kept); these functions are its typed view.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/lock/lock.h"

namespace gpulock::lock {

/// One wheel's record.
struct WheelFiles {
  std::uint64_t members = 0;   ///< how many files the wheel holds (directories not counted)
  std::string members_sha256;  ///< 64 lowercase hex digits
  std::vector<std::string> shared_libraries;  ///< member paths, sorted bytewise
  /// Issue 44: sonames the wheel's own libraries load by name that it does not ship
  /// (gpu::wheel_hazards), recorded when it was locked anyway (pinned exactly); the loader takes
  /// another copy on the machine for them. Written only when not empty.
  std::vector<std::string> missing_libraries;
  /// Issue 44: the rules between wheels this wheel's set breaks (two wheels writing one path, an
  /// nvJitLink older than the CUDA a library links), recorded when `--allow-incomplete` locked
  /// it anyway; one sentence each. Written only when not empty.
  std::vector<std::string> conflicts;
  friend bool operator==(const WheelFiles&, const WheelFiles&) = default;
};

/// Wheel file name -> its record.
using WheelFilesMap = std::map<std::string, WheelFiles, std::less<>>;

/// The package's records. A package without any has none (an empty map). Errors:
/// InvalidLockfile naming the package, the wheel and the key: a record that is not a table, a
/// `members` that is not a non-negative integer, a `members-sha256` that is not 64 lowercase hex
/// digits, a shared library that is not a relative '/'-separated path without `..`, a missing
/// library that is not a file name (no '/'), a conflict that is not a non-empty string, and a
/// record
/// for a file name that none of the package's wheels (or its archive) has.
[[nodiscard]] core::Result<WheelFilesMap> wheel_files(const Package& package);

/// Sets the record of `filename` (replacing one there), creating the tables it needs.
void set_wheel_files(Package& package, std::string_view filename, const WheelFiles& files);

}  // namespace gpulock::lock

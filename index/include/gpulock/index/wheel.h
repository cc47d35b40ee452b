#pragma once
/// @file
/// Reading `*.dist-info/METADATA` out of a wheel (PEP 427 §The .dist-info directory) with libzip,
/// with the checks every METADATA source gets (local wheel, range reads, full download,
/// PEP 658 `.metadata` file).

#include <cstdint>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/core/filename.h"

namespace gpulock::index {

/// Larger METADATA is refused (real ones are a few KB; torch's is ~50 KB).
inline constexpr std::uint64_t kMaxMetadataBytes = 10u * 1024u * 1024u;

/// The METADATA of a local wheel. `display` names the wheel in errors (a path or a redacted URL;
/// defaults to `path`). Errors: Io (cannot open), InvalidInput (not a zip, no
/// `.dist-info/METADATA`, METADATA over kMaxMetadataBytes, a zip bomb: an entry declaring a
/// size far beyond what its compressed bytes can hold), InvalidMetadata (Name/Version differ
/// from the filename, when `expected` is given).
[[nodiscard]] core::Result<std::string> read_wheel_metadata(
    const std::string& path, const core::WheelFilename* expected = nullptr,
    std::string_view display = {});

/// Checks that METADATA's `Name` and `Version` headers match the wheel filename (names compared
/// after PEP 503 normalization, versions as PEP 440 versions; a METADATA version equal to the
/// filename's public version is accepted when the filename adds a local label, as flash-attn and
/// PyG wheels do). `where` names the source in the error (InvalidMetadata).
[[nodiscard]] core::Status check_metadata_matches(std::string_view metadata,
                                                  const core::WheelFilename& wheel,
                                                  std::string_view where);

}  // namespace gpulock::index

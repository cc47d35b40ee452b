#pragma once
/// @file
/// Reading `*.dist-info/METADATA` out of a wheel (PEP 427 §The .dist-info directory) with libzip,
/// with the checks every METADATA source gets (local wheel, range reads, full download,
/// PEP 658 `.metadata` file).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

/// One file unpacked from a wheel (unpack_wheel).
struct UnpackedFile {
  std::string path;         ///< the archive name, '/'-separated, relative to the destination
  std::uint64_t size = 0;   ///< the bytes written (not the size the zip declares)
  bool executable = false;  ///< the entry's Unix mode has an execute bit (pip gives it +x)
};

/// Unpacks every file of the wheel at `path` into the directory `dest` (created; it should be
/// empty), as pip does (PEP 427 §Installing a wheel, step 1: the archive's tree as it is): a
/// file with an execute bit in its Unix mode gets 0777 minus the umask, others 0666 minus the
/// umask; directory entries only create directories. Errors: Io (cannot open, cannot write under
/// `dest`), InvalidInput (not a zip; an entry whose name is absolute, has a `..` component, a
/// backslash or a NUL; a zip bomb: an entry that declares or inflates beyond what its compressed
/// bytes can hold). `display` names the wheel in errors (defaults to `path`).
[[nodiscard]] core::Result<std::vector<UnpackedFile>> unpack_wheel(const std::string& path,
                                                                   const std::string& dest,
                                                                   std::string_view display = {});

/// Checks that METADATA's `Name` and `Version` headers match the wheel filename (names compared
/// after PEP 503 normalization, versions as PEP 440 versions; a METADATA version equal to the
/// filename's public version is accepted when the filename adds a local label, as flash-attn and
/// PyG wheels do). `where` names the source in the error (InvalidMetadata).
[[nodiscard]] core::Status check_metadata_matches(std::string_view metadata,
                                                  const core::WheelFilename& wheel,
                                                  std::string_view where);

}  // namespace gpulock::index

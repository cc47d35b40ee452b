#pragma once
/// @file
/// Atomic replacement of a file: the new content is written to a temporary file in the same
/// directory, flushed to disk (fsync), renamed over the target, and the directory is fsynced.
/// A reader sees the old file or the new one, never a torn one; on any error the old file is
/// untouched and the temporary file removed. The one writer of lock files, exports and cache
/// entries.

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::sys {

struct AtomicWriteOptions {
  /// Create the missing directories above the file first (a cache bucket).
  bool create_directories = false;
  /// Called with the temporary file's path once it exists (`true`) and once it is gone or
  /// renamed (`false`): the index cache registers it for removal on a forced exit.
  std::function<void(const std::string& temp_path, bool exists)> on_temp_file;
};

/// Replaces `path` with `content`. A new file gets mode 0666 minus the umask; an existing file
/// keeps its mode. Errors: Io, naming the file and the system error (e.g. permission denied,
/// EFBIG under a file-size limit, ENOSPC).
[[nodiscard]] core::Status write_file_atomically(const std::filesystem::path& path,
                                                 std::string_view content,
                                                 const AtomicWriteOptions& options = {});

}  // namespace gpulock::sys

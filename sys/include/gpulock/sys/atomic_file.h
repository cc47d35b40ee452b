#pragma once
/// @file
/// Atomic replacement of a file: the new content is written to a temporary file in the same
/// directory, flushed to disk (fsync; AtomicWriteOptions::durable), renamed over the target, and
/// the directory is fsynced.
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
  /// Flush the content and the rename to disk (fsync), so that the new file survives a power
  /// loss. Off for files whose content is checked on every read (the index cache's checksummed
  /// entries): after a crash such a file may be empty or torn, and is then read as missing,
  /// which costs a fetch; an fsync costs each write a disk round trip (a fifth of a cold
  /// multi-target resolve's time).
  bool durable = true;
  /// First remove the temporaries of this file that writers killed before their rename left
  /// (kill -9): same file name, owned by this user, a regular file older than this process (by over
  /// 2 s: timestamps are coarse), whose PID names no process (kill(pid, 0) fails with ESRCH). Never
  /// one of a live process; best effort (what cannot be removed stays). For lock files, which a
  /// user sees beside their project; a writer in another PID namespace sharing the directory would
  /// look dead.
  bool remove_stale_temporaries = false;
};

/// Replaces `path` with `content`. A new file gets mode 0666 minus the umask; an existing file
/// keeps its mode. Errors: Io, naming the file and the system error (e.g. permission denied,
/// EFBIG under a file-size limit, ENOSPC).
[[nodiscard]] core::Status write_file_atomically(const std::filesystem::path& path,
                                                 std::string_view content,
                                                 const AtomicWriteOptions& options = {});

}  // namespace gpulock::sys

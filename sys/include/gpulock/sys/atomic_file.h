#pragma once
/// @file
/// Atomic replacement of a file: the new content is written to a temporary file in the same
/// directory, flushed to disk (fsync; AtomicWriteOptions::durable), renamed over the target, and
/// the directory is fsynced. AtomicFileWriter writes such a file piece by piece (a large cache
/// entry, encoded as it is written); write_file_atomically writes one string with it.
/// A reader sees the old file or the new one, never a torn one; on any error the old file is
/// untouched and the temporary file removed. The one writer of lock files, exports and cache
/// entries.

#include <cstdint>
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

/// One atomic replacement of `path`, written in pieces: open() creates the temporary file (and,
/// with the options, the directory; an existing file's mode is copied to it), write() appends,
/// write_at() overwrites bytes already written (a header filled in last), commit() flushes and
/// renames it over `path`. Until commit() succeeds `path` is untouched; a writer destroyed
/// without a commit, or whose commit failed, removes its temporary file. Errors: Io, as
/// write_file_atomically's. Movable, not copyable; not thread-safe.
class AtomicFileWriter {
 public:
  [[nodiscard]] static core::Result<AtomicFileWriter> open(const std::filesystem::path& path,
                                                           const AtomicWriteOptions& options = {});

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  /// Appends `data` (all of it: short writes and EINTR are retried).
  [[nodiscard]] core::Status write(std::string_view data);
  /// Writes `data` at `offset` (pwrite: the next write() still appends after the last one).
  /// Meant for bytes already written; past the end it leaves a hole, as pwrite does.
  [[nodiscard]] core::Status write_at(std::uint64_t offset, std::string_view data);
  /// Flushes the file (when durable), renames it over the target and flushes the directory (an
  /// error there comes after the rename: the new file is in place). Once called, successful or
  /// not, the writer is closed: further calls fail.
  [[nodiscard]] core::Status commit();

  /// The temporary file's path; empty once committed or discarded.
  [[nodiscard]] const std::string& temp_path() const noexcept { return temp_path_; }

 private:
  AtomicFileWriter() = default;
  // Closes the descriptor, removes the temporary file and reports it gone (no-op when closed).
  void discard() noexcept;
  [[nodiscard]] core::Status closed_error() const;

  std::filesystem::path path_;
  std::function<void(const std::string& temp_path, bool exists)> on_temp_file_;
  bool durable_ = true;
  std::string temp_path_;
  int fd_ = -1;
};

/// Replaces `path` with `content`. A new file gets mode 0666 minus the umask; an existing file
/// keeps its mode. Errors: Io, naming the file and the system error (e.g. permission denied,
/// EFBIG under a file-size limit, ENOSPC).
[[nodiscard]] core::Status write_file_atomically(const std::filesystem::path& path,
                                                 std::string_view content,
                                                 const AtomicWriteOptions& options = {});

}  // namespace gpulock::sys

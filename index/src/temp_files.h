#pragma once
// Temporary files in a cache: whole-wheel downloads live in <cache>/partial/ while they arrive.
// Each process owns its files through a lock file, <dir>/<owner>.lock (owner "<pid>-<nonce>"),
// held with flock() for as long as the process runs; its files are named "<owner>.<tag>-XXXXXX".
// The first temporary file a process makes in a directory also removes what killed runs left
// there (SIGKILL): the files of an owner whose lock is free (the owner is gone, whatever pid
// namespace it ran in), and files of ours with no lock file at all once older than a day. A run
// never removes a file whose owner still holds its lock, so concurrent runs sharing a cache are
// safe. Every file made here, and every path registered, is removed by
// index::remove_temporary_files() before a forced exit.

#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::index::detail {

/// An open temporary file, closed and removed when destroyed.
class TempFile {
 public:
  TempFile() = default;
  TempFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  ~TempFile();
  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

/// A new temporary file in `dir` (created when missing), tagged `tag` ("wheel"). Io error naming
/// the directory when it cannot be made.
core::Result<TempFile> make_temp_file(const std::string& dir, std::string_view tag);

/// Files that index::remove_temporary_files() removes (a cache entry being written).
void register_temp_path(const std::string& path);
void unregister_temp_path(const std::string& path);

/// Removes stale files from `dir` as described above; returns how many were removed. Exposed
/// for tests; make_temp_file calls it once per directory and process.
int remove_stale_temp_files(const std::string& dir);

/// `<cache>/tmp/`, where versions before partial/ downloaded wheels (`wheel-XXXXXX`, no owner
/// lock): the same rules as remove_stale_temp_files, and since nothing there has an owner, an
/// entry goes once older than a day (a run of an old version may still be writing a young one);
/// the directory goes when empty. Returns how many files were removed.
int remove_stale_legacy_temp_files(const std::string& dir);

/// The lock file's owner name of this process ("<pid>-<nonce>").
const std::string& temp_owner();

}  // namespace gpulock::index::detail

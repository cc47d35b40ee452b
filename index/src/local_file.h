#pragma once
// Local files the index module reads for a caller (file:// wheels and pages, a lock's `path`,
// a mirror's store): regular files only. A FIFO would block the open or the read forever, a
// device such as /dev/zero never ends, a directory is no file: each is refused, naming the path.
#include <cstdint>
#include <string>

#include "gpulock/core/error.h"

namespace gpulock::index::detail {

/// An open, regular, local file; closed on destruction.
class LocalFile {
 public:
  LocalFile() = default;
  ~LocalFile();
  LocalFile(const LocalFile&) = delete;
  LocalFile& operator=(const LocalFile&) = delete;

  /// Opens `path` read-only (O_NONBLOCK, so that a FIFO without a writer does not block the
  /// open; O_CLOEXEC) and refuses what `fstat` says is not a regular file. Errors: Io naming the
  /// path.
  [[nodiscard]] core::Status open(const std::string& path);
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// The size `fstat` gave at open (a file may still grow: readers bound what they read).
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

/// Io "not a regular file" unless `path` is one (after symlinks): for readers that hand the
/// path to a library that opens it itself (libzip). Errors: Io naming the path.
[[nodiscard]] core::Status require_regular_file(const std::string& path);

}  // namespace gpulock::index::detail

#pragma once
/// @file
/// Putting a file from a cache into an environment (issue 25, `gpulock install --link-mode`, as
/// in uv): a hard link, a reflink (copy-on-write clone), a symbolic link, or a copy. A hard link
/// or a clone that the file system refuses (another device, no reflink support, too many links)
/// falls back to a copy; the mode used is returned.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::sys {

enum class LinkMode { Hardlink, Clone, Copy, Symlink };

/// "hardlink", "clone", "copy", "symlink"; nullopt otherwise.
[[nodiscard]] std::optional<LinkMode> parse_link_mode(std::string_view text);
[[nodiscard]] std::string_view link_mode_name(LinkMode mode);

/// Makes `to` (which must not exist; its directory must) a link to or copy of `from`, a regular
/// file. A copy keeps `from`'s permission bits. Returns the mode used (Copy after a fallback).
/// Errors: Io naming `to` (or `from` when it cannot be read) and the system error.
[[nodiscard]] core::Result<LinkMode> link_file(const std::filesystem::path& from,
                                               const std::filesystem::path& to, LinkMode mode);

/// link_file for many files in few directories (a wheel's): the directories of the last `from`
/// and `to` are kept open (O_PATH), and a hard link between the same two directories as the one
/// before is made with linkat on their descriptors, so that the kernel resolves one name on each
/// side instead of both whole paths (a torch's 12,000 files). Anything else, and a hard link the
/// file system refuses, goes to link_file. A directory replaced while it is held is not followed:
/// the links go on into the one that was opened.
class LinkDirs {
 public:
  LinkDirs() = default;
  LinkDirs(const LinkDirs&) = delete;
  LinkDirs& operator=(const LinkDirs&) = delete;
  ~LinkDirs();
  /// As link_file(from, to, mode).
  [[nodiscard]] core::Result<LinkMode> link(const std::filesystem::path& from,
                                            const std::filesystem::path& to, LinkMode mode);

 private:
  struct Dir {
    std::string path;
    int fd = -1;
  };
  static int open_dir(Dir& dir, std::string_view path);
  Dir from_, to_;
};

/// Copies the regular file `from` to the new file `to`, keeping its permission bits (the kernel
/// copies in place where it can: copy_file_range). Errors: Io.
[[nodiscard]] core::Status copy_file(const std::filesystem::path& from,
                                     const std::filesystem::path& to);

}  // namespace gpulock::sys

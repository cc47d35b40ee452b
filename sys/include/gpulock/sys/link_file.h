#pragma once
/// @file
/// Putting a file from a cache into an environment (issue 25, `gpulock install --link-mode`, as
/// in uv): a hard link, a reflink (copy-on-write clone), a symbolic link, or a copy. A hard link
/// or a clone that the file system refuses (another device, no reflink support, too many links)
/// falls back to a copy; the mode used is returned.
#include <filesystem>
#include <optional>
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

/// Copies the regular file `from` to the new file `to`, keeping its permission bits (the kernel
/// copies in place where it can: copy_file_range). Errors: Io.
[[nodiscard]] core::Status copy_file(const std::filesystem::path& from,
                                     const std::filesystem::path& to);

}  // namespace gpulock::sys

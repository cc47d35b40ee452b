#pragma once
/// @file
/// A wheel's member list, read from its zip central directory (PKWARE APPNOTE 6.3.x §4.3.12,
/// §4.3.14-16) without reading any member's data: for each file its path, uncompressed size and
/// CRC-32 (issue 44 item 1). Remote wheels are read by HTTP range requests of the zip's tail
/// (IndexClient::wheel_members), local ones from the file.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::index {

/// One file of a wheel, as its central directory header declares it.
struct WheelMember {
  std::string path;         ///< the archive name, '/'-separated, as stored (no NUL)
  std::uint64_t size = 0;   ///< uncompressed size (the zip64 extra field's when present)
  std::uint32_t crc32 = 0;  ///< CRC-32 of the uncompressed bytes (APPNOTE §4.4.7)

  friend bool operator==(const WheelMember&, const WheelMember&) = default;
};

/// What a wheel's central directory says about its files.
struct WheelMembers {
  /// In central-directory order. Directory entries (names ending in '/') are left out: unpacking
  /// a wheel writes no file for them (pip, index::unpack_wheel).
  std::vector<WheelMember> members;
  /// members_digest(members): lowercase hex sha256.
  std::string digest;
  /// The paths of the members whose file name matches `lib*.so` or `lib*.so.*`
  /// (is_shared_library), sorted bytewise. For NVIDIA's wheels the file name is the soname
  /// (../shared/data/wheel-contents.md §0.1).
  std::vector<std::string> shared_libraries;

  friend bool operator==(const WheelMembers&, const WheelMembers&) = default;
};

/// SHA-256 (lowercase hex) over the members sorted by path (bytewise; equal paths keep their
/// central-directory order), each written as `path NUL size NUL crc32 LF` with the size in
/// decimal and the CRC-32 as 8 lowercase hex digits: independent of the order a zip writer chose,
/// the same for two wheels that unpack to the same bytes at the same paths.
[[nodiscard]] std::string members_digest(std::span<const WheelMember> members);

/// Whether the file name (the part after the last '/') of `path` matches the glob `lib*.so` or
/// `lib*.so.*`: `libcudnn_graph.so.9`, `libnvrtc-builtins.so.13.3`, `libtorch.so`.
[[nodiscard]] bool is_shared_library(std::string_view path) noexcept;

/// Where the installer puts a wheel member, relative to site-packages: the path itself, or for
/// `<name>.data/purelib/` and `<name>.data/platlib/` the rest of it; empty for a member that
/// lands outside site-packages (the other `.data/` directories: scripts, headers, data).
[[nodiscard]] std::string site_path_of_member(std::string_view member);

/// The members with their digest and shared libraries filled in.
[[nodiscard]] WheelMembers make_wheel_members(std::vector<WheelMember> members);

/// Which wheel IndexClient::wheel_members reads.
struct WheelRef {
  /// http(s):// or file:// (an absolute path is read as a local file too). Credentials in the
  /// URL are used for the requests and never shown; a `#fragment` is ignored.
  std::string url;
  /// The file's size when the index or lock gives it (PEP 700): sizes the first range read and
  /// is checked against the server's; the cache key when there is no sha256.
  std::optional<std::uint64_t> size;
  /// The file's sha256 (lowercase hex) when known: the cache key.
  std::string sha256;
};

/// The member list of the local wheel at `path`, read from its tail (64 MiB of reads at most,
/// whatever the directory claims). `display` names it in errors (defaults to `path`). Errors: Io
/// (cannot open or read; not a regular file), InvalidInput (not a zip, a central directory that
/// lies about its place, size or entry count, a name with a NUL), IndexFormat (a central directory
/// over the bound).
[[nodiscard]] core::Result<WheelMembers> read_wheel_members(const std::string& path,
                                                            std::string_view display = {});

}  // namespace gpulock::index

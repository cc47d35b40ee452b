#pragma once
/// @file
/// The shared cache of unpacked wheels (issue 25): `<cache dir>/wheels-v1/<sha256>/`, the
/// archive's tree as it is, keyed by the wheel's sha256 (the lock's). A wheel is downloaded
/// (resumably, index::IndexClient::download_file) or read from a file:// URL, its sha256
/// compared with the lock's before anything of it is unpacked, unpacked into a unique
/// temporary directory beside the entry (locked while it is filled) and renamed into place.
/// Every use checks the entry against its manifest (kEntryManifest) first: an entry that was
/// pruned half way, torn, or edited through a hard link is unpacked again.
/// Environments link their files from here (install/wheel_install.h).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/index/wheel_members.h"

namespace gpulock::install {

/// `<cache_dir>/wheels-v1` (cache_dir empty: index::default_cache_dir()).
[[nodiscard]] std::filesystem::path wheel_cache_root(const std::string& cache_dir);

struct CachedWheelRequest {
  std::string url;     ///< http(s) or file://
  std::string sha256;  ///< the lock's, lowercase hex
  std::optional<std::uint64_t> size;
  std::string filename;  ///< for messages
  /// The lock's members-sha256 for this wheel (lock/wheel_files.h); empty: none recorded. A
  /// wheel read whole whose central directory gives another digest is refused: its sha256 is the
  /// lock's, so the lock's record of its files was changed.
  std::string members_sha256;
  std::function<void(std::uint64_t)> on_bytes;  ///< bytes received so far (any thread)
};

/// Each entry's own record, written when it is published: one "path\tsize\tmtime_ns" line per
/// file (its files are made read-only first: 0444, 0555 when executable).
inline constexpr std::string_view kEntryManifest = ".gpulock-entry";

/// An entry's manifest by archive path: each file's size and mtime (ns); nullopt when the
/// entry has none or it cannot be read.
using EntryManifest = std::unordered_map<std::string, std::pair<std::uint64_t, std::int64_t>>;
[[nodiscard]] std::optional<EntryManifest> read_entry_manifest(const std::filesystem::path& dir);

/// An entry against its manifest: every file there, regular, with the recorded size and mtime,
/// and no other file. Empty: it checks out; else what differs.
[[nodiscard]] std::string verify_cache_entry(const std::filesystem::path& dir);

struct CachedWheel {
  std::filesystem::path dir;  ///< the unpacked tree
  bool hit = false;           ///< it was there already, and checked out
  /// Non-empty: an entry was there but did not check out (verify_cache_entry): unpacked again.
  std::string stale;
  /// A shared lock on the entry while this is alive: prune and discard leave it alone.
  std::shared_ptr<void> hold;
  bool downloaded = false;  ///< fetched over the network (not a file:// URL)
  std::uint64_t bytes = 0;  ///< downloaded bytes
};

/// The unpacked tree of the wheel, fetching and unpacking it when the cache lacks it. Errors:
/// HashMismatch (the file's sha256 is not the lock's; nothing is kept of it), the client's
/// errors, unpack_wheel's (InvalidInput, Io), Io (the cache cannot be written).
[[nodiscard]] core::Result<CachedWheel> cached_wheel(index::IndexClient& client,
                                                     const std::filesystem::path& root,
                                                     const CachedWheelRequest& request);

/// The files of the wheel whose sha256 is `sha256`, from its entry under `root` when there is
/// one that checks out (verify_cache_entry): each file's archive path and size, as its manifest
/// records them (CRC-32 0: not known). nullopt when there is no such entry. For `check --env`
/// where the wheel's member list is not in the index cache.
[[nodiscard]] std::optional<std::vector<index::WheelMember>> cached_wheel_files(
    const std::filesystem::path& root, const std::string& sha256);

/// Throws away a cache entry (a file in it was found modified through a link).
void discard_cached_wheel(const std::filesystem::path& root, const std::string& sha256);

struct PruneResult {
  std::size_t entries = 0;    ///< unpacked wheels removed
  std::size_t leftovers = 0;  ///< temporary directories and partial downloads removed
  std::size_t in_use = 0;     ///< left alone: a live run holds them
  std::uint64_t bytes = 0;
};

/// `gpulock cache prune`: removes interrupted unpackings and partial downloads, and unpacked
/// wheels not used (installed from) for `unused_days` days; all of them with `all`.
/// Environments keep working (their files are hard links or copies), except those installed
/// with `--link-mode symlink`. Errors: Io.
[[nodiscard]] core::Result<PruneResult> prune_wheel_cache(const std::filesystem::path& root,
                                                          unsigned unused_days, bool all);

}  // namespace gpulock::install

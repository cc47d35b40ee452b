#pragma once
/// @file
/// The shared cache of unpacked wheels (issue 25): `<cache dir>/wheels-v1/<sha256>/`, the
/// archive's tree as it is, keyed by the wheel's sha256 (the lock's). A wheel is downloaded
/// (resumably, index::IndexClient::download_file) or read from a file:// URL, its sha256
/// compared with the lock's before anything of it is unpacked, unpacked into a temporary
/// directory beside the entry and renamed into place: an entry that exists is complete.
/// Environments link their files from here (app/wheel_install.h).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "gpulock/core/error.h"
#include "gpulock/index/client.h"

namespace gpulock::app {

/// `<cache_dir>/wheels-v1` (cache_dir empty: index::default_cache_dir()).
[[nodiscard]] std::filesystem::path wheel_cache_root(const std::string& cache_dir);

struct CachedWheelRequest {
  std::string url;     ///< http(s) or file://
  std::string sha256;  ///< the lock's, lowercase hex
  std::optional<std::uint64_t> size;
  std::string filename;                         ///< for messages
  std::function<void(std::uint64_t)> on_bytes;  ///< bytes received so far (any thread)
};

struct CachedWheel {
  std::filesystem::path dir;  ///< the unpacked tree
  bool hit = false;           ///< it was there already
  bool downloaded = false;    ///< fetched over the network (not a file:// URL)
  std::uint64_t bytes = 0;    ///< downloaded bytes
};

/// The unpacked tree of the wheel, fetching and unpacking it when the cache lacks it. Errors:
/// HashMismatch (the file's sha256 is not the lock's; nothing is kept of it), the client's
/// errors, unpack_wheel's (InvalidInput, Io), Io (the cache cannot be written).
[[nodiscard]] core::Result<CachedWheel> cached_wheel(index::IndexClient& client,
                                                     const std::filesystem::path& root,
                                                     const CachedWheelRequest& request);

/// Throws away a cache entry (a file in it was found modified through a link).
void discard_cached_wheel(const std::filesystem::path& root, const std::string& sha256);

struct PruneResult {
  std::size_t entries = 0;    ///< unpacked wheels removed
  std::size_t leftovers = 0;  ///< temporary directories and partial downloads removed
  std::uint64_t bytes = 0;
};

/// `gpulock cache prune`: removes interrupted unpackings and partial downloads, and unpacked
/// wheels not used (installed from) for `unused_days` days; all of them with `all`.
/// Environments keep working (their files are hard links or copies), except those installed
/// with `--link-mode symlink`. Errors: Io.
[[nodiscard]] core::Result<PruneResult> prune_wheel_cache(const std::filesystem::path& root,
                                                          unsigned unused_days, bool all);

}  // namespace gpulock::app

#pragma once
/// @file
/// `gpulock mirror` (issue 24, "Durable locks"): a directory that keeps every file some locks
/// name, served as a static package index by any web server or object store.
///
/// Layout of a mirror DIR (docs/commands/mirror.md; a public contract):
///   DIR/files/sha256/<h[0:2]>/<h>/<file name>            each file once, content-addressed
///   DIR/files/sha256/<h[0:2]>/<h>/<file name>.metadata   its METADATA (PEP 658/714), wheels
///   DIR/simple/index.html|json, DIR/simple/<project>/index.html|json   PEP 503 + PEP 691
///   DIR/whl/<variant>/..., DIR/whl/nightly/<variant>/...   the locks' torch-family indexes
///   DIR/manifest.toml                                     which lock, package, file, hash, when
/// Every link is relative, so the tree can be moved or uploaded unchanged. A file enters the
/// store only after its sha256 matched the lock's, by an atomic rename; pages and the manifest
/// are written atomically. The manifest is the tree's source: the pages are rewritten from it.
/// The store is never trusted: `mirror add` re-hashes what it finds there and fetches again what
/// is not the lock's bytes, and derives each `.metadata` from its wheel. Runs that change a
/// mirror (add, gc) take DIR/.gpulock-mirror.lock (flock), so two of them wait for each other.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/index/client.h"

namespace gpulock::app {

/// `files/sha256/<h[0:2]>/<h>/<filename>`: where the store keeps a file, relative to DIR.
[[nodiscard]] std::string mirror_store_path(std::string_view sha256, std::string_view filename);

/// The URL of a file in the mirror at `location` (an http(s)/file URL, or a directory, made a
/// file:// URL): `<location>/files/sha256/...`, the file name percent-encoded.
[[nodiscard]] std::string mirror_file_url(std::string_view location, std::string_view sha256,
                                          std::string_view filename);

/// Whether the mirror at `location` (a directory, or a URL asked with a one-byte request) has
/// the file with this sha256 and name (`check --index --mirror`). Errors: Network, Timeout,
/// Offline, Cancelled.
[[nodiscard]] core::Result<bool> mirror_has_file(index::IndexClient& client,
                                                 std::string_view location, std::string_view sha256,
                                                 std::string_view filename);

/// `check --index --mirror LOC`: what to say about a file pruned upstream. "present in the
/// mirror LOC" with the install command that uses it, or "not in the mirror LOC" with the
/// `gpulock mirror add` that would have kept it; a mirror that cannot be asked says so.
[[nodiscard]] std::string mirror_pruned_note(index::IndexClient& client, std::string_view location,
                                             std::string_view lock_path, std::string_view sha256,
                                             std::string_view filename);

/// One (lock, file) pair of the manifest.
struct MirrorEntry {
  std::string lock;     ///< the lock's path as given to `mirror add`
  std::string project;  ///< PEP 503 normalized
  std::string version;
  std::string filename;
  std::string sha256;
  std::string url;   ///< the file's URL in the lock when it was mirrored
  std::string tree;  ///< "simple", "whl/cu126", "whl/nightly/cpu"
  std::uint64_t size = 0;
  std::string upload_time;      ///< RFC 3339 UTC, empty when the lock records none
  std::string requires_python;  ///< the lock package's, empty when none
  std::string metadata_sha256;  ///< of the `.metadata` file; empty for non-wheels
  std::string mirrored;         ///< when it was added, RFC 3339 UTC
};

struct MirrorManifest {
  std::vector<MirrorEntry> entries;
};

/// Reads DIR/manifest.toml; a directory without one is an empty mirror. Errors: Io,
/// InvalidInput (a malformed manifest, naming it).
[[nodiscard]] core::Result<MirrorManifest> read_mirror_manifest(const std::string& dir);
/// Writes DIR/manifest.toml atomically (entries sorted). Errors: Io.
[[nodiscard]] core::Status write_mirror_manifest(const std::string& dir,
                                                 const MirrorManifest& manifest);
/// Rewrites the simple and torch-family trees from the manifest, removing pages of projects
/// no entry names. Errors: Io.
[[nodiscard]] core::Status write_mirror_tree(const std::string& dir,
                                             const MirrorManifest& manifest);

struct MirrorProgress {
  std::size_t files_done = 0;
  std::size_t files_total = 0;
  std::uint64_t bytes = 0;  ///< received in this run so far
};

struct MirrorAddRequest {
  std::vector<std::string> locks;  ///< pylock.toml files (every target's)
  std::string dir;                 ///< the mirror (created or extended)
  index::ClientOptions client;     ///< its cache_dir holds partial/; offline: check only
  unsigned jobs = 8;               ///< downloads in parallel
  /// Called from worker threads (serialized) as files finish and bytes arrive. May be empty.
  std::function<void(const MirrorProgress&)> on_progress;
  /// Called once when another gpulock holds the mirror and this run waits for it. May be empty.
  std::function<void(const std::string& lock_file)> on_wait;
};

struct MirrorAddResult {
  std::size_t files = 0;       ///< distinct files the locks name
  std::size_t present = 0;     ///< already in the store
  std::size_t downloaded = 0;  ///< fetched in this run
  std::size_t resumed = 0;     ///< of those, continued from a partial file
  std::size_t replaced = 0;    ///< stored files that were not the lock's bytes, fetched again
  std::size_t leftovers = 0;   ///< partial writes removed from the store
  std::uint64_t bytes_received = 0;
  /// --offline: "<file> (<lock>)" not in the store (or there with other bytes than the lock's)
  std::vector<std::string> missing;
  std::vector<std::string> skipped;  ///< entries without a URL or sha256 (local paths, ...)
};

/// `gpulock mirror add`. Errors: InvalidLockfile / Io (a lock), HashMismatch naming the URL
/// (nothing enters the store), the download's errors (NotFound, Http, Network, ...), Io (also:
/// another gpulock held the mirror for longer than the wait allows).
[[nodiscard]] core::Result<MirrorAddResult> mirror_add(const MirrorAddRequest& request);

struct MirrorVerifyResult {
  std::size_t checked = 0;
  std::vector<std::string> corrupt;  ///< store paths whose bytes do not hash to their name
  std::vector<std::string> missing;  ///< store paths the manifest names that are not there
  /// Partial writes left in the store (`*.part`, temporary files): mirror add and gc remove them.
  std::vector<std::string> leftovers;
};
/// `gpulock mirror verify`: re-hashes every file of the store. Errors: Io, the manifest's.
[[nodiscard]] core::Result<MirrorVerifyResult> mirror_verify(const std::string& dir);

struct MirrorGcResult {
  std::size_t kept = 0;
  std::vector<std::string> removed;  ///< store paths removed (leftover partial writes too)
  std::uint64_t bytes_freed = 0;
};
/// `gpulock mirror gc`: keeps the files the `keep` locks name, removes every other file of
/// the store (and its manifest entries), rewrites the trees. Errors: a lock's, Io.
[[nodiscard]] core::Result<MirrorGcResult> mirror_gc(
    const std::string& dir, const std::vector<std::string>& keep,
    const std::function<void(const std::string& lock_file)>& on_wait = {});

/// `gpulock mirror rewrite-lock`: every file URL of the lock pointed at the mirror at
/// `base_url` (hashes unchanged), written atomically. Returns the number of URLs changed.
/// Errors: the lock's, Io.
[[nodiscard]] core::Result<std::size_t> mirror_rewrite_lock(const std::string& lock,
                                                            const std::string& base_url);

}  // namespace gpulock::app

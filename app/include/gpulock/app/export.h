#pragma once
/// @file
/// `gpulock export --urls` (DESIGN.md §Commands; issue 5): which locked packages must be written
/// as direct URLs (`name @ URL` with the file's hash, PEP 440 "Direct references" / PEP 508)
/// because no index pip is given lists their file any more.
///
/// pip resolves `name==version` in a requirements file only through the indexes it is given; a
/// lock's indexes are those its packages were locked from (PEP 751 `packages.index`). So each
/// package's own index is asked for its project page (PEP 503 / PEP 691), as it is now (cached
/// pages are revalidated; `offline` uses only the cache), and:
///  - the file a direct URL would install (lock::direct_url_file: the archive, the target's best
///    wheel, else the sdist) is listed there: index form, `name==version` + hashes;
///  - it is not listed any more (a pruned nightly), the project is gone from the index, or the
///    package has no `index` (or no `version`): direct-URL form.
/// When no target was given and some of a package's files are not listed, the package is put in
/// direct-URL form and lock::export_requirements then asks for a target (Usage) if it has several
/// wheels. Archive packages are direct URLs anyway and VCS / directory sources cannot be exported
/// (lock::export_requirements refuses them): neither is asked about.
///
/// Returns results; never prints.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/lock/export.h"
#include "gpulock/lock/lock.h"

namespace gpulock::app {

/// Why a package is exported as a direct URL.
enum class UnlistedReason : std::uint8_t {
  FileNotListed,  ///< its index still has the project but no longer lists the file (pruned)
  ProjectGone,    ///< its index no longer has the project at all
  NoIndex,        ///< the lock records no `index` for the package
  NoVersion,      ///< the lock records no `version`: `name==version` cannot be written
};

/// "file-not-listed", "project-gone", "no-index", "no-version".
[[nodiscard]] std::string_view unlisted_reason_name(UnlistedReason reason) noexcept;

/// One package `gpulock export --urls` writes as a direct URL.
struct UnlistedPackage {
  std::string name;     ///< as in the lock
  std::string version;  ///< empty when the lock has none
  UnlistedReason reason = UnlistedReason::FileNotListed;
  std::string index;  ///< the index asked (credentials redacted); empty for NoIndex / NoVersion
  /// The locked files the index does not list (file names), for FileNotListed / ProjectGone.
  std::vector<std::string> missing_files;
  /// One line for the user, e.g. "torch 2.10.0.dev20251201+cu130: no longer listed on
  /// https://download.pytorch.org/whl/nightly/cu130/".
  std::string message;
};

struct UnlistedResult {
  /// Normalized names (PEP 503) for lock::ExportOptions::direct_url_packages.
  std::set<std::string, std::less<>> direct_url_packages;
  /// Why, per package, in the lock's order.
  std::vector<UnlistedPackage> packages;
  std::size_t packages_checked = 0;  ///< packages whose index was asked
  std::size_t indexes_asked = 0;     ///< distinct indexes asked
};

/// Asks each package's index whether it still lists the locked file (see the file comment).
/// `export_options.target_tags` chooses each package's wheel as lock::export_requirements would.
/// `client.refresh` is forced on (the index as it is now); `client.offline` uses only the cache.
/// Errors: the index client's (Network, Http, Auth, Timeout, IndexFormat, Offline, Io,
/// Cancelled), each naming the URL.
[[nodiscard]] core::Result<UnlistedResult> find_unlisted_packages(
    const lock::Lock& lock, const lock::ExportOptions& export_options,
    const index::ClientOptions& client);

}  // namespace gpulock::app

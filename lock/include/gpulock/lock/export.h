#pragma once
/// @file
/// Export of a lock as a pip requirements file with hashes (pip's "Secure installs" / hash-
/// checking mode: https://pip.pypa.io/en/stable/topics/secure-installs/), installable with
/// `pip install --no-deps --require-hashes -r FILE`.
///
/// Two forms per package:
/// - index form: `name==version ; marker` followed by one `--hash=algo:digest` per hash of every
///   wheel and sdist of the package (pip accepts whichever of these files it downloads);
/// - direct-URL form: `name @ URL ; marker` with the hashes of that one file, for files that no
///   pip-visible index lists (pruned nightlies) or for installing exactly the locked wheel.
///   When a package has several wheels, the one for the target (best-ranked tag) is chosen.

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/tags.h"
#include "gpulock/lock/lock.h"

namespace gpulock::lock {

struct ExportOptions {
  /// Every package in direct-URL form (`gpulock export --all-urls`).
  bool direct_urls = false;
  /// These packages (normalized names) in direct-URL form even when `direct_urls` is false
  /// (`gpulock export --urls`: those whose file their index no longer lists).
  std::set<std::string, std::less<>> direct_url_packages;
  /// The target's supported tags in priority order (core::supported_tags), used to choose the
  /// wheel of a package in direct-URL form. Without it a package with several wheels cannot be
  /// exported as a direct URL (error).
  std::optional<std::vector<core::Tag>> target_tags;
  /// The lock file's directory: relative `path` entries are resolved against it (file:// URLs).
  std::filesystem::path lock_dir = ".";
  /// Named in the header comment ("# exported by gpulock from pylock.toml"); empty: no header.
  std::string source_name = "pylock.toml";
};

/// The file `package` is installed from in direct-URL form: its archive, else its best wheel for
/// `options.target_tags` (PEP 425 tag priority), else its sdist; nullptr when no file fits (a
/// marker-limited package for other platforms). Errors: Usage when the package has several wheels
/// and `options.target_tags` is empty.
[[nodiscard]] core::Result<const FileEntry*> direct_url_file(const Package& package,
                                                             const ExportOptions& options);

/// The requirements text, in canonical package order, ending in a newline.
/// Errors: InvalidLockfile when a package cannot be expressed for pip with hashes (a VCS or
/// directory source; a file without a sha256/sha384/sha512 hash; a marker using PEP 751's
/// `extras`/`dependency_groups` variables); Usage when a direct URL needs a wheel choice and no
/// target was given, or no wheel fits the target and the package has no marker or sdist.
[[nodiscard]] core::Result<std::string> export_requirements(const Lock& lock,
                                                            const ExportOptions& options = {});

}  // namespace gpulock::lock

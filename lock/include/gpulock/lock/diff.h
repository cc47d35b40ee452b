#pragma once
/// @file
/// What changed between two locks (`gpulock diff OLD NEW`): packages added, removed, upgraded,
/// downgraded, re-hashed at the same version (a file with the same name and a different hash:
/// the index re-uploaded it, "rehashed upstream"), or otherwise changed; and changed facts of
/// the lock (requires-python, environments, target, GPU facts, snapshot, indexes, inputs).
///
/// Packages are matched by name and marker; when a name has exactly one unmatched entry on each
/// side, those two are matched (a marker change).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/lock/lock.h"

namespace gpulock::lock {

enum class PackageChangeKind { Added, Removed, Upgraded, Downgraded, Rehashed, Changed };

/// "added", "removed", "upgraded", "downgraded", "rehashed", "changed".
[[nodiscard]] std::string_view to_string(PackageChangeKind kind) noexcept;

/// A file present in both locks under the same name with different hashes.
struct RehashedFile {
  std::string filename;
  Hashes old_hashes;
  Hashes new_hashes;
  friend bool operator==(const RehashedFile&, const RehashedFile&) = default;
};

struct PackageChange {
  PackageChangeKind kind = PackageChangeKind::Changed;
  std::string name;
  std::optional<std::string> old_version;  ///< absent for Added (and for source trees)
  std::optional<std::string> new_version;  ///< absent for Removed
  std::optional<std::string> old_marker;
  std::optional<std::string> new_marker;
  /// Same version only: files whose hash changed, files only in NEW, files only in OLD.
  std::vector<RehashedFile> rehashed;
  std::vector<std::string> files_added;
  std::vector<std::string> files_removed;
  /// Same version only: other keys that differ, in a fixed order: "marker", "requires-python",
  /// "index", "source", "dependencies", "attestation-identities", "file-details" (url, path,
  /// size, upload-time of a file with the same name), "tool".
  std::vector<std::string> fields;
  friend bool operator==(const PackageChange&, const PackageChange&) = default;
};

/// A changed fact; values as text (lists joined with ", "), absent when not recorded.
/// Keys: "lock-version", "requires-python", "environments", "extras", "dependency-groups",
/// "default-groups", "target.python", "target.platform", "gpu.driver", "gpu.cuda-ceiling",
/// "gpu.method", "gpu.compat", "gpu.archs", "gpu.variant", "gpu.cuda", "gpu.cudnn",
/// "gpu.min-driver", "snapshot.exclude-newer", "snapshot.nightly", "indexes",
/// "inputs.requirements", "inputs.files", "inputs.extras", "inputs.groups", "inputs.options",
/// "inputs.sha256" (in that order). `created-by` and the header command are not facts.
struct FactChange {
  std::string key;
  std::optional<std::string> old_value;
  std::optional<std::string> new_value;
  /// For a fact that is a list (environments, extras, groups, gpu.archs, indexes, inputs.*):
  /// its entries on each side, the values above being these joined; both empty otherwise.
  std::vector<std::string> old_items;
  std::vector<std::string> new_items;
  bool is_list = false;
  friend bool operator==(const FactChange&, const FactChange&) = default;
};

struct LockDiff {
  std::vector<PackageChange> packages;  ///< in canonical package order of the name
  std::vector<FactChange> facts;
  [[nodiscard]] bool identical() const noexcept { return packages.empty() && facts.empty(); }
};

[[nodiscard]] LockDiff diff_locks(const Lock& old_lock, const Lock& new_lock);

}  // namespace gpulock::lock

#pragma once
/// @file
/// The native installer's plan (issue 25, install/installer.h): the environment becomes the lock.
/// What is missing is installed, what differs (version, local label, a file whose sha256 is
/// not its RECORD's) is replaced, what the lock does not name is removed (unless --no-remove;
/// the tool packages unless --exact; never with --system), what is already right is not
/// touched. Every wheel to install is fetched into the shared cache and its sha256 compared
/// with the lock's before the environment is changed at all (install/wheel_cache.h); then the
/// packages to replace or remove are removed by their RECORD and the new ones linked from the
/// cache (install/wheel_install.h).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::install {

/// The installers' own packages (pip, setuptools, wheel): kept by a sync when the lock does not
/// name them (unless --exact), and not drift for `check --env` (unless --strict).
[[nodiscard]] bool is_tool_package(std::string_view normalized_name);

enum class SyncAction { Install, Replace, Remove, Unchanged, Keep };

/// "install", "replace", "remove", "unchanged", "keep".
[[nodiscard]] std::string_view sync_action_name(SyncAction action);

struct SyncItem {
  SyncAction action = SyncAction::Install;
  std::string name;               ///< normalized
  std::string version;            ///< the lock's (empty for remove/keep)
  std::string installed_version;  ///< empty for install
  std::string reason;      ///< replace: why ("2.9.0+cu126 -> 2.9.0+cu130", "a file differs"); keep
  std::uint64_t size = 0;  ///< install/replace: the wheel's size; remove: installed bytes
  // Install / replace: the file and where it comes from.
  std::string filename, url, sha256;
  /// The lock's record of the wheel's file list (issue 44, lock/wheel_files.h), checked against
  /// the wheel when it is read whole; empty when the lock records none.
  std::string members_sha256;
  std::optional<std::uint64_t> wheel_size;
  bool requested = false;                      ///< a root of the lock: REQUESTED
  std::optional<std::string> direct_url_json;  ///< a package without an index (PEP 610)
  bool tampered = false;                       ///< replace: a file differs from RECORD
  std::filesystem::path dist_info;             ///< the installed one (replace/remove/unchanged)
};

struct SyncPlan {
  std::vector<SyncItem> items;  ///< locked packages in lock order, then removals/keeps by name
  [[nodiscard]] std::size_t count(SyncAction a) const;
  [[nodiscard]] std::uint64_t bytes(SyncAction a) const;
};

}  // namespace gpulock::install

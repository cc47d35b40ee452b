#pragma once
/// @file
/// `gpulock install` as an exact sync (issue 25): the target environment becomes the lock.
/// What is missing is installed, what differs (version, local label, a file whose sha256 is
/// not its RECORD's) is replaced, what the lock does not name is removed (unless --no-remove;
/// the tool packages unless --exact; never with --system), what is already right is not
/// touched. Every wheel to install is fetched into the shared cache and its sha256 compared
/// with the lock's before the environment is changed at all (app/wheel_cache.h); then the
/// packages to replace or remove are removed by their RECORD and the new ones linked from the
/// cache (app/wheel_install.h).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/install.h"
#include "gpulock/install/wheel_install.h"
#include "gpulock/core/error.h"

namespace gpulock::app {

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

/// What a sync reports as it goes (any thread for on_bytes).
struct SyncObserver {
  std::function<void(std::string_view line)> info;  ///< "created .venv (Python 3.11.7)"
  /// Download progress: wheels done of total, bytes received of expected.
  std::function<void(std::size_t done, std::size_t total, std::uint64_t bytes,
                     std::uint64_t expected)>
      progress;
};

struct SyncResult {
  std::string python;            ///< the environment's interpreter
  std::filesystem::path prefix;  ///< sys.prefix
  std::string python_version;    ///< "3.11.7"
  bool created = false;          ///< the venv was made by this run
  double venv_seconds = 0;       ///< making it (choosing its interpreter included), when created
  /// --dry-run where the venv does not exist yet: the interpreter that would make it.
  std::string would_create_with;
  bool system = false;  ///< not a virtual environment (--system)
  std::string lock;     ///< the lock installed
  SyncPlan plan;
  bool dry_run = false;
  std::size_t cache_hits = 0, downloaded = 0;
  std::uint64_t downloaded_bytes = 0;
  std::size_t linked_files = 0;
  std::vector<std::string> from_mirror;
  std::vector<std::string> warnings;
  std::optional<EnvironmentReport> probe;
};

/// Runs the sync for `request` (installer native). Errors: Usage (an interpreter that is not a
/// virtual environment without --system; --venv with --python), Io (the interpreter, the
/// environment, the cache), InvalidLockfile (the lock, a package without a wheel for this
/// environment or without a sha256), HashMismatch (a wheel that is not the locked one: nothing
/// was changed), the client's errors, and the probe's.
[[nodiscard]] core::Result<SyncResult> sync_lock(const InstallRequest& request,
                                                 const SyncObserver& observer);

}  // namespace gpulock::app

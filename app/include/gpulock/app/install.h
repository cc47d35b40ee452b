#pragma once
/// @file
/// `gpulock install` (DESIGN.md §Commands; issue "Post-install: `gpulock install` and the
/// cuDNN/CUDA load probe"): the lock exported as a temporary requirements file of direct URLs
/// with hashes (`name @ URL --hash=sha256:...`, lock/export.h), so pip needs no index
/// configuration and re-resolves nothing; then `PYTHON -m pip install --no-deps
/// --require-hashes -r FILE` (argv, never a shell), its output streamed; then the probe.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/probe_env.h"
#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/sys/link_file.h"

namespace gpulock::app {

/// `--installer`: gpulock's own (a sync, app/install_sync.h) or pip (`pip install --no-deps
/// --require-hashes -r`, this header).
enum class Installer { Native, Pip };

struct InstallRequest {
  std::string lock = "pylock.toml";  ///< --lock
  Installer installer = Installer::Native;
  /// --venv DIR: this virtual environment, created when missing. Native only.
  std::string venv;
  bool system = false;     ///< --system: allow a non-venv interpreter; nothing is removed
  bool exact = false;      ///< --exact: remove tool packages (pip, setuptools, wheel) too
  bool no_remove = false;  ///< --no-remove: keep what the lock does not name
  bool dry_run = false;    ///< --dry-run: the plan only
  /// --lock-timeout / --no-wait (zero): how long a sync waits for another one of the same
  /// environment to finish (app/src/env_lock.h) before it fails (Io, exit 74).
  std::chrono::milliseconds lock_timeout{std::chrono::minutes(10)};
  sys::LinkMode link_mode = sys::LinkMode::Hardlink;  ///< --link-mode
  unsigned jobs = 8;                                  ///< parallel downloads
  std::string python;                                 ///< --python; empty: default_python("")
  bool probe = true;                                  ///< false: --no-probe
  /// --mirror LOC (a mirror's URL or directory, app/mirror.h): every locked file with a sha256
  /// is taken from the mirror's store by its hash. pip still checks every hash.
  std::string mirror;
  /// --mirror-fallback LOC: a file whose URL in the lock answers 404/410 is taken from LOC.
  std::string mirror_fallback;
  /// For asking whether the lock's URLs are still there (--mirror-fallback), and the native
  /// installer's downloads and cache (`cache_dir`).
  index::ClientOptions client;
  /// Passed to the probe after pip (its `python` and `lock` are set from the fields above).
  ProbeRequest probe_request;
};

struct InstallResult {
  std::string python;                 ///< the interpreter used
  std::vector<std::string> pip_argv;  ///< what ran (the requirements file is deleted after)
  std::string requirements;           ///< the exported requirements text
  int pip_exit_code = 0;              ///< 0: pip succeeded; else pip's exit status (128+signal)
  bool pip_timed_out = false;
  /// pip refused a file whose hash is not the lock's (its "DO NOT MATCH THE HASHES" report).
  bool hash_mismatch = false;
  /// Files taken from the mirror ("<file name>"), --mirror or --mirror-fallback.
  std::vector<std::string> from_mirror;
  std::optional<EnvironmentReport> probe;  ///< when probing ran (pip succeeded, no --no-probe)
};

/// Called with pip's output as it arrives.
using OutputFn = std::function<void(std::string_view chunk, bool is_stderr)>;

/// Installs the lock. pip failing is a result (`pip_exit_code`), not an error. Errors: Io /
/// InvalidLockfile (reading the lock), InvalidLockfile / Usage (a package pip cannot install
/// from the lock with hashes, as lock/export.h says), Io (the interpreter cannot be started,
/// the temporary file cannot be written), and the probe's errors.
[[nodiscard]] core::Result<InstallResult> install_lock(const InstallRequest& request,
                                                       const OutputFn& on_output);

}  // namespace gpulock::app

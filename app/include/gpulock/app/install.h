#pragma once
/// @file
/// `gpulock install` (DESIGN.md §Commands; issues 25 and 43): the lock read (its files taken
/// from the mirror when one is given), the environment found or made (a venv for the native
/// installer: app/venv.h), then the installer's plan and apply (install/installer.h), then the
/// post-install probe (app/probe_env.h), here and not inside an installer.

#include <optional>
#include <string>
#include <vector>

#include "gpulock/app/probe_env.h"
#include "gpulock/core/error.h"
#include "gpulock/install/installer.h"

namespace gpulock::app {

struct InstallRequest {
  std::string lock = "pylock.toml";                 ///< --lock
  install::Kind installer = install::Kind::Native;  ///< --installer
  /// --venv DIR: this virtual environment, created when missing. Native only.
  std::string venv;
  std::string python;  ///< --python; empty: --venv, $VIRTUAL_ENV, ./.venv (pip: default_python)
  bool probe = true;   ///< false: --no-probe
  /// --mirror LOC (a mirror's URL or directory, app/mirror.h): every locked file with a sha256
  /// is taken from the mirror's store by its hash. Each installer still checks every hash.
  std::string mirror;
  /// --mirror-fallback LOC: a file whose URL in the lock answers 404/410 is taken from LOC.
  std::string mirror_fallback;
  /// The installer's settings (`lock_path` is set from `lock`); `client` also asks whether the
  /// lock's URLs are still there (--mirror-fallback).
  install::Options options;
  /// Passed to the probe after the install (its `python` and `lock` are set from the above).
  ProbeRequest probe_request;
};

struct InstallResult {
  std::string lock;  ///< the lock installed
  install::Kind installer = install::Kind::Native;
  bool dry_run = false;
  bool created = false;     ///< the venv was made by this run
  double venv_seconds = 0;  ///< making it (choosing its interpreter included), when created
  /// --dry-run where the venv does not exist yet: the interpreter that would make it.
  std::string would_create_with;
  install::Plan plan;        ///< the environment (python, prefix, ...) and what changes
  install::Applied applied;  ///< when not --dry-run
  /// Files taken from the mirror ("<file name>"), --mirror or --mirror-fallback.
  std::vector<std::string> from_mirror;
  /// The lock's, the plan's, then applying's (the CLI says the native installer's).
  std::vector<std::string> warnings;
  std::optional<EnvironmentReport> probe;  ///< when probing ran (installed, no --no-probe)
};

/// Installs the lock: read, mirror, environment, plan, apply, probe. An installer's failure
/// that is a result (pip's exit status: `applied.pip_exit_code`) is not an error, and then
/// nothing is probed. Errors: Io / InvalidLockfile (reading the lock), Usage (--venv with
/// --python; an interpreter that is not a virtual environment without --system), NotFound (no
/// interpreter for a new venv), the installer's (install/installer.h: InvalidLockfile, Usage,
/// Io, HashMismatch, the client's) and the probe's.
[[nodiscard]] core::Result<InstallResult> install(const InstallRequest& request,
                                                  const install::Observer& observer);

}  // namespace gpulock::app

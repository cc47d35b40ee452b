#pragma once
/// @file
/// The installers behind one interface (issue 43 item 3): a lock and an environment make a
/// Plan (nothing changed yet), and applying the plan installs it. `gpulock install` is
/// app::install: the environment (a venv made when missing), then plan, apply and the probe,
/// the probe never called from inside an installer. NativeInstaller (src/native_installer.cpp)
/// syncs the environment to the lock with gpulock's own wheel installer (sync_plan.h);
/// PipInstaller (src/pip_installer.cpp) runs `pip install --no-deps --require-hashes` on the
/// lock exported as requirements.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/install/sync_plan.h"
#include "gpulock/lock/lock.h"
#include "gpulock/sys/link_file.h"

namespace gpulock::install {

/// `--installer`: gpulock's own (a sync) or pip.
enum class Kind { Native, Pip };

/// "native" or "pip"; else Usage "invalid --installer 'X': expected native or pip". The one
/// parser of `--installer`.
[[nodiscard]] core::Result<Kind> parse_kind(std::string_view text);

/// Where a locked file is taken from instead of its own URL (`--mirror`, `--mirror-fallback`:
/// app's mirror). Only files with a sha256 and a URL are asked.
class FileSource {
 public:
  virtual ~FileSource() = default;
  /// The URL to take `file` from, or nullopt to keep its own. Errors: the source's (a fallback
  /// that asks whether the lock's URL is still there: Network, Timeout, Offline).
  [[nodiscard]] virtual core::Result<std::optional<std::string>> url_for(
      const lock::FileEntry& file) = 0;
};

/// Every file of `lk` that `source` gives another URL gets it (in memory); the names of those
/// files are appended to `taken`, in lock order. Stops at the source's first error.
[[nodiscard]] core::Status take_files_from(FileSource& source, lock::Lock& lk,
                                           std::vector<std::string>& taken);

/// How to install: the command line's settings an installer reads.
struct Options {
  /// The lock's file: its relative paths are relative to its directory; errors name it.
  std::string lock_path = "pylock.toml";
  bool system = false;     ///< --system: allow a non-venv interpreter; nothing is removed
  bool exact = false;      ///< --exact: remove tool packages (pip, setuptools, wheel) too
  bool no_remove = false;  ///< --no-remove: keep what the lock does not name
  bool dry_run = false;    ///< --dry-run: the plan only (native)
  /// --lock-timeout / --no-wait (zero): how long a sync waits for another one of the same
  /// environment to finish (install/env_lock.h) before it fails (Io, exit 74).
  std::chrono::milliseconds lock_timeout{std::chrono::minutes(10)};
  sys::LinkMode link_mode = sys::LinkMode::Hardlink;  ///< --link-mode
  unsigned jobs = 8;                                  ///< parallel downloads
  /// The native installer's downloads and cache (`cache_dir`).
  index::ClientOptions client;
};

/// The environment to install into.
struct Environment {
  std::string python;  ///< its interpreter
  /// A venv still to be made (native --dry-run): where; `python` is the interpreter that would
  /// make it, asked for the plan. The plan then says what a fresh venv would get.
  std::optional<std::filesystem::path> venv_to_make;
};

/// What an installer holds from plan to apply (native: the environment's lock, its scheme).
struct PlanState {
  virtual ~PlanState() = default;
};

/// What installing would do; nothing is changed yet.
struct Plan {
  std::string python;            ///< the environment's interpreter
  std::filesystem::path prefix;  ///< sys.prefix (native)
  std::string python_version;    ///< "3.11.7" (native)
  bool system = false;           ///< not a virtual environment (native, --system)
  SyncPlan sync;                 ///< native: each package's action
  std::string requirements;      ///< pip: the lock exported as requirements
  std::vector<std::string> warnings;
  std::shared_ptr<PlanState> state;
};

/// What applying a plan did.
struct Applied {
  /// Native: the wheels taken from the cache, downloaded (and their bytes), files linked.
  std::size_t cache_hits = 0, downloaded = 0;
  std::uint64_t downloaded_bytes = 0;
  std::size_t linked_files = 0;
  std::vector<std::string> warnings;
  /// Pip: what ran (the requirements file is deleted after) and how it ended.
  std::vector<std::string> pip_argv;
  int pip_exit_code = 0;  ///< 0: pip succeeded; else pip's exit status (128+signal)
  bool pip_timed_out = false;
  /// pip refused a file whose hash is not the lock's (its "DO NOT MATCH THE HASHES" report).
  bool hash_mismatch = false;
  /// The environment is the lock now (the probe may run).
  [[nodiscard]] bool ok() const noexcept { return pip_exit_code == 0; }
};

/// What an installer reports as it goes (`progress` from any thread).
struct Observer {
  std::function<void(std::string_view line)> info;  ///< "waiting for ..."
  /// Download progress: wheels done of total, bytes received of expected.
  std::function<void(std::size_t done, std::size_t total, std::uint64_t bytes,
                     std::uint64_t expected)>
      progress;
  /// pip's output as it arrives.
  std::function<void(std::string_view chunk, bool is_stderr)> output;
};

class Installer {
 public:
  virtual ~Installer() = default;
  /// What installing `lk` into `env` would do. The native installer holds the environment's
  /// lock from here until `apply` ends (shared for a plan that is not applied: --dry-run).
  [[nodiscard]] virtual core::Result<Plan> plan(const lock::Lock& lk, const Environment& env,
                                                const Observer& observer) = 0;
  /// Installs `plan`; what it held is released when this returns. Its items stay for the
  /// report.
  [[nodiscard]] virtual core::Result<Applied> apply(Plan& plan, const Observer& observer) = 0;
};

/// The installer of this kind, with these settings.
[[nodiscard]] std::unique_ptr<Installer> make_installer(Kind kind, Options options);

}  // namespace gpulock::install

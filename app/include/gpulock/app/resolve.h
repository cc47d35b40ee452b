#pragma once
/// @file
/// The resolve workflow (`gpulock resolve`, DESIGN.md §Commands): inputs -> target and GPU
/// facts -> index sources -> PubGrub over an IndexProvider -> a PEP 751 lock with
/// `[tool.gpulock]`. Returns results; never prints.

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpulock/app/resolve_options.h"
#include "gpulock/app/target.h"
#include "gpulock/catalog/index_provider.h"
#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/index/index_spec.h"
#include "gpulock/lock/lock.h"
#include "gpulock/resolver/report.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::app {

/// A `--index-for` pin that applies when a PEP 508 marker matches the target: how uv's
/// `[tool.uv.sources]` entries with a `marker` are honoured (issue 26).
struct MarkedIndexPin {
  index::IndexPin pin;
  std::string marker;  ///< PEP 508 marker text, checked when the configuration was read
  friend bool operator==(const MarkedIndexPin&, const MarkedIndexPin&) = default;
};

/// A setting from the user's environment or user-level configuration (issue 41 item 2).
struct UserSetting {
  std::string key;                  ///< the configuration key: "find-links"
  std::string origin;               ///< "env PIP_FIND_LINKS", "file ~/.config/pip/pip.conf"
  std::vector<std::string> values;  ///< as given (redact to show)
};

/// Everything `gpulock resolve` takes (flag names in comments). Option values are typed, parsed
/// once by their own parsers (resolve_options.h and the types it names); the CLI declares the
/// flags once for `resolve` and `check`.
struct ResolveRequest {
  std::vector<std::string> requirements;       ///< REQ ...
  std::vector<std::string> requirement_files;  ///< -r FILE
  std::vector<std::string> constraint_files;   ///< -c FILE
  std::string project;                         ///< --project PYPROJECT
  std::vector<std::string> extras;             ///< --extra X
  std::vector<std::string> groups;             ///< --group G
  std::string output = "pylock.toml";          ///< -o FILE ("-": stdout)
  bool force = false;                          ///< --force: replace an -o file that is not a lock

  std::optional<std::string> index_url;  ///< --index-url (default https://pypi.org/simple/)
  /// The configured default index (app/config.h): below a requirements file's --index-url line.
  std::optional<std::string> configured_index_url;
  std::vector<std::string> extra_index_urls;     ///< --extra-index-url
  std::vector<index::NamedIndex> named_indexes;  ///< --index NAME=URL
  std::vector<index::IndexPin> index_for;        ///< --index-for GLOB=NAME
  std::vector<MarkedIndexPin> index_for_when;    ///< configured pins with a marker
  std::vector<std::string> find_links;           ///< --find-links
  std::optional<TorchBackend> torch_backend;  ///< --torch-backend auto|cpu|cuXYZ (none: not given)
  std::string torch_index_base = "https://download.pytorch.org/whl";  ///< --torch-index-base
  std::optional<NightlyDate> nightly;  ///< --nightly DATE|latest (none: not given)
  IndexStrategy index_strategy = IndexStrategy::FirstIndex;  ///< --index-strategy

  TargetRequest target;      ///< --python | --python-version --platform
  gpu::DriverSpec driver;    ///< --driver auto|none|VERSION
  std::string cuda_ceiling;  ///< --cuda-ceiling X.Y (probe's overrides parse it)
  std::string gpu_arch;      ///< --gpu-arch sm_XY[,..] (likewise)
  gpu::CudaCompat cuda_compat = gpu::CudaCompat::Strict;  ///< --cuda-compat strict|minor

  resolver::PrereleasePolicy prerelease =
      resolver::PrereleasePolicy::IfNecessary;  ///< --prerelease, --pre
  std::optional<ExcludeNewer> exclude_newer;    ///< --exclude-newer DATE|TIMESTAMP|DURATION
  bool upgrade = false;                         ///< --upgrade
  std::vector<std::string> upgrade_packages;    ///< --upgrade-package NAME

  index::ClientOptions client;  ///< --cache-dir --offline --refresh --no-cache
  /// The command line as typed, for the lock's header comment and the complete commands hints
  /// give (app/command_line.h).
  std::string command_line;
  /// Resolve, but write nothing and try no suggested command: how a hint's command is tried
  /// before it is suggested (issue 16 item 8).
  bool dry_run = false;
  /// Return the lock without writing it to `output` (which still decides its directory and the
  /// old lock whose pins are kept): `resolve --all-targets` writes every target's lock as a set.
  bool defer_write = false;
  /// The declared target resolved (`[tool.gpulock.targets.<name>]`), recorded in the lock.
  std::string target_name;
  /// The machine is `driver`, `cuda_ceiling` and `gpu_arch` alone (a declared target's keys):
  /// GPULOCK_DRIVER and the other variables are not read, this machine is not detected.
  bool machine_as_given = false;
  /// `name==VERSION` constraints (public versions: any local label matches) that
  /// `resolve_targets` adds to align versions across targets. Not recorded as inputs.
  std::vector<std::pair<std::string, std::string>> align_pins;
  /// Set on the second run of a resolve whose `--find-links` page named another torch build
  /// (PyG's `torch-2.11.0+cu128.html`): the pages then follow torch's (find_links_followed).
  bool find_links_followed = false;
  /// The project's configuration files the options came from (app/config.h), recorded in the
  /// lock with their sha256 so that `check --inputs` sees them change.
  std::vector<std::string> config_files;
  /// Settings from the user's environment or user-level configuration (issue 41 item 2), each
  /// with its origin. The lock records one only when it supplied a locked file: on the index
  /// record of the index it named (`origin`), never as an input of its own.
  std::vector<UserSetting> user_settings;
  /// The time "now" for relative --exclude-newer and `--nightly latest` (tests pin it); 0: clock.
  std::int64_t now_micros = 0;
};

/// Progress reports while resolving (called from the resolving thread and index workers).
struct ResolveObserver {
  std::function<void(const index::ClientEvent&)> on_index_event;
  std::function<void(std::string_view message)> on_phase;  ///< "Detecting the machine", ...
};

/// Why one package was chosen, for --explain and --report.
struct PackageWhy {
  std::string name;
  std::string version;
  std::string source;  ///< the index URL it came from (redacted)
  std::string file;    ///< the wheel's file name
  std::vector<resolver::Requirer> required_by;
  std::vector<std::string> notes;  ///< e.g. "CUDA 12.4 build (your driver supports CUDA <= 12.4)"
  /// Torch-family packages: the candidates preferred over the chosen one that were passed
  /// over, best first, with why (catalog::Skipped: version, kind, reason); versions the
  /// requirements never allowed (kind "excluded") are left out.
  struct Skipped {
    std::string version;
    std::string kind;
    std::string reason;
    /// A complete fix for the user, when one is known (first-index's stale mirror).
    std::string hint;
  };
  std::vector<Skipped> skipped;
};

struct ResolveTimings {
  double total_ms = 0, machine_ms = 0, inputs_ms = 0, solve_ms = 0, lock_ms = 0;
};

struct ResolveResult {
  bool solved = false;
  /// When solved: the lock (already written unless output is "-"), its text, and why.
  lock::Lock lock;
  std::string lock_text;
  std::vector<PackageWhy> why;
  /// One line on the GPU choice: "torch 2.6.0+cu124: the newest torch whose CUDA build driver
  /// 550.54.14 runs (CUDA <= 12.4)". Empty when no torch was resolved.
  std::string gpu_summary;
  /// Hints for a solved resolve ("hint:" lines after the summary): how to lift what held the
  /// newest torch back, when one requirement alone did.
  std::vector<std::string> hints;
  /// When not solved: the explanation.
  resolver::Report explanation;
  std::vector<std::string> warnings;
  resolver::SolveStats solve_stats;
  index::ClientStats index_stats;
  ResolveTimings timings;
  Target target;
};

/// Runs the whole workflow. Errors: Usage (bad flag values), InvalidInput/InvalidRequirement
/// (requirements, files), network errors (exit 4), Io (writing the lock), and the "no driver
/// and no choice" error of the GPU policy (Usage, with hints).
[[nodiscard]] core::Result<ResolveResult> resolve(const ResolveRequest& request,
                                                  const ResolveObserver& observer = {});

/// As resolve(), through `client` (shared by several resolves: each page and METADATA file is
/// fetched once for all of them, e.g. every target of `resolve --all-targets`). The client's
/// options are the caller's; `request.client` is not used.
[[nodiscard]] core::Result<ResolveResult> resolve(const ResolveRequest& request,
                                                  const ResolveObserver& observer,
                                                  index::IndexClient& client);

/// The client options for resolving every one of `targets` through one client: `request`'s,
/// with `observer`'s events and a wheel filter that keeps what any of the targets can install.
[[nodiscard]] index::ClientOptions client_options_for(const ResolveRequest& request,
                                                      const ResolveObserver& observer,
                                                      std::span<const Target> targets);

/// Where a lock goes (`-o`), checked before anything is resolved (issue 16 item 5): an output
/// that is one of `inputs` (requirements, constraints, pyproject files) is a usage error; an
/// existing regular file that is not a lock is refused (InvalidInput) unless `force`; a
/// non-regular target (/dev/null, /dev/stdout, a FIFO) is written in place, not replaced.
/// Errors name the file. Returns the existing lock's text when there is one (for stable
/// re-locking and to leave an unchanged lock untouched).
[[nodiscard]] core::Result<std::optional<std::string>> check_output(
    const std::string& output, bool force, const std::vector<std::string>& inputs);

/// Writes `content` to `path`: a regular (or missing) file atomically, a device or FIFO in place.
[[nodiscard]] core::Status write_output(const std::string& path, std::string_view content);

}  // namespace gpulock::app

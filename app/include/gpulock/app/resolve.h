#pragma once
/// @file
/// The resolve workflow (`gpulock resolve`, DESIGN.md §Commands): inputs -> target and GPU
/// facts -> index sources -> PubGrub over an IndexProvider -> a PEP 751 lock with
/// `[tool.gpulock]`. Returns results; never prints.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpulock/app/index_provider.h"
#include "gpulock/app/target.h"
#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/lock/lock.h"
#include "gpulock/resolver/report.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::app {

/// Everything `gpulock resolve` takes (flag names in comments).
struct ResolveRequest {
  std::vector<std::string> requirements;       ///< REQ ...
  std::vector<std::string> requirement_files;  ///< -r FILE
  std::vector<std::string> constraint_files;   ///< -c FILE
  std::string project;                         ///< --project PYPROJECT
  std::vector<std::string> extras;             ///< --extra X
  std::vector<std::string> groups;             ///< --group G
  std::string output = "pylock.toml";          ///< -o FILE ("-": stdout)
  bool force = false;                          ///< --force: replace an -o file that is not a lock

  std::optional<std::string> index_url;        ///< --index-url (default https://pypi.org/simple/)
  std::vector<std::string> extra_index_urls;   ///< --extra-index-url
  std::vector<std::string> named_indexes;      ///< --index NAME=URL
  std::vector<std::string> index_for;          ///< --index-for GLOB=NAME
  std::vector<std::string> find_links;         ///< --find-links
  std::string torch_backend;                   ///< --torch-backend auto|cpu|cuXYZ ("" = none)
  std::string torch_index_base = "https://download.pytorch.org/whl";  ///< --torch-index-base
  std::string nightly;                         ///< --nightly DATE|latest ("" = none)
  std::string index_strategy = "first-index";  ///< --index-strategy

  TargetRequest target;                        ///< --python | --python-version --platform
  std::string driver = "auto";                 ///< --driver auto|none|VERSION
  std::string cuda_ceiling;                    ///< --cuda-ceiling X.Y
  std::string gpu_arch;                        ///< --gpu-arch sm_XY[,..]
  std::string cuda_compat = "strict";          ///< --cuda-compat strict|minor

  std::string prerelease = "if-necessary";     ///< --prerelease (--pre sets "allow")
  std::string exclude_newer;                   ///< --exclude-newer DATE|TIMESTAMP|DURATION
  bool upgrade = false;                        ///< --upgrade
  std::vector<std::string> upgrade_packages;   ///< --upgrade-package NAME

  index::ClientOptions client;                 ///< --cache-dir --offline --refresh --no-cache
  /// The command line as typed, for the lock's header comment and the complete commands hints
  /// give (app/command_line.h).
  std::string command_line;
  /// Resolve, but write nothing and try no suggested command: how a hint's command is tried
  /// before it is suggested (issue 16 item 8).
  bool dry_run = false;
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
  std::string source;            ///< the index URL it came from (redacted)
  std::string file;              ///< the wheel's file name
  std::vector<resolver::Requirer> required_by;
  std::vector<std::string> notes;  ///< e.g. "CUDA 12.4 build (your driver supports CUDA <= 12.4)"
  /// Torch-family packages: the candidates preferred over the chosen one that were passed
  /// over, best first, with why (IndexProvider::Skipped: version, kind, reason); versions the
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
[[nodiscard]] core::Result<ResolveResult> resolve(const ResolveRequest& request, const ResolveObserver& observer = {});

/// Where a lock goes (`-o`), checked before anything is resolved (issue 16 item 5): an output
/// that is one of `inputs` (requirements, constraints, pyproject files) is a usage error; an
/// existing regular file that is not a lock is refused (InvalidInput) unless `force`; a
/// non-regular target (/dev/null, /dev/stdout, a FIFO) is written in place, not replaced.
/// Errors name the file. Returns the existing lock's text when there is one (for stable
/// re-locking and to leave an unchanged lock untouched).
[[nodiscard]] core::Result<std::optional<std::string>> check_output(const std::string& output, bool force,
                                                                    const std::vector<std::string>& inputs);

/// Writes `content` to `path`: a regular (or missing) file atomically, a device or FIFO in place.
[[nodiscard]] core::Status write_output(const std::string& path, std::string_view content);

/// Parses `--exclude-newer`: a date (YYYY-MM-DD, midnight UTC), an RFC 3339 timestamp, or a
/// duration back from `now` ("7d", "12h", "P7D"). Errors: Usage.
[[nodiscard]] core::Result<std::int64_t> parse_exclude_newer(std::string_view text, std::int64_t now_micros);

/// Why `value` is not a `--torch-backend` value (auto, cpu, or cuXYZ: "cu" and the digits of a
/// CUDA version, e.g. cu124, cu130), or "" when it is one ("" itself, no backend, is one).
[[nodiscard]] std::string torch_backend_error(std::string_view value);

/// Why `value` is not a `--nightly` value (`latest`, or a build date YYYY-MM-DD in UTC with a
/// month 1-12 and a day 1-31), or "" when it is one.
[[nodiscard]] std::string nightly_value_error(std::string_view value);

}  // namespace gpulock::app

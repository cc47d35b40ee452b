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

#include "gpulock/app/resolve_request.h"
#include "gpulock/app/target.h"
#include "gpulock/catalog/index_provider.h"
#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/index/index_spec.h"
#include "gpulock/lock/lock.h"
#include "gpulock/resolver/report.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::app {

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

/// Runs the whole workflow: plans, solves, then writes the lock or explains why there is none
/// (app/src/resolve_session.h). Errors: Usage (bad flag values), InvalidInput/InvalidRequirement
/// (requirements, files), network errors (exit 4), Io (writing the lock), and the "no driver
/// and no choice" error of the GPU policy (Usage, with hints).
[[nodiscard]] core::Result<ResolveResult> resolve(const ResolveRequest& request,
                                                  const ResolveObserver& observer = {});

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

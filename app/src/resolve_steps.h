#pragma once
// The steps of app::resolve() (issue 21: one function per phase, one file per idea), private to
// app. The data flow:
//
//   ResolveRequest --make_plan--> ResolvePlan (flags parsed, inputs read, target, machine,
//        |                        sources, the old lock's pins; no index I/O)
//        v
//   torch sources checked, nightly date chosen (resolve_torch.cpp; index I/O)
//        v
//   catalog::Catalog (sources, wheels, GPU policy) through its IndexProvider
//        |                                    --resolver::solve--> Solution | NoSolution
//        v                                                        v
//   write_lock (resolve_lock.cpp)                 explain_no_solution (resolve_failure.cpp)
//   (both ask the catalog's after-solve questions, catalog/after_solve.h; its hints are typed
//   edits that hint_text words with the run's command line)
//
// resolve.cpp runs them in order, as a ResolveSession (resolve_session.h: plan, solve, write),
// and holds the helpers every step shares (usage errors, tried hint commands).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/app/command_line.h"
#include "gpulock/app/resolve.h"
#include "gpulock/catalog/after_solve.h"
#include "gpulock/catalog/catalog.h"
#include "gpulock/catalog/hint.h"
#include "gpulock/catalog/index_provider.h"
#include "gpulock/core/error.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/index/client.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/probe/machine.h"
#include "gpulock/resolver/report.h"
#include "gpulock/resolver/solver.h"

#include "resolve_inputs.h"
#include "resolve_session.h"

namespace gpulock::app::detail {

using Phase = std::function<void(std::string_view)>;

// ---- shared helpers (resolve.cpp) ----------------------------------------------------------

[[nodiscard]] double elapsed_ms(std::chrono::steady_clock::time_point since);
/// An exit-2 error with hints.
[[nodiscard]] std::unexpected<core::Error> usage(std::string message,
                                                 std::vector<std::string> hints = {});

/// A command a hint would suggest, tried first (issue 16 item 8: hints that work when followed):
/// `request` with `edits`, planned and solved by a trial session (no lock, no hints of its own).
/// When it solves: the complete command and what it locks of the first of `focus` (normalized
/// names) the solution has ("torch 2.12.1+cpu"). Nothing is tried within a trial (`run.trial`).
/// `client`: the first solve's, so the try reads the pages that solve read (none again).
struct TriedCommand {
  std::string command;
  std::string locks;                     ///< "torch 2.12.1+cpu"; "" when no focus was locked
  std::optional<core::Version> version;  ///< the version in `locks`
};
[[nodiscard]] std::optional<TriedCommand> try_command(const ResolveRequest& request,
                                                      const ResolveRun& run,
                                                      const std::vector<FlagEdit>& edits,
                                                      const std::vector<std::string>& focus,
                                                      index::IndexClient* client = nullptr);
/// Proven words (issue 43 item 5): each fix hint with a command that the catalog's words would
/// print (catalog::fix_hints: a failed solve's `tree`, or a `solution`'s warnings and skipped
/// reasons) tried with try_command on `client`, then its alternatives, and the verdicts given
/// to the catalog (catalog::set_hint_verdicts) before anything is rendered. None in a trial.
void confirm_fix_hints(const ResolveRequest& request, const ResolveRun& run,
                       index::IndexClient& client, catalog::Catalog& catalog,
                       const resolver::DerivationTree* tree, const resolver::Solution* solution);
/// "`COMMAND` locks torch X" (or "`COMMAND` finds a solution").
[[nodiscard]] std::string tried_text(const TriedCommand& t);
/// What a tried command is judged by: torch, else the requirements' names in order.
[[nodiscard]] std::vector<std::string> focus_of(
    const std::vector<resolver::Dependency>& requirements);
/// An explanation gpulock wrote itself (no PubGrub proof, or a fact that comes before one) leads
/// with its first sentence: that sentence becomes the headline.
void lead_with_first_line(resolver::Report& r);

// ---- the plan (resolve_plan.cpp) -------------------------------------------------------------

struct GpuSetup {
  gpu::GpuContext context;
  std::optional<probe::MachineInfo> machine;
};

/// Everything resolve() decides before it asks an index anything.
struct ResolvePlan {
  /// How this session runs (resolve_session.h).
  ResolveRun run;
  resolver::SolveOptions solve_options;
  std::optional<std::int64_t> exclude_newer;
  ResolveInputs inputs;
  std::vector<resolver::Dependency> requirements;
  std::vector<resolver::Dependency> constraints;
  GpuSetup gpu;
  /// The sources, the target, the machine and the old lock's pins, for the catalog.
  catalog::ProviderConfig config;
  /// --torch-backend or --nightly was given: the torch family comes only from `config.torch`.
  bool torch_requested = false;
  /// The bytes of the lock at -o, if one is there (an unchanged lock is not rewritten).
  std::optional<std::string> existing_text;
};

/// Parses the flags, reads the inputs, makes the target, describes the machine, lists the
/// sources and takes the old lock's pins as preferences. Warnings go to `result.warnings`;
/// `result.target` and the inputs/machine timings are set.
[[nodiscard]] core::Result<ResolvePlan> make_plan(const ResolveRequest& request,
                                                  const ResolveRun& run, std::int64_t now_micros,
                                                  ResolveResult& result, const Phase& phase);

[[nodiscard]] catalog::SourceSpec make_source(std::string_view url, std::string name,
                                              catalog::Role role);

// ---- the torch sources (resolve_torch.cpp) -------------------------------------------------

/// The torch-family variant sources for --torch-backend / --nightly.
[[nodiscard]] core::Result<std::vector<catalog::SourceSpec>> torch_sources(
    const ResolveRequest& request, const gpu::GpuContext& gpu);

/// Before solving: a torch source that lacks the torch-family requirements is an error (exit 4)
/// or an explained no-solution (auto mode, no usable variant). Fills `result` and returns true
/// when the resolve ends here.
[[nodiscard]] core::Result<bool> torch_sources_fail(index::IndexClient& client,
                                                    const ResolveRequest& request,
                                                    const ResolvePlan& plan, ResolveResult& result);

/// --nightly: the latest build date every requested dated torch-family member has, not after
/// DATE, set in `plan.config.nightly_date`. Returns true (with `result` explained) when there is
/// no such date.
[[nodiscard]] core::Result<bool> choose_nightly(index::IndexClient& client,
                                                const ResolveRequest& request, ResolvePlan& plan,
                                                ResolveResult& result);

// ---- no solution (resolve_failure.cpp) -----------------------------------------------------

/// A catalog hint as this run words it: `command_line` (the run's, as recorded) with the hint's
/// edits applied, between its words (issue 16 item 8); a hint without edits is its words.
[[nodiscard]] std::string hint_text(const catalog::Hint& hint, std::string_view command_line);

/// The explanation of a failed solve: unknown projects first, the proof, and the hints it
/// points at, each tried first.
[[nodiscard]] core::Status explain_no_solution(const ResolveRequest& request,
                                               const ResolvePlan& plan, index::IndexClient& client,
                                               catalog::IndexProvider& provider,
                                               const resolver::NoSolution& failure,
                                               ResolveResult& result);

// ---- the lock (resolve_lock.cpp) -----------------------------------------------------------

/// The sources as given, for the lock's [[tool.gpulock.indexes]] (the provider has its own copy).
struct SourceRecords {
  std::vector<std::pair<std::string, catalog::SourceSpec>> pinned;
  std::vector<catalog::SourceSpec> torch;
  std::vector<catalog::SourceSpec> general;
  std::optional<NightlyDate> nightly_date;
};

/// Builds `result.lock` (packages, [tool.gpulock]), `result.why`, the GPU summary and writes the
/// lock unless it is unchanged, dry or stdout.
[[nodiscard]] core::Status write_lock(const ResolveRequest& request, const ResolvePlan& plan,
                                      const SourceRecords& sources, index::IndexClient& client,
                                      catalog::IndexProvider& provider,
                                      const resolver::Solution& solution, ResolveResult& result,
                                      const Phase& phase);

}  // namespace gpulock::app::detail

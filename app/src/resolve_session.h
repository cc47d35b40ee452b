#pragma once
// One resolve, run (issue 43 item 4): a session over one request and one index client, with the
// steps plan, solve and write (or explain), in that order. The public app::resolve() is one
// session; `resolve --all-targets` runs one per unit of targets on a shared client
// (targets_resolve.cpp); a hint's command is tried as a session that plans and solves only
// (try_command), never through the public resolve(). What is not the user's request (a trial, a
// lock returned unwritten, a target's machine, the clock) is the session's ResolveRun.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpulock/app/resolve.h"
#include "gpulock/core/error.h"
#include "gpulock/index/client.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::app::detail {

/// How a session runs.
struct ResolveRun {
  /// The machine is the request's machine flags alone (a declared target's keys): GPULOCK_DRIVER
  /// and the other variables are not read, this machine is not detected.
  bool machine_as_given = false;
  /// Return the lock without writing it to `output` (which still decides its directory and the
  /// old lock whose pins are kept): `resolve --all-targets` writes every target's lock as a set.
  bool defer_write = false;
  /// A trial (targets being aligned, a hint's command being tried): nothing is written, and no
  /// further command is tried for a hint (issue 16 item 8) nor any word confirmed by a second
  /// solve: the words that would need one are left out.
  bool trial = false;
  /// `name==VERSION` constraints (public versions: any local label matches) that
  /// `resolve_targets` adds to align versions across targets. Not recorded as inputs.
  std::vector<std::pair<std::string, std::string>> align_pins;
  /// Set on the second run of a resolve whose `--find-links` page named another torch build
  /// (PyG's `torch-2.11.0+cu128.html`): the pages then follow torch's.
  bool find_links_followed = false;
  /// The time "now" for relative --exclude-newer and `--nightly latest` (tests pin it); 0: clock.
  std::int64_t now_micros = 0;
};

/// The client options for resolving every one of `targets` through one client: `request`'s,
/// with `observer`'s events and a wheel filter that keeps what any of the targets can install.
[[nodiscard]] index::ClientOptions client_options_for(const ResolveRequest& request,
                                                      const ResolveObserver& observer,
                                                      std::span<const Target> targets);

struct ResolvePlan;
struct SolveState;

class ResolveSession {
 public:
  /// `client`: shared with other sessions (its options are the caller's: `request.client` is not
  /// used), kept by reference; nullptr: the session makes its own from `request.client`.
  ResolveSession(const ResolveRequest& request, ResolveRun run, const ResolveObserver& observer,
                 index::IndexClient* client);
  ~ResolveSession();
  ResolveSession(const ResolveSession&) = delete;
  ResolveSession& operator=(const ResolveSession&) = delete;

  /// The whole workflow: plan, solve, then write the lock or explain why there is none.
  [[nodiscard]] core::Result<ResolveResult> run();

  /// Plans and solves only (a hint's command being tried): the solution, or nullptr when the
  /// resolve ended without one (at the torch sources, the nightly date, or no solution).
  [[nodiscard]] core::Result<const resolver::Solution*> plan_and_solve();

 private:
  /// Plans (no index I/O): flags, inputs, target, machine, sources, old pins.
  [[nodiscard]] core::Status plan();
  /// Checks the torch sources, chooses the nightly date, solves, and follows find-links pages
  /// of another torch build (a second session). true: there is an outcome to write or explain;
  /// false: the resolve ended (explained in result_) or the followed session has it.
  [[nodiscard]] core::Result<bool> solve();
  /// The lock (with its warnings), or the explanation of the failed solve.
  [[nodiscard]] core::Status write();
  [[nodiscard]] ResolveResult finish();
  void phase(std::string_view what) const;

  const ResolveRequest& request_;
  ResolveRun run_;
  ResolveObserver observer_;
  std::chrono::steady_clock::time_point start_;
  std::optional<index::IndexClient> own_client_;
  index::IndexClient* client_;
  ResolveResult result_;
  std::unique_ptr<ResolvePlan> plan_;
  std::unique_ptr<SolveState> solved_;
  /// The request with `--find-links` pages swapped for torch's build, and its session.
  std::unique_ptr<ResolveRequest> followed_request_;
  std::unique_ptr<ResolveSession> followed_;
};

}  // namespace gpulock::app::detail

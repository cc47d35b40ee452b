#pragma once
/// @file
/// The PubGrub version solver (dart pub doc/solver.md; pubgrub-rs). Pure: all data comes from
/// a Provider, nothing is printed, no I/O.
///
/// Semantics that go beyond plain PubGrub:
/// - Finite domains: see version_set.h. A dependency whose specifier matches no candidate
///   yields the derivation "{p} because p depends on q<spec> and there is no version of
///   q<spec>", so the explanation names both facts (a version with such a dependency is
///   unusable, so its other dependencies are not recorded). Versions with the same dependency
///   are merged into one fact ("torch>=2.6.0 needs CUDA >= 12.6"), as pub and pubgrub-rs do.
/// - Extras are proxy packages: `torch[opt]==v` depends on `torch==v` (same candidate) plus
///   the extra's own dependencies; a requirement `torch[opt]>=2` is an edge to `torch>=2` and
///   one to `torch[opt]>=2`.
/// - Pre-releases: PrereleasePolicy (provider.h). Sets always include pre-releases; the policy
///   is applied when choosing a version, so learned incompatibilities stay valid.
/// - Pre-release rule (packaging/pip 26): under IfNecessary a package's pre-releases are
///   admitted while some dependency of a *currently decided* version (or a user requirement)
///   names a pre-release for it (core::Specifier::names_prerelease: any operator but `!=`);
///   then the highest allowed candidate is taken, pre-release or not.
/// - Yanked (PEP 592): a yanked candidate can be chosen only if a requirement of a currently
///   decided version (or a user requirement) pins it exactly (`==V` without wildcard, or
///   `===V`, matching it). Both permissions are undone when the decision that brought them is
///   backtracked. If a package's allowed set holds only yanked, unpinned candidates, the
///   solver records them as Unavailable(Yanked) for this solve.
/// - Priority (which undecided package next): root > boosted packages > direct requirements >
///   singletons (the allowed set holds one version) > packages involved in >= 5 conflicts >
///   the rest; ties by the provider's hint (higher first), then first-seen order.
///   Deterministic. A package whose candidates are rejected 5 times at decision time because
///   they contradict an earlier decision is boosted, with the packages decided after that
///   decision, and the solver goes back to before it (uv's wrong-backtracking scenarios).
/// - Preferences: among allowed candidates the solver takes the first in the provider's
///   preference order, so lock pins placed first are kept when still allowed. Two rules come
///   before it: the pre-release rule (a pinned pre-release is passed over while a final
///   release is allowed, unless the package allows pre-releases), and an extra's proxy takes
///   its base's version when the base is already decided.
/// - Constraints (`-c`) become {root, q outside C} when q is first mentioned, so an unused
///   constraint costs no provider call.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/version.h"
#include "gpulock/resolver/derivation_tree.h"
#include "gpulock/resolver/provider.h"

namespace gpulock::resolver {

/// What the user asked for: the root package's dependencies.
struct SolveRequest {
  /// Requirements (`gpulock resolve REQ...`, `-r`, `--project`), markers already applied.
  std::vector<Dependency> requirements;
  /// Constraints (`-c`): limit a package's versions if it is used, without requiring it.
  /// Extras of a constraint are ignored.
  std::vector<Dependency> constraints;
};

struct SolveOptions {
  PrereleasePolicy prerelease = PrereleasePolicy::IfNecessary;
  /// Per-package policy (normalized name -> policy); a provider's PackageCandidates::prerelease
  /// takes precedence over this.
  std::map<std::string, PrereleasePolicy, std::less<>> prerelease_overrides;
};

/// Counters for --report / --explain and benchmarks.
struct SolveStats {
  std::size_t decisions = 0;          ///< versions decided (including re-decisions)
  std::size_t conflicts = 0;          ///< conflicts found by unit propagation
  std::size_t backtracks = 0;         ///< backjumps done by conflict resolution
  std::size_t learned = 0;            ///< incompatibilities derived by conflict resolution
  std::size_t incompatibilities = 0;  ///< incompatibilities created in all
  std::size_t propagations = 0;       ///< incompatibility relations evaluated
  /// Incompatibilities unit propagation looked at, the ones it skipped as contradicted included.
  std::size_t visits = 0;
  std::size_t packages = 0;  ///< packages mentioned (including proxies and virtuals)
  std::size_t candidate_requests = 0;
  std::size_t dependency_requests = 0;
};

/// Who required a chosen package: one dependency edge of a chosen version (or of the root).
struct Requirer {
  /// Display name of the depender ("torchvision", "torch[opt]"); empty for the user's
  /// requirements.
  std::string package;
  /// The depender's version (nullopt for the user's requirements).
  std::optional<core::Version> version;
  /// The requirement as the edge stated it: "torch==2.7.1", "numpy>=1.26", "torch[opt]".
  std::string requirement;
};

struct ChosenPackage {
  std::string name;  ///< normalized name ("torch", "__python")
  core::Version version;
  /// Index of the chosen candidate in the provider's candidates(name) list.
  std::size_t candidate_index = 0;
  bool is_virtual = false;
  /// Extras whose proxies were selected (sorted).
  std::vector<std::string> extras;
  /// Decision level of the decision (1 = the root's level) and its position among the final
  /// decisions (0 = the first after the root; extras' proxies count as decisions).
  std::uint32_t decision_level = 0;
  std::uint32_t decision_order = 0;
  /// The dependency edges of chosen versions that mention this package or its proxies.
  std::vector<Requirer> required_by;
};

struct Solution {
  /// Every selected real and virtual package (not proxies, not the root), sorted by name.
  std::vector<ChosenPackage> packages;
  SolveStats stats;

  /// Finds a package by name, or nullptr.
  [[nodiscard]] const ChosenPackage* find(std::string_view name) const;
};

/// No set of versions satisfies the requirements. A result, not an error.
struct NoSolution {
  DerivationTree tree;
  SolveStats stats;
};

using Outcome = std::variant<Solution, NoSolution>;

/// Runs PubGrub. Returns a Solution or a NoSolution (with the derivation tree), or the first
/// core::Error a provider call returned (with a context frame naming the package), or
/// ErrorCode::Cancelled when provider.should_cancel() said so.
[[nodiscard]] core::Result<Outcome> solve(Provider& provider, const SolveRequest& request,
                                          const SolveOptions& options = {});

}  // namespace gpulock::resolver

#pragma once
/// @file
/// The solver's only window on the world: a Provider supplies candidates and dependencies, a
/// Describer (which every Provider is) supplies wording for explanations. The solver itself
/// does no I/O (DESIGN.md §Layout: resolver/ is pure).
///
/// Package names handed to and from a provider are PEP 503 normalized (core::normalize_name),
/// extras PEP 685 normalized; names that start with `__` are virtual packages (`__python`,
/// later `__cuda`, `__cuda_variant`): they are ordinary packages to the solver, whose
/// candidates and wording come from the provider.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"
#include "gpulock/resolver/version_set.h"

namespace gpulock::resolver {

/// Pre-release policy (`--prerelease`). Sets always contain pre-releases; the policy applies
/// when a version is chosen:
/// - IfNecessary (default): the best final release in the allowed set; a pre-release only
///   when none remains, or when a requirement on the package names a pre-release
///   (`>=2.13.0.dev0`; then the best of all by preference order).
/// - Allow (`--pre`): the best by preference order among all.
/// - Disallow: pre-releases are unavailable (reason PrereleaseDisallowed), even if named.
enum class PrereleasePolicy : std::uint8_t { IfNecessary, Allow, Disallow };

/// `--prerelease`: "if-necessary", "allow" or "disallow", the one parser of the flag (issue 21).
/// Errors: Usage, "invalid --prerelease 'x': expected if-necessary, allow or disallow".
[[nodiscard]] core::Result<PrereleasePolicy> parse_prerelease_policy(std::string_view text);
/// "if-necessary", "allow" or "disallow".
[[nodiscard]] std::string_view prerelease_policy_name(PrereleasePolicy policy) noexcept;

/// Why a candidate (or its dependencies) cannot be used. Extensible: the GPU policy adds its
/// own kinds; anything else is Other with a message.
enum class UnavailableKind : std::uint8_t {
  NoCompatibleWheel,     ///< no wheel matches the target's tags
  OnlySdist,             ///< only a source distribution exists (building is out of scope)
  OtherPlatforms,        ///< wheels exist only for other platforms or Python versions
  RequiresPython,        ///< Requires-Python excludes the target Python
  Yanked,                ///< PEP 592 yanked and not pinned with == / ===
  ExcludedNewer,         ///< uploaded after the --exclude-newer cutoff
  MetadataError,         ///< its metadata could not be read or is invalid
  PrereleaseDisallowed,  ///< a pre-release under PrereleasePolicy::Disallow
  CudaTooNew,            ///< needs a CUDA newer than the driver supports (GPU policy)
  GpuArchMissing,        ///< has no kernels for the GPU's architecture (GPU policy)
  Other,
};

/// "no-compatible-wheel", "only-sdist", ... (stable; used in --json / --report output).
[[nodiscard]] std::string_view unavailable_kind_name(UnavailableKind kind) noexcept;

struct UnavailableReason {
  UnavailableKind kind = UnavailableKind::Other;
  /// A predicate that completes "<package><versions> ...", without the version and without a
  /// final period, e.g. "has no wheel for cp312-manylinux_2_28_x86_64" or "is yanked". The
  /// solver groups unavailable candidates by (kind, message), so a message should not repeat
  /// the version. Empty: a default phrase for the kind.
  std::string message;
  /// Optional structured facts for machine output and describe hooks, e.g. {"cuda", "12.6"}.
  std::vector<std::pair<std::string, std::string>> fields;

  friend bool operator==(const UnavailableReason&, const UnavailableReason&) = default;
};

/// One candidate version of a package.
struct Candidate {
  core::Version version;
  /// PEP 592: a yanked candidate is chosen only when a requirement pins it with `==V` (no
  /// wildcard) or `===V` that matches it; see solve().
  bool yanked = false;
  /// Set when the candidate cannot be used at all (no compatible wheel, ...).
  std::optional<UnavailableReason> unavailable;
  /// Why a candidate the index does not yank is treated as yanked (a predicate, as
  /// UnavailableReason::message: "ships no libcudnn_engines_tensor_ir.so.9, ..."); empty for a
  /// PEP 592 yank. The explanation says it in place of "is yanked".
  std::string yanked_reason;
};

/// The answer to Provider::candidates().
struct PackageCandidates {
  /// Every known version, available or not, in PREFERENCE order (best first): newest first
  /// normally, with lock pins first when re-locking (stable re-locking). Versions must be
  /// distinct.
  std::vector<Candidate> candidates;
  /// Overrides SolveOptions::prerelease for this package (e.g. nightly torch-family packages).
  std::optional<PrereleasePolicy> prerelease;
  /// Priority hint: among packages of the same priority class, higher is decided first.
  int priority = 0;
};

/// One requirement edge: `name[extras]specifier`, already filtered by markers for the target.
struct Dependency {
  std::string name;                 ///< normalized, or virtual (`__python`)
  std::vector<std::string> extras;  ///< normalized extras; each becomes an edge to a proxy
  core::SpecifierSet specifier;     ///< empty = any version

  /// "torch[opt]>=2.5" (extras as given, then specifier_text()).
  [[nodiscard]] std::string to_string() const;
};

/// A specifier set as text with its clauses in the order written (">=2.0,<3.0"), unlike
/// SpecifierSet::to_string(), which sorts them like packaging does.
[[nodiscard]] std::string specifier_text(const core::SpecifierSet& specifier);

/// A conflict rule of one version, not a requirement: `name` need not be used at all; when it
/// is, only in `allowed` (the incompatibility {this version, name outside allowed}, as a `-c`
/// constraint is for the root). `reason` says why, for explanations ("its libcusparse.so.12 is
/// built with CUDA 12.4 and links nvJitLink 12.4's symbols ...").
struct Conflict {
  std::string name;            ///< normalized
  core::SpecifierSet allowed;  ///< the versions of `name` this version can be used with
  std::string reason;
};

/// The answer to Provider::dependencies().
struct Dependencies {
  std::vector<Dependency> dependencies;
  /// Set when this version's dependencies cannot be known for the target (metadata error, ...):
  /// the version is then unusable for that reason.
  std::optional<UnavailableReason> unavailable;
  /// Conflict rules of this version (resolver::Conflict).
  std::vector<Conflict> conflicts;
};

/// Wording for explanations (see report.h). Every hook returns std::nullopt to keep the
/// reporter's default text. `*_text` arguments carry the default rendering of a term
/// ("torch==2.7.1", "__cuda>=12.6") so an override can reuse it.
class Describer {
 public:
  virtual ~Describer() = default;

  /// A term in any sentence, e.g. `__python>=3.12` -> "Python >= 3.12".
  [[nodiscard]] virtual std::optional<std::string> describe_term(const Term& term,
                                                                 std::string_view text) const;

  /// The fact "<depender> depends on <dependency>"; default "A==1.0 depends on B>=2", or
  /// "A==1.0 needs <describe_term(dependency)>" when the dependency is virtual.
  /// E.g. the GPU policy's "torch==2.7.1 (CUDA 12.6 build) needs CUDA >= 12.6".
  [[nodiscard]] virtual std::optional<std::string> describe_dependency(
      const Term& depender, const Term& dependency, std::string_view depender_text,
      std::string_view dependency_text) const;

  /// The fact "no candidate of <term> exists"; default "there is no version of B>=5" (or
  /// "there are no versions of B" for a package without candidates). Returning "" (an empty
  /// string) leaves the fact out of the explanation: a dependency on that set then reads as
  /// the whole reason ("B>=2 needs Python >= 3.12"). E.g. for `__cuda` the GPU policy returns
  /// "your driver 550.54.14 supports CUDA <= 12.4".
  [[nodiscard]] virtual std::optional<std::string> describe_no_versions(
      const Term& term, std::string_view text) const;

  /// The fact "<term> cannot be used because <reason>"; default "<text> <reason.message>".
  [[nodiscard]] virtual std::optional<std::string> describe_unavailable(
      const Term& term, const UnavailableReason& reason, std::string_view text) const;

  /// Facts the provider knows about a package that appears in a failed resolution, printed
  /// as `hint:` lines: "pre-releases exist", "found on <index> but ignored under
  /// first-index", "wheels exist only for other platforms", "only an sdist exists", ...
  [[nodiscard]] virtual std::vector<std::string> package_hints(const PackageInfo& package) const;
};

/// Data source of a resolution. Calls are synchronous from the solver's point of view; a
/// provider may fetch in parallel behind them (see on_version_chosen). Any call may fail with
/// a core::Error (network, ...): the solve then returns that error.
class Provider : public Describer {
 public:
  /// All candidates of `package` (asked once per package and solve, when first mentioned).
  /// A package that does not exist has no candidates (not an error).
  [[nodiscard]] virtual core::Result<PackageCandidates> candidates(std::string_view package) = 0;

  /// Dependencies of candidate `index` (of candidates(package)) for the target. `extra` is
  /// empty for the package itself; for a proxy `package[extra]` return only the extra's own
  /// dependencies (the solver adds the dependency on `package==<same version>` itself).
  [[nodiscard]] virtual core::Result<Dependencies> dependencies(std::string_view package,
                                                                std::size_t index,
                                                                const core::Version& version,
                                                                std::string_view extra) = 0;

  /// Polled once per solver step; true stops the solve with ErrorCode::Cancelled.
  [[nodiscard]] virtual bool should_cancel() { return false; }

  /// Called when decision making picks a version, after its dependencies were read and before
  /// the solver asks for the candidates of those dependencies (one by one), so the provider
  /// can start fetching all their index pages (and likely metadata) in parallel. Also called
  /// for the root (package "", version 0) with the user's requirements. `package` is the base
  /// name for an extra's proxy. The version may still be rejected if a dependency conflicts.
  virtual void on_version_chosen(std::string_view package, const core::Version& version,
                                 std::span<const Dependency> dependencies);
};

}  // namespace gpulock::resolver

#pragma once
/// @file
/// IndexProvider: the resolver's Provider over package indexes, read through a PageSource
/// (page_source.h), with gpulock's policies (DESIGN.md §Commands, §GPU model). It is the
/// candidate catalog (sources, wheel choice, filters) and a thin adapter to resolver::Provider;
/// the GPU rules and words are GpuPolicy's (gpu_policy.h). The policies:
/// - index priority (source.h's Role): `--index-for` pins, then the torch-family source (for
///   torch-family packages), then `--index-url`, then each `--extra-index-url`/find-links source.
///   Under first-index a package's candidates come only from the first source that has it (the
///   torchtriton lesson); unsafe-best-match merges every source.
/// - target: the best-ranked wheel of each version for the target's tags; a file's
///   Requires-Python, yanked state and upload time (`--exclude-newer`) decide what is usable;
///   metadata is read per wheel, from the wheel the target would install.
/// - GPU (GpuPolicy): virtual packages `__python` (the target Python), `__cuda` (one version: the
///   driver's CUDA ceiling) and `__cuda_variant` (torch, torchvision, torchaudio... share one);
///   a wheel needing CUDA X.Y depends on `__cuda>=X.Y`; a torch build without kernels for a
///   detected GPU is unavailable; cuDNN >= 9.11 needs sm_75.
/// - preference: newest first; in the merged torch-family source newest public version first,
///   then the highest CUDA variant; existing lock pins first (stable re-locking).

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/catalog/options.h"
#include "gpulock/catalog/page_source.h"
#include "gpulock/catalog/source.h"
#include "gpulock/core/metadata.h"
#include "gpulock/core/target.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/index/client.h"
#include "gpulock/index/variants.h"
#include "gpulock/resolver/provider.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::catalog {

/// One index source: where its pages are read from, and what it is (its kind and role).
struct SourceSpec {
  index::IndexSource source;
  Source type;
  /// The user-level setting that named it ("env PIP_FIND_LINKS", issue 41 item 2); "" for a
  /// flag, a project file or the default. Such a source is recorded only when it supplied a file.
  std::string origin;
  /// `--torch-backend auto`: a variant above the driver's ceiling, kept so that the explanation
  /// can say why its builds were not used; its candidates are unavailable.
  bool above_ceiling = false;

  /// A torch-family variant index's backend; nullptr for another kind.
  [[nodiscard]] const Variant* variant() const noexcept { return std::get_if<Variant>(&type.kind); }
  /// A variant of the nightly tree.
  [[nodiscard]] bool nightly() const noexcept {
    const Variant* v = variant();
    return v != nullptr && v->nightly;
  }
};

struct ProviderConfig {
  /// `--index-for GLOB=NAME`: packages matching GLOB come only from that source.
  std::vector<std::pair<std::string, SourceSpec>> pinned;
  /// The torch-family source: every variant index, merged into one source.
  std::vector<SourceSpec> torch;
  /// The user asked for a torch source (--torch-backend, --nightly): torch-family packages come
  /// only from `torch`, never from a general index, even when `torch` is empty (issue 16).
  bool torch_requested = false;
  /// `--index-url`, `--extra-index-url`s and find-links, in priority order.
  std::vector<SourceSpec> general;
  IndexStrategy strategy = IndexStrategy::FirstIndex;
  core::Target target;
  /// `--exclude-newer`, microseconds since the epoch (UTC).
  std::optional<std::int64_t> exclude_newer;
  /// `--nightly`: the build date (YYYYMMDD) every dated torch-family member must have.
  std::optional<NightlyDate> nightly_date;
  /// Direct references of the requirements (`name @ URL`, issue 17 item 5), normalized name ->
  /// the URL as given (with a `#sha256=` fragment, maybe credentials): the package comes from
  /// that wheel only, never from an index.
  std::map<std::string, std::string, std::less<>> direct;
  /// Existing lock pins (normalized name -> version), tried first.
  std::map<std::string, core::Version, std::less<>> preferences;
  gpu::GpuContext gpu;
  /// The run's command line as recorded (ResolveRequest::command_line): hints that name a fix
  /// give it as this command with the fix applied (issue 16 item 8).
  std::string command_line;
};

/// An existing lock's pin kept although a newer version this machine can use is listed
/// (IndexProvider::kept_pins_beaten).
struct KeptPin {
  std::string name;   ///< PEP 503 normalized
  std::string kept;   ///< the pinned version, kept
  std::string newer;  ///< the newest candidate listed above it
};

class IndexProvider final : public resolver::Provider {
 public:
  /// The catalog over `pages` (kept by reference: it outlives the provider).
  IndexProvider(PageSource& pages, ProviderConfig config);
  /// Over an IndexClient (production): pages read through an IndexClientPages it owns.
  IndexProvider(index::IndexClient& client, ProviderConfig config);
  ~IndexProvider() override;

  // resolver::Provider
  core::Result<resolver::PackageCandidates> candidates(std::string_view package) override;
  core::Result<resolver::Dependencies> dependencies(std::string_view package, std::size_t index,
                                                    const core::Version& version,
                                                    std::string_view extra) override;
  bool should_cancel() override;
  void on_version_chosen(std::string_view package, const core::Version& version,
                         std::span<const resolver::Dependency> dependencies) override;

  // resolver::Describer
  std::optional<std::string> describe_term(const resolver::Term& term,
                                           std::string_view text) const override;
  std::optional<std::string> describe_dependency(const resolver::Term& depender,
                                                 const resolver::Term& dependency,
                                                 std::string_view depender_text,
                                                 std::string_view dependency_text) const override;
  std::optional<std::string> describe_no_versions(const resolver::Term& term,
                                                  std::string_view text) const override;
  std::vector<std::string> package_hints(const resolver::PackageInfo& package) const override;

  /// The file chosen for a candidate and where it came from; nullptr for virtual packages or
  /// an unknown index.
  struct Selection {
    const index::DistFile* file = nullptr;
    const SourceSpec* source = nullptr;
    gpu::BuildLabel build;
    std::optional<gpu::CudaVersion> cuda;  ///< the CUDA this build needs (label, pins, or its name)
    bool cuda_minor_exact = false;  ///< false: only `cuda`'s major is needed (cuda-bindings 13.x)
    bool archs_assumed = false;     ///< torch: no arch list known, bounded by its CUDA's archs
    /// PEP 825: the variant label of `file` ("" for a wheel without one), its properties the
    /// machine supports, and the release's variant metadata (for `[packages.variants-json]`).
    std::string variant_label;
    std::vector<std::string> variant_properties;
    std::shared_ptr<const index::VariantsJson> variants_json;
  };
  /// "torch's CUDA 12.6 builds need a driver >= 560.28.03 ...": for a package whose builds above
  /// the driver's ceiling were candidates (--torch-backend auto), the driver the lowest one needs.
  /// Only builds of versions `wanted` admits count (torch==2.13.0 on driver 535: its lowest
  /// build is CUDA 12.6, not an older release's 12.4), and for torch only builds with kernels
  /// for every GPU of the machine.
  [[nodiscard]] std::optional<std::string> cuda_too_new_hint(
      std::string_view package, const core::SpecifierSet& wanted = {}) const;
  /// torch's build as a find-links page of coupled wheels names it (`2.11.0+cu130`, `2.8.0+cpu`):
  /// the chosen torch of `solution`, or without one the first torch candidate the solver took up
  /// whose CUDA is known (its label or its pins); nullopt when torch was not resolved.
  [[nodiscard]] std::optional<std::string> torch_build_tag(
      const resolver::Solution* solution) const;
  /// After a failed solve: the `--torch-backend` values that would give torch kernels for a GPU
  /// arch its candidates lacked (one per arch, as package_hints names them), for the resolve
  /// workflow to try before suggesting them.
  [[nodiscard]] std::vector<std::string> arch_fix_backends() const;
  /// After a failed solve: whether the explanation gave the CUDA ceiling as a reason (the
  /// workflow then tries `--cuda-compat minor` or, without a GPU, `--torch-backend cpu`).
  [[nodiscard]] bool cuda_hinted() const;
  /// Libraries of different CUDA majors that install the same directory (issue 23), among the
  /// requirements read so far, with a package that requires each: the explanation of a
  /// mixed-major failure names them.
  [[nodiscard]] std::vector<gpu::SharedDirConflict> shared_dir_conflicts() const;
  /// Two packages of the proof that need disjoint versions of one CUDA library, at least one of
  /// them outside the torch family (tensorflow[and-cuda] 2.19's cuDNN pin against torch 2.8's):
  /// one sentence naming the library, both specifiers and both packages, then every other
  /// library they disagree on; nullopt when the proof has no such pair.
  [[nodiscard]] std::optional<std::string> library_pin_conflict(
      const resolver::DerivationTree& tree) const;
  /// After a failed solve, before the explanation is rendered (issue 21: no I/O while a proof
  /// is rendered): fetches the pages package_hints compares, those of the lower-priority
  /// sources first-index skipped for the packages `tree` names. A page that cannot be fetched
  /// becomes a warning (the hint is advice; the explanation stands without it).
  void fetch_hint_pages(const resolver::DerivationTree& tree);

  /// Projects the solver asked for that no source has a page for (404 everywhere).
  [[nodiscard]] std::vector<std::string> projects_not_found() const;
  /// Whether any project asked for was found on some source.
  [[nodiscard]] bool any_project_found() const;
  /// The sources a project is looked up on, in priority order.
  [[nodiscard]] std::vector<const SourceSpec*> sources_for(std::string_view name) const;

  /// Issue 41 item 4: a name the torch source owns (the torch family, never taken from a lower
  /// index) that the torch source lacks, and the candidate that needed it.
  struct MissingFromTorch {
    std::string name;
    /// "triton: the PyTorch index URL has no triton; torch 2.13.0+cu130 needs triton==3.7.1"
    std::string line;
    /// "to take triton from another index: `gpulock resolve ... --index other=URL --index-for
    /// triton=other`"
    std::string hint;
  };
  [[nodiscard]] std::vector<MissingFromTorch> missing_from_torch_source() const;

  /// Existing-lock pins kept although a newer candidate this machine can use exists (CUDA-bound
  /// packages only): candidates for "kept torch 2.11.0+cu130 from pylock.toml; 2.13.0+cu130 is
  /// newer for this machine (--upgrade-package torch)", which resolve prints only when a solve
  /// with `--upgrade-package` confirms it (app/src/resolve.cpp).
  [[nodiscard]] std::vector<KeptPin> kept_pins_beaten(const resolver::Solution& solution) const;

  [[nodiscard]] Selection selection(std::string_view package, std::size_t candidate_index) const;

  /// The parsed METADATA of a candidate's wheel, if it was read.
  [[nodiscard]] const core::CoreMetadata* metadata(std::string_view package,
                                                   std::size_t candidate_index) const;

  /// A candidate the solver would have preferred over the chosen one, and why it was not used
  /// (for --explain and --report).
  struct Skipped {
    core::Version version;
    /// resolver::unavailable_kind_name() of the reason, or "conflict" (its dependencies were
    /// read but it clashed with other requirements) or "excluded" (the requirements never
    /// allowed it, so it was not tried).
    std::string kind;
    /// A predicate completing "<version> ...": "needs CUDA 13.0 and your driver 535.54.03
    /// supports CUDA <= 12.2", "is yanked", "needs setuptools>=77.0.3, and <index> has only
    /// setuptools 70.2.0", "conflicts with the other requirements".
    std::string reason;
    /// A complete fix, when one is known: "add `--index other=URL --index-for setuptools=other`".
    std::string hint;
    /// A conflict's reason that names one requirement ("needs sympy>=1.14, and sympy 1.13.1 was
    /// chosen"): that requirement's name ("sympy"). A claim to confirm (confirm_blocker) before
    /// it is printed.
    std::string blocker;
  };
  /// The candidates ahead of `chosen_index` in preference order, best first, with the reason
  /// each was passed over, as far as this resolution learned it (no index requests).
  /// With `solution`, a conflict is also named when a requirement excludes the version chosen.
  [[nodiscard]] std::vector<Skipped> skipped_before(
      std::string_view package, std::size_t chosen_index,
      const resolver::Solution* solution = nullptr) const;

  /// One-line warnings met while resolving (each once), e.g. an arch list the table lacks.
  [[nodiscard]] std::vector<std::string> warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Shell-style glob for `--index-for` (`torch*`, `nvidia-*-cu12`): `*` and `?` only.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view name);

/// Proven words (issue 43 item 5): does a second solve on the same catalog confirm that `package`
/// `version` was passed over because of `blocker`? `request` plus `package==version` either
/// solves (the first solution's choices, `blocker`'s among them, kept the version out) or fails
/// with `blocker` in its proof. A named cause that fails this ("needs sympy>=1.14" when it was a
/// missing torchaudio build) is not printed. Reuses the provider's pages and METADATA.
[[nodiscard]] bool confirm_blocker(IndexProvider& provider, const resolver::SolveRequest& request,
                                   const resolver::SolveOptions& options, std::string_view package,
                                   const core::Version& version, std::string_view blocker);

}  // namespace gpulock::catalog

#pragma once
/// @file
/// Catalog: the candidate catalog over package indexes, read through a PageSource
/// (page_source.h), with gpulock's policies (DESIGN.md §Commands, §GPU model): its sources, the
/// wheel of each version for the target, the filters, PEP 825 variants and speculation (issue 43
/// item 2). IndexProvider (index_provider.h) is its thin adapter to resolver::Provider; the
/// questions asked after a solve are free functions over it (after_solve.h); its hints are typed
/// edits (hint.h), never a command line. The GPU rules and words are GpuPolicy's (gpu_policy.h).
/// The policies:
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

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
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
#include "gpulock/gpu/wheel_rules.h"
#include "gpulock/index/client.h"
#include "gpulock/index/variants.h"
#include "gpulock/resolver/provider.h"

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
  /// `--allow-incomplete` (issue 44 item 3): the wheel-content conflict rules (library_rules.h,
  /// two wheels writing one path) are not offered to the solver; the resolve warns of what the
  /// chosen set breaks and records it in the lock instead.
  bool allow_incomplete = false;
  // No command line (issue 43 item 2): the catalog's hints are typed edits (hint.h), rendered by
  // the caller's HintWriter.
};

/// An existing lock's pin kept although a newer version this machine can use is listed
/// (after_solve.h: kept_pins_beaten).
struct KeptPin {
  std::string name;   ///< PEP 503 normalized
  std::string kept;   ///< the pinned version, kept
  std::string newer;  ///< the newest candidate listed above it
};

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
  /// Issue 44: what the file's own files leave against the wheel-content rules, when its file
  /// list was judged (judge_wheel_files); a chosen candidate with a hazard was pinned exactly.
  std::vector<gpu::WheelHazard> hazards;
};
/// Issue 41 item 4: a name the torch source owns (the torch family, never taken from a lower
/// index) that the torch source lacks, and the candidate that needed it.
struct MissingFromTorch {
  std::string name;
  /// "triton: the PyTorch index URL has no triton; torch 2.13.0+cu130 needs triton==3.7.1"
  std::string line;
  /// "to take triton from another index: `gpulock resolve ... --index other=URL --index-for
  /// triton=other`"; the fact alone when that command was tried and does not work.
  std::string hint;
  /// The package whose candidate needed it ("torch"), when known.
  std::string needed_by;
};
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
/// Shell-style glob for `--index-for` (`torch*`, `nvidia-*-cu12`): `*` and `?` only.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view name);

/// The catalog of one resolve: its sources and pages, the candidates of each name in preference
/// order with the wheel the target installs, PEP 825 labels, and the speculation that fetches
/// ahead of the solver. The solver reaches it through IndexProvider; the workflow asks it the
/// after-solve questions (after_solve.h). Its state (Impl, catalog/src/catalog_impl.h) is
/// private to catalog.
class Catalog {
 public:
  /// The catalog over `pages` (kept by reference: it outlives the catalog).
  Catalog(PageSource& pages, ProviderConfig config);
  /// Over an IndexClient (production): pages read through an IndexClientPages it owns.
  Catalog(index::IndexClient& client, ProviderConfig config);
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  /// resolver::Provider::candidates: `package`'s candidates in preference order, with why those
  /// that cannot be used cannot (virtual packages: `__python` and the GPU policy's).
  core::Result<resolver::PackageCandidates> candidates(std::string_view package);
  /// resolver::Provider::dependencies of candidate `index` of `package` (its `extra`'s alone
  /// when `extra` is not empty): its METADATA for the target, then the GPU policy's edges.
  core::Result<resolver::Dependencies> dependencies(std::string_view package, std::size_t index,
                                                    const core::Version& version,
                                                    std::string_view extra);
  /// A version was chosen: every dependency's first-priority pages start now.
  void on_version_chosen(std::span<const resolver::Dependency> dependencies);

  [[nodiscard]] const ProviderConfig& config() const noexcept;

  struct Impl;
  /// The state, for catalog's own files (the adapter, after_solve.cpp); incomplete elsewhere.
  [[nodiscard]] Impl& impl() noexcept { return *impl_; }
  [[nodiscard]] const Impl& impl() const noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpulock::catalog

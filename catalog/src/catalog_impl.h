#pragma once
// Catalog's state, private to catalog (issue 21: one file per idea; issue 43 item 2: the catalog
// apart from its adapter). The catalog's parts:
//   catalog.cpp          the Catalog: its construction, the candidates and dependencies the
//                        solver asks for (with GpuPolicy's facts, gpu_policy_facts.cpp), what a
//                        chosen version starts;
//   catalog_sources.cpp  which sources a name comes from (first-index, the torch family, direct
//                        references), their pages and METADATA (via PageSource), speculation;
//   catalog_entries.cpp  which wheel of each version the target installs: the candidates in
//                        preference order, and why the others cannot be used;
//   catalog_variants.cpp PEP 825: the label a release takes;
//   catalog_words.cpp    the words shared by the explanation and the after-solve questions
//                        (hints as typed edits, hint.h);
//   after_solve.cpp      the questions the workflow asks after a solve (after_solve.h);
//   index_provider.cpp   the resolver::Provider adapter (IndexProvider) and the explanation's
//                        words.

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <unordered_map>

#include <fmt/format.h>

#include "gpulock/catalog/catalog.h"
#include "gpulock/catalog/hint.h"
#include "gpulock/core/specifier.h"
#include "gpulock/gpu/wheel_rules.h"
#include "gpulock/index/url.h"
#include "gpulock/index/variants.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::catalog {

using resolver::UnavailableReason;

inline constexpr std::string_view kPython = "__python";

// The build date of a nightly (`2.15.0.dev20260817+cu130` -> 2026-08-17), or nullopt.
inline std::optional<NightlyDate> nightly_date_of(const core::Version& v) {
  if (!v.dev()) return std::nullopt;
  return NightlyDate::from_build_tag(fmt::format("{}", *v.dev()));
}

// Midnight UTC of a nightly's build date, in microseconds since the epoch.
inline std::int64_t date_micros(const NightlyDate& date) {
  const auto& d = *date.date();
  return core::days_from_civil(d.year, d.month, d.day) * 86'400'000'000LL;
}

// What index::IndexClient::wheel_members needs of a page's wheel: its URL, size and sha256.
inline index::WheelRef wheel_ref_of(const index::DistFile& file) {
  index::WheelRef ref;
  ref.url = file.url();
  ref.size = file.size();
  for (const auto& h : file.hashes()) {
    if (h.algorithm == "sha256") ref.sha256 = h.hex;
  }
  return ref;
}

// PEP 825 (Draft): a release whose wheels for the target carry variant labels. PEP 825 selects
// the version first, then the variant: which label the release takes is settled when the solver
// first asks for its dependencies (Catalog::Impl::settle_variant).
struct VariantChoice {
  // The best-ranked wheel of each label (tag rank), all from `source`: variant wheels of
  // different sources are never merged (PEP 825, multiple sources: the earliest index's).
  std::map<std::string, std::pair<const index::DistFile*, std::size_t>, std::less<>> by_label;
  const SourceSpec* source = nullptr;
  const index::DistFile* metadata_file = nullptr;  // {name}-{version}-variants.json on `source`
  const index::DistFile* plain = nullptr;          // the best wheel without a label
  const SourceSpec* plain_source = nullptr;
  bool settled = false;
  std::string label;                    // chosen; "" when a wheel without a label was taken
  std::vector<std::string> properties;  // its properties the machine supports (variant markers)
  std::shared_ptr<const index::VariantsJson> metadata;
  std::optional<UnavailableReason> unavailable;  // no variant fits
};

struct VersionEntry {
  core::Version version;
  const index::DistFile* file = nullptr;  // the wheel the target would install
  const SourceSpec* source = nullptr;
  bool yanked = false;
  std::optional<UnavailableReason> unavailable;
  gpu::BuildLabel build;
  // What dependencies() learned, for skipped_before().
  bool dependencies_read = false;
  std::optional<gpu::CudaVersion> needs_cuda;
  std::optional<UnavailableReason> dependencies_unavailable;
  std::vector<resolver::Dependency> requirements;  // its Requires-Dist for the target (no virtuals)
  bool archs_assumed = false;  // torch: no arch list known, bounded by its CUDA's archs
  std::shared_ptr<VariantChoice> variants;  // null unless the release has variant wheels
  // --exclude-newer with --nightly: the wheel is on the nightly source with neither an upload
  // time nor a dated version (pytorch-triton); usable only when an admitted nightly pins exactly
  // this version (Impl::nightly_pins), checked when its dependencies are read.
  bool needs_pin = false;
  // Issue 44 item 3: what its wheel's own files leave against the wheel-content rules
  // (gpu::wheel_hazards), once judge_wheel_files read its file list. A candidate with a hazard
  // is offered as yanked: taken only when a requirement pins it exactly.
  bool hazards_read = false;
  std::vector<gpu::WheelHazard> hazards;
  std::shared_ptr<const index::WheelMembers> members;  // its wheel's file list, once read
  // Issue 44 item 2: a loader of gpu/data/library_rules.txt's rows whose wheel ships the build's
  // marker (gpu::preload_marker: torch's libtorch_cuda.so), found when its list is read.
  bool loads = false;
  // Issue 44 item 3: conflict rules learned from the file lists of earlier solutions (this
  // wheel and another write one path with different bytes), offered with its dependencies.
  std::vector<resolver::Conflict> conflicts;
};

struct PackageState {
  std::vector<index::ProjectPagePtr> pages;  // keeps the DistFiles alive
  std::vector<VersionEntry> entries;         // preference order
  std::vector<const SourceSpec*> sources;    // where the candidates came from
  std::vector<const SourceSpec*> skipped;    // lower-priority sources first-index did not use
  bool any_wheel_for_target = false;
  bool only_sdists = false;
  bool only_other_platforms = false;
  std::string placeholder_for;  // a 0.0.x placeholder sdist: the real package's name
  std::size_t pin_from = 0;     // an existing lock's pin was moved to the front from here
};

struct MetadataState {
  std::optional<core::CoreMetadata> metadata;
};

/// "torch 2.8.0", "tensorflow[and-cuda] 2.19.0" as keys of Impl::requirements_read.
[[nodiscard]] std::string candidate_key(std::string_view package, std::string_view extra,
                                        const core::Version& version);

struct Catalog::Impl {
  std::unique_ptr<PageSource> owned_pages;  // the IndexClient adapter, when built over a client
  PageSource& pages;
  ProviderConfig config;
  gpu::GpuPolicy gpu;
  core::TagRanker ranker;
  std::map<std::string, PackageState, std::less<>> packages;
  std::unordered_map<const index::DistFile*, MetadataState> metadata;
  std::map<std::string, std::optional<core::SpecifierSet>, std::less<>> requires_python_cache;
  mutable std::vector<std::string> warnings;
  mutable std::set<std::string, std::less<>> warned;
  // --exclude-newer: upload times of torch-source mirror files that give none, from the same file
  // (same sha256) on a later index.
  std::unordered_map<const index::DistFile*, std::int64_t> borrowed_upload_time;
  std::deque<SourceSpec> direct_sources;  // stable addresses: entries point at them
  // package_hints explained the CUDA ceiling (the resolve workflow then tries the fixes).
  mutable bool cuda_hinted = false;
  // Every requirement read, by name: the first package (with its extra) that required it,
  // preferring one that is not an nvidia-* library (issue 23: the mixed-major explanation).
  std::map<std::string, std::string, std::less<>> required_by;
  // The requirements read, by candidate_key ("tensorflow[and-cuda] 2.19.0"): the explanation of a
  // library pin conflict lists every library two packages disagree on.
  std::map<std::string, std::vector<resolver::Dependency>, std::less<>> requirements_read;
  // No candidate of `a.name` meets both specifiers.
  [[nodiscard]] bool disjoint(const resolver::Dependency& a, const resolver::Dependency& b) const;
  // Pages of skipped lower-priority sources, fetched by fetch_hint_pages before the explanation
  // is rendered: name -> (source, page) for each page found.
  std::map<std::string, std::vector<std::pair<const SourceSpec*, index::ProjectPagePtr>>,
           std::less<>>
      hint_pages;

  // Whether package_hints compares `name`'s skipped sources (the torch family comes from its own
  // source by design; any other name the torch source serves is first-index's doing, issue 17).
  bool hints_skipped_sources(std::string_view name, const PackageState& state) const {
    bool family_from_torch_source = gpu::is_torch_family(name) && !state.sources.empty() &&
                                    state.sources.front()->type.role == Role::Family;
    return !state.skipped.empty() && !state.sources.empty() && !family_from_torch_source;
  }

  Impl(PageSource& source, std::unique_ptr<PageSource> owned, ProviderConfig cfg)
      : owned_pages(std::move(owned)),
        pages(source),
        config(std::move(cfg)),
        gpu(config.gpu, config.target.environment.platform_machine),
        ranker(config.target.supported) {}

  void note_required_by(const std::string& dependency, std::string_view depender,
                        std::string_view extra);
  void warn(std::string message) const {
    if (warned.insert(message).second) warnings.push_back(std::move(message));
  }

  // The fix that takes `name` from `other` instead of the source first-index chose: the run's
  // command with the flags added (a Hint: the caller's writer renders the command).
  Hint first_index_fix(std::string_view name, std::string_view other) const;
  // The lower-priority source (redacted URL) whose fetched page (fetch_hint_pages) has versions
  // of `name` that its first-index source lacks: the explanation's first-index hint names it.
  std::optional<std::string> first_index_other(std::string_view name) const;

  // Proven words (issue 43 item 5): the verdicts of the fix hints the workflow tried
  // (set_hint_verdicts), by key (fix_hints). `checked_fix` gives the hint to print: as made
  // when confirmed or never tried (no verdicts: a trial session, the catalog's own tests), the
  // command that does work instead, or nothing (the fact is said without a command). While
  // `collecting` is set, every fix asked for is recorded there instead (fix_hints).
  std::map<std::string, HintVerdict, std::less<>> verdicts;
  mutable std::vector<FixHint>* collecting = nullptr;
  std::optional<Hint> checked_fix(std::string key, Hint hint,
                                  std::vector<Hint> alternatives = {}) const;
  // The names `e` requires that their first-index source has no usable version for while a
  // lower-priority source was skipped for them (first-index only), in requirement order.
  std::vector<std::string> stale_names(const VersionEntry& e) const;
  // What to try when first_index_fix(name, other) does not work, in order: every one of
  // `names` from `other` (when more than `name`), and every index trusted equally.
  std::vector<Hint> first_index_alternatives(std::string_view name, std::string_view other,
                                             const std::vector<std::string>& names) const;

  // Issue 41 item 4: `name` is a torch-family name the torch source owns and lacks (no page on
  // any source searched for it, no --index-for pin).
  bool missing_from_torch(std::string_view name) const;
  // "the PyTorch index URL has no triton; torch 2.13.0+cu130 needs triton==3.7.1" (`needer`:
  // the candidate that required it, when known) and the way out: `--index-for NAME=INDEX` with a
  // named index.
  std::string missing_from_torch_text(std::string_view name, const VersionEntry* needer,
                                      std::string_view needer_name,
                                      const resolver::Dependency* need) const;
  Hint missing_from_torch_fix(std::string_view name) const;
  // The fact that fix starts with: "triton is a torch-family name, which comes only from ...".
  static std::string missing_from_torch_why(std::string_view name);

  // Per GPU arch a candidate of `state` lacked kernels for: the release and the CUDA builds of
  // it that have them (the first such candidate tried, in preference order, speaks for its
  // release).
  struct ArchFix {
    gpu::ComputeCapability arch;
    std::string release;
    std::vector<gpu::CudaVersion> builds;
  };
  std::vector<ArchFix> arch_fixes(std::string_view name, const PackageState& state) const;

  // "<source>" or "<source> and N more" (redacted).
  static std::string sources_text(const std::vector<const SourceSpec*>& sources);

  // Why a candidate whose dependencies were read lost, when one of its requirements alone says
  // it (issue 16 item 7): no usable version of a dependency satisfies it on the sources that
  // dependency comes from (first-index: a stale mirror on the torch source), or the solution
  // chose a version of the dependency outside it. Reads nothing from the network.
  // `blocker` is set to the requirement's name.
  std::optional<std::string> conflict_reason(const VersionEntry& e,
                                             const resolver::Solution* solution,
                                             std::optional<Hint>* hint = nullptr,
                                             std::string* blocker = nullptr) const;

  // An existing lock's names (config.preferences): their pages start now, as the roots' do, and
  // the pinned release's METADATA as soon as a page is in (speculate), so a re-lock with a cold
  // cache reads every locked name in the first waves instead of one level of the graph a wave.
  void seed_from_preferences();

  // First-index for every name (issue 17): a name the torch source serves comes only from
  // there, whether or not gpulock has heard of it (torchtriton in 2022; numpy, which
  // download.pytorch.org mirrors). Which names a torch variant serves is learned from its root
  // listing (fetch_project_list: small, fetched once per run and cached); a variant whose root
  // cannot be read is asked per name, in the same wave as the next source's page. Variants above
  // the driver's ceiling are there only to explain the torch family's newer builds: they serve
  // no other name.
  void prefetch_torch_listings() const {
    for (const auto& s : config.torch) {
      if (!s.above_ceiling) pages.prefetch_project_list(s.source);
    }
  }

  // The torch sources that may serve `name`, a name outside the torch family. `unsure`: some of
  // them are there because their root could not be read, so the name may be missing.
  std::vector<const SourceSpec*> torch_sources_serving(std::string_view name, bool* unsure) const;

  // The source groups for a package, in priority order; each group is searched as one source.
  std::vector<std::vector<const SourceSpec*>> groups_for(std::string_view name,
                                                         bool* torch_unsure = nullptr) const;

  bool requires_python_ok(const index::DistFile& file);

  // When the file was published, for --exclude-newer: its upload time, else the date of a
  // nightly version; nullopt when neither is known.
  std::optional<std::int64_t> publish_time(const index::DistFile& file) const;

  // --exclude-newer with --nightly (issue 41 item 3): a file of the nightly source with no upload
  // time (none borrowed either) is judged by the nightly date, not the cutoff: the build date of
  // its `.devYYYYMMDD` version at or before it, else (no dated version) an exact pin of an
  // admitted nightly.
  bool on_nightly_snapshot(const index::DistFile& file, const SourceSpec& source) const {
    return source.nightly() && config.nightly_date && !config.nightly_date->is_latest() &&
           !file.upload_time() && !borrowed_upload_time.contains(&file);
  }
  // The exact pins (`name==V`) read from the dependencies of admitted nightlies: name -> version
  // -> the nightly that pins it ("torch 2.15.0.dev20260815+cu130").
  std::map<std::string, std::map<core::Version, std::string>, std::less<>> nightly_pins;
  // Records `deps`' exact pins when `package` `version` is an admitted nightly.
  void note_nightly_pins(std::string_view package, const core::Version& version,
                         const SourceSpec& source, const std::vector<resolver::Dependency>& deps);
  // For an entry that needs_pin: nullopt when an admitted nightly pins it (with a warning naming
  // the file), else why --exclude-newer leaves it out.
  std::optional<UnavailableReason> pin_admits(std::string_view package, const VersionEntry& entry);

  std::string target_tag_text() const {
    return fmt::format("{}-{}", config.target.tags.interpreter_tag(), config.target.platform);
  }

  // A direct reference's one wheel: from its URL only, its sha256 from the URL's fragment or,
  // when it has none, from downloading it once (streamed, cached by URL). Errors name the URL.
  core::Status load_direct(std::string_view name, const std::string& given, PackageState& state);

  core::Status load(std::string_view name, PackageState& state);

  // The torch source's copies of ordinary packages (filelock, numpy, ...) carry no upload time on
  // download.pytorch.org, so --exclude-newer would leave every one out, and first-index would
  // allow no other copy. A copy is the same file as the one on the next index (the same sha256;
  // when the torch source gives no hash, as on its nightly tree, the same file name, which PyPI
  // never reuses), so it takes that file's upload time. Only the date is borrowed: the candidates
  // and the files installed stay the torch source's.
  core::Status borrow_upload_times(
      std::string_view name, const std::vector<std::vector<const SourceSpec*>>& groups,
      const std::vector<std::pair<const index::DistFile*, const SourceSpec*>>& files);

  // `omitted`: versions of the files the client's keep_wheel filter left out of the pages (wheels
  // for other targets, sdists); they count exactly as such files would below.
  void build_entries(
      std::string_view name, PackageState& state,
      const std::vector<std::pair<const index::DistFile*, const SourceSpec*>>& files,
      const std::vector<std::pair<const index::OmittedVersion*, const SourceSpec*>>& omitted);

  // Prefetch the METADATA of the candidate most likely to be chosen.
  // The metadata of the candidate the solver will most likely take first: the newest entry that
  // every requirement seen for `name` so far admits (`wanted`), a final release unless only
  // pre-releases fit (issue 27: a speculative fetch of a pre-release the solver then skips costs
  // a round trip). A wheel's member list too, which judge_wheel_files reads once the solve ends:
  // fetched beside a .metadata file (PEP 658), it costs no last round trip of its own.
  void prefetch_first(std::string_view name, const PackageState& state);
  std::map<std::string, std::vector<core::SpecifierSet>, std::less<>> wanted;
  // Speculation one level deeper (issue 27: waves bound by depth): the files prefetch_first
  // started, and, once a file's METADATA is in, the pages of its dependencies (markers of the
  // target, no extras), before the solver gets to take that version.
  std::vector<const index::DistFile*> speculated;
  void chain_speculation();
  // Issue 27: work while the solver waits for a fetch (the client's wait hook, run on this
  // thread): chain_speculation, then, for every wanted name the solver has not asked for yet
  // whose pages are in, the METADATA of its likely candidate (prefetch_first over entries built
  // aside, with no warning kept), so that each level of the graph costs a page and a METADATA
  // round trip, not one more for the solver to get there. Never changes what is resolved: it
  // only starts prefetches; `packages` is untouched.
  void speculate();
  // False while `name`'s pages are not all in.
  bool speculate_name(std::string_view name);
  void chain_dependencies();
  static constexpr std::size_t kMaxSpeculative = 256;  // speculative prefetches per resolve
  std::size_t speculative = 0;
  std::set<std::string, std::less<>> speculated_names;
  std::vector<index::ProjectPagePtr> speculative_pages;  // keeps the speculated files alive
  bool speculating = false;
  std::function<void()> previous_hook;  // the client's wait hook before this catalog's
  ~Impl() { pages.set_wait_hook(std::move(previous_hook)); }
  // Starts `name`'s first-priority pages (every group's under unsafe-best-match).
  void prefetch_pages(std::string_view name);

  // PEP 825: fetches the release's variant metadata and takes the label this machine selects
  // (select_variant, gpulock's policy): entry.file becomes that label's wheel. No label fits:
  // a wheel without a label when no GPU was asked for, else entry.variants->unavailable.
  // Errors: the fetch's network errors (others make the release unusable, with the reason).
  core::Status settle_variant(std::string_view name, VersionEntry& entry);

  core::Result<const core::CoreMetadata*> read_metadata(const index::DistFile& file,
                                                        std::string& problem);

  // `__python`, then the GPU policy's virtual packages.
  std::optional<resolver::PackageCandidates> virtual_candidates(std::string_view name) const;
};

}  // namespace gpulock::catalog

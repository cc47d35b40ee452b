#pragma once
/// @file
/// The questions the resolve workflow asks the catalog after a solve (issue 43 item 2): free
/// functions over the Catalog the solve read. Which file each chosen candidate is and where it
/// came from, what was passed over and why, the pins a newer candidate beats, and what a failed
/// solve's explanation adds. None reads the network but fetch_hint_pages (before the
/// explanation is rendered) and confirm_blocker (a second solve on the same pages). Hints that
/// name a command are rendered by `write` (hint.h; without one, the edits alone).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/catalog/catalog.h"
#include "gpulock/catalog/hint.h"
#include "gpulock/core/metadata.h"
#include "gpulock/core/specifier.h"
#include "gpulock/gpu/gpu_policy.h"
#include "gpulock/resolver/provider.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::catalog {

/// The file chosen for candidate `candidate_index` of `package`; an empty Selection for virtual
/// packages or an unknown index.
[[nodiscard]] Selection selection(const Catalog& catalog, std::string_view package,
                                  std::size_t candidate_index);

/// The parsed METADATA of a candidate's wheel, if it was read.
[[nodiscard]] const core::CoreMetadata* metadata(const Catalog& catalog, std::string_view package,
                                                 std::size_t candidate_index);

/// torch's build as a find-links page of coupled wheels names it (`2.11.0+cu130`, `2.8.0+cpu`):
/// the chosen torch of `solution`, or without one the first torch candidate the solver took up
/// whose CUDA is known (its label or its pins); nullopt when torch was not resolved.
[[nodiscard]] std::optional<std::string> torch_build_tag(const Catalog& catalog,
                                                         const resolver::Solution* solution);

/// The candidates ahead of `chosen_index` in preference order, best first, with the reason
/// each was passed over, as far as this resolution learned it (no index requests).
/// With `solution`, a conflict is also named when a requirement excludes the version chosen.
[[nodiscard]] std::vector<Skipped> skipped_before(const Catalog& catalog, std::string_view package,
                                                  std::size_t chosen_index,
                                                  const resolver::Solution* solution = nullptr,
                                                  const HintWriter& write = {});

/// Issue 44 item 3: the file lists of the chosen wheels not read before, read at once
/// (PageSource::wheel_members: range reads or the cache) and judged:
/// - a cuDNN wheel (gpu::has_wheel_rules) by gpu::wheel_hazards: a candidate with a hazard is
///   offered to the next solve as yanked (PEP 592), so it is taken only when a requirement pins
///   it with `==`, and then kept (it never moves another package's version);
/// - every pair of chosen wheels: two that write one installed path with different bytes (size
///   or CRC-32; the empty `nvidia/__init__.py` every NVIDIA wheel ships is no conflict) get a
///   conflict rule for the next solve (resolver::Conflict), unless the
///   catalog was made with `allow_incomplete`.
/// Returns how many hazards and conflict rules it newly found; a list that cannot be read finds
/// none (record_wheel_files says so when the lock is written).
[[nodiscard]] std::size_t judge_wheel_files(Catalog& catalog, const resolver::Solution& solution);

/// A rule the set `solution` breaks (issue 44 item 3): two of its wheels writing one path with
/// different bytes, or a library beside an nvJitLink older than the CUDA it was built with
/// (gpu::library_conflicts). Found under `--allow-incomplete`, or when the solves stopped
/// before finding a set without it.
struct SetConflict {
  std::string package;  ///< the package whose wheel the lock records it on
  std::string other;    ///< the other package
  std::string text;     ///< one sentence naming both wheels and the path or the versions
};
[[nodiscard]] std::vector<SetConflict> set_conflicts(const Catalog& catalog,
                                                     const resolver::Solution& solution);

/// A library a chosen wheel's own libraries load by bare name that the set ships no copy of and
/// holds no provider for (gpu::companion_gaps: cuDNN's libnvrtc and libcublasLt): no other choice
/// of versions adds a package, so the lock is written with a warning and records the file as the
/// wheel's missing library, which `check --machine` looks for on the machine.
struct CompanionGap {
  std::string package;
  std::string file;  ///< "libnvrtc.so.12"
  std::string text;  ///< "nvidia-cudnn-cu12 9.1.0.70 (FILE.whl) loads libnvrtc.so.12 by name ..."
};
[[nodiscard]] std::vector<CompanionGap> companion_gaps(const Catalog& catalog,
                                                       const resolver::Solution& solution);

/// Whether any candidate of `package` was found to have a hazard, or is ruled out by a conflict
/// rule with a package of `solution` (so `--explain` lists what was passed over for it).
[[nodiscard]] bool has_wheel_findings(const Catalog& catalog, std::string_view package,
                                      const resolver::Solution& solution);

/// Existing-lock pins kept although a newer candidate this machine can use exists (CUDA-bound
/// packages only): candidates for "kept torch 2.11.0+cu130 from pylock.toml; 2.13.0+cu130 is
/// newer for this machine (--upgrade-package torch)", which resolve prints only when a solve
/// with `--upgrade-package` confirms it (app/src/resolve.cpp).
[[nodiscard]] std::vector<KeptPin> kept_pins_beaten(const Catalog& catalog,
                                                    const resolver::Solution& solution);

/// Issue 41 item 4: the names the torch source owns and lacks, each with the candidate that
/// needed it and the way out.
[[nodiscard]] std::vector<MissingFromTorch> missing_from_torch_source(const Catalog& catalog,
                                                                      const HintWriter& write = {});

/// Projects the solver asked for that no source has a page for (404 everywhere).
[[nodiscard]] std::vector<std::string> projects_not_found(const Catalog& catalog);
/// Whether any project asked for was found on some source.
[[nodiscard]] bool any_project_found(const Catalog& catalog);
/// The sources a project is looked up on, in priority order.
[[nodiscard]] std::vector<const SourceSpec*> sources_for(const Catalog& catalog,
                                                         std::string_view name);

/// "torch's CUDA 12.6 builds need a driver >= 560.28.03 ...": for a package whose builds above
/// the driver's ceiling were candidates (--torch-backend auto), the driver the lowest one needs.
/// Only builds of versions `wanted` admits count (torch==2.13.0 on driver 535: its lowest
/// build is CUDA 12.6, not an older release's 12.4), and for torch only builds with kernels
/// for every GPU of the machine.
[[nodiscard]] std::optional<std::string> cuda_too_new_hint(const Catalog& catalog,
                                                           std::string_view package,
                                                           const core::SpecifierSet& wanted = {});
/// After a failed solve: the `--torch-backend` values that would give torch kernels for a GPU
/// arch its candidates lacked (one per arch, as package_hints names them), for the resolve
/// workflow to try before suggesting them.
[[nodiscard]] std::vector<std::string> arch_fix_backends(const Catalog& catalog);
/// After a failed solve: whether the explanation gave the CUDA ceiling as a reason (the
/// workflow then tries `--cuda-compat minor` or, without a GPU, `--torch-backend cpu`).
[[nodiscard]] bool cuda_hinted(const Catalog& catalog);
/// Libraries of different CUDA majors that install the same directory (issue 23), among the
/// requirements read so far, with a package that requires each: the explanation of a
/// mixed-major failure names them.
[[nodiscard]] std::vector<gpu::SharedDirConflict> shared_dir_conflicts(const Catalog& catalog);
/// Two packages of the proof that need disjoint versions of one CUDA library, at least one of
/// them outside the torch family (tensorflow[and-cuda] 2.19's cuDNN pin against torch 2.8's):
/// one sentence naming the library, both specifiers and both packages, then every other
/// library they disagree on; nullopt when the proof has no such pair.
[[nodiscard]] std::optional<std::string> library_pin_conflict(const Catalog& catalog,
                                                              const resolver::DerivationTree& tree);
/// One-line warnings met while resolving (each once), e.g. an arch list the table lacks.
[[nodiscard]] std::vector<std::string> warnings(const Catalog& catalog);

/// After a failed solve, before the explanation is rendered (issue 21: no I/O while a proof
/// is rendered): fetches the pages package_hints compares, those of the lower-priority
/// sources first-index skipped for the packages `tree` names. A page that cannot be fetched
/// becomes a warning (the hint is advice; the explanation stands without it).
void fetch_hint_pages(Catalog& catalog, const resolver::DerivationTree& tree);

/// Proven words (issue 43 item 5): the fix hints with a command that the words of this solve
/// would print (`tree`: a failed solve's explanation, after fetch_hint_pages; `solution`: the
/// warnings and skipped reasons of a solved one), one per key, for the workflow to try (on the
/// same IndexClient) before anything is rendered. Rendered afterwards, each is printed as
/// set_hint_verdicts says; a hint never tried (no verdict) is printed as made.
[[nodiscard]] std::vector<FixHint> fix_hints(const Catalog& catalog,
                                             const resolver::DerivationTree* tree,
                                             const resolver::Solution* solution);
/// The verdicts of the hints fix_hints gave: a confirmed one is printed as made, one with an
/// `instead` prints that command, any other keeps its fact and names no command.
void set_hint_verdicts(Catalog& catalog, const std::vector<HintVerdict>& verdicts);

/// Proven words (issue 43 item 5): does a second solve through `provider` (over the same
/// catalog) confirm that `package` `version` was passed over because of `blocker`? `request`
/// plus `package==version` either solves (the first solution's choices, `blocker`'s among them,
/// kept the version out) or fails with `blocker` in its proof. A named cause that fails this
/// ("needs sympy>=1.14" when it was a missing torchaudio build) is not printed. Reuses the
/// catalog's pages and METADATA.
[[nodiscard]] bool confirm_blocker(resolver::Provider& provider,
                                   const resolver::SolveRequest& request,
                                   const resolver::SolveOptions& options, std::string_view package,
                                   const core::Version& version, std::string_view blocker);

}  // namespace gpulock::catalog

// IndexProvider: the explanation's words (describe_*, package_hints) and the questions the
// workflow asks after a solve (skipped candidates, kept pins, hints), none of which reads the
// network while a proof is rendered.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/catalog/index_provider.h"
#include "gpulock/core/command_line.h"
#include "gpulock/core/name.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"
#include "gpulock/resolver/resolver.h"

#include "index_provider_impl.h"

namespace gpulock::catalog {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

auto IndexProvider::Impl::first_index_fix(std::string_view name, std::string_view other) const
    -> std::string {
  std::vector<core::FlagEdit> edits{
      {"--index", fmt::format("other={}", other), core::FlagEdit::Op::Add},
      {"--index-for", fmt::format("{}=other", name), core::FlagEdit::Op::Add}};
  std::string fix = fmt::format("to take {} from {}: `{}`", name, other,
                                core::command_with(config.command_line, edits));
  // --nightly refuses unsafe-best-match (issue 41 item 3).
  bool nightly = std::any_of(config.torch.begin(), config.torch.end(),
                             [](const SourceSpec& s) { return s.nightly(); });
  if (nightly) return fix;
  return fix +
         " (or, trusting every index equally, `--index-strategy unsafe-best-match` instead of "
         "those two flags)";
}

auto IndexProvider::Impl::missing_from_torch(std::string_view name) const -> bool {
  if (config.torch.empty() || !gpu::is_torch_family(name)) return false;
  if (std::any_of(config.pinned.begin(), config.pinned.end(),
                  [&](const auto& pin) { return glob_match(pin.first, name); })) {
    return false;
  }
  auto it = packages.find(name);
  return it != packages.end() && it->second.sources.empty();
}

auto IndexProvider::Impl::missing_from_torch_text(std::string_view name, const VersionEntry* needer,
                                                  std::string_view needer_name,
                                                  const resolver::Dependency* need) const
    -> std::string {
  std::vector<const SourceSpec*> where;
  if (needer != nullptr && needer->source != nullptr && needer->source->type.role == Role::Family) {
    where.push_back(needer->source);
  } else {
    for (const auto& s : config.torch) {
      if (!s.above_ceiling) where.push_back(&s);
    }
  }
  std::string text = fmt::format("the PyTorch index {} has no {}", sources_text(where), name);
  if (needer != nullptr && need != nullptr) {
    text += fmt::format("; {} {} needs {}", needer_name, needer->version.to_string(),
                        need->to_string());
  }
  return text;
}

auto IndexProvider::Impl::missing_from_torch_fix(std::string_view name) const -> std::string {
  auto general =
      std::find_if(config.general.begin(), config.general.end(), [](const SourceSpec& s) {
        return s.type.is<Simple>() && (s.type.role == Role::Default || s.type.role == Role::Extra);
      });
  std::string why = fmt::format(
      "{} is a torch-family name, which comes only from the PyTorch index unless --index-for "
      "names another",
      name);
  if (general == config.general.end()) {
    return fmt::format("{}: add `--index NAME=URL --index-for {}=NAME`", why, name);
  }
  std::string url = index::redact_url(general->source.url);
  std::vector<core::FlagEdit> edits{
      {"--index", fmt::format("other={}", url), core::FlagEdit::Op::Add},
      {"--index-for", fmt::format("{}=other", name), core::FlagEdit::Op::Add}};
  return fmt::format("{}; to take {} from {}: `{}`", why, name, url,
                     core::command_with(config.command_line, edits));
}

std::vector<IndexProvider::MissingFromTorch> IndexProvider::missing_from_torch_source() const {
  std::vector<MissingFromTorch> out;
  const Impl& impl = *impl_;
  for (const auto& [name, state] : impl.packages) {
    if (!impl.missing_from_torch(name)) continue;
    // The first candidate, in its package's preference order, that required it.
    const VersionEntry* needer = nullptr;
    const resolver::Dependency* need = nullptr;
    std::string needer_name;
    if (auto by = impl.required_by.find(name); by != impl.required_by.end()) {
      needer_name = by->second.substr(0, by->second.find('['));
      if (auto p = impl.packages.find(needer_name); p != impl.packages.end()) {
        for (const auto& e : p->second.entries) {
          // A structured binding is captured through an init-capture (clang 14, the fuzz build).
          auto d = std::find_if(
              e.requirements.begin(), e.requirements.end(),
              [&wanted = name](const resolver::Dependency& x) { return x.name == wanted; });
          if (e.dependencies_read && d != e.requirements.end()) {
            needer = &e;
            need = &*d;
            break;
          }
        }
      }
    }
    out.push_back(
        {name,
         fmt::format("{}: {}", name, impl.missing_from_torch_text(name, needer, needer_name, need)),
         impl.missing_from_torch_fix(name)});
  }
  return out;
}

auto IndexProvider::Impl::arch_fixes(std::string_view name, const PackageState& state) const
    -> std::vector<ArchFix> {
  std::vector<ArchFix> out;
  // Which CUDA builds have kernels is known for the torch family's variants only.
  if (!gpu::is_torch_family(name)) return out;
  std::set<std::string, std::less<>> seen;
  for (const auto& e : state.entries) {
    const auto& u = e.dependencies_unavailable;
    if (!u || u->kind != UnavailableKind::GpuArchMissing) continue;
    auto field = std::find_if(u->fields.begin(), u->fields.end(),
                              [](const auto& f) { return f.first == "arch"; });
    if (field == u->fields.end()) continue;
    auto arch = gpu::ComputeCapability::parse(field->second);
    if (!arch || !seen.insert(field->second).second) continue;
    out.push_back({*arch,
                   fmt::format("{} {}.{}", name, e.version.release_at(0), e.version.release_at(1)),
                   gpu.builds_with_kernels_for(e.version, *arch)});
  }
  return out;
}

auto IndexProvider::Impl::sources_text(const std::vector<const SourceSpec*>& sources)
    -> std::string {
  if (sources.empty()) return "no index";
  std::string first = index::redact_url(sources.front()->source.url);
  return sources.size() == 1 ? first : fmt::format("{} (and {} more)", first, sources.size() - 1);
}

auto IndexProvider::Impl::conflict_reason(const VersionEntry& e, const resolver::Solution* solution,
                                          std::string* hint, std::string* blocker) const
    -> std::optional<std::string> {
  auto named = [&](const std::string& name) {
    if (blocker != nullptr) *blocker = name;
  };
  // A name the torch source owns and lacks says it first (issue 41 item 4): not the other
  // requirement the solution then had to bend.
  for (const auto& d : e.requirements) {
    if (!missing_from_torch(d.name)) continue;
    if (hint != nullptr) *hint = missing_from_torch_fix(d.name);
    named(d.name);
    return fmt::format("needs {}, and {}", d.to_string(),
                       missing_from_torch_text(d.name, &e, "", nullptr));
  }
  for (const auto& d : e.requirements) {
    auto pit = packages.find(d.name);
    if (pit == packages.end()) continue;
    const PackageState& dep = pit->second;
    std::vector<std::string> usable;
    bool satisfied = false;
    for (const auto& c : dep.entries) {
      if (c.file == nullptr || c.unavailable) continue;
      if (d.specifier.contains(c.version, true)) {
        satisfied = true;
        break;
      }
      if (usable.size() < 3) usable.push_back(c.version.to_string());
    }
    if (!satisfied && !dep.sources.empty()) {
      std::string has = usable.empty() ? fmt::format("no usable version of {}", d.name)
                                       : fmt::format("only {} {}", d.name, fmt::join(usable, ", "));
      std::string reason =
          fmt::format("needs {}, and {} has {}", d.to_string(), sources_text(dep.sources), has);
      if (!dep.skipped.empty() && config.strategy == IndexStrategy::FirstIndex) {
        std::string other = index::redact_url(dep.skipped.front()->source.url);
        reason +=
            fmt::format(" (first-index: {} comes only from there, not from {})", d.name, other);
        if (hint != nullptr) *hint = first_index_fix(d.name, other);
      }
      named(d.name);
      return reason;
    }
    if (solution == nullptr) continue;
    const auto* chosen = solution->find(d.name);
    if (chosen != nullptr && !d.specifier.contains(chosen->version, true)) {
      named(d.name);
      return fmt::format("needs {}, and {} {} was chosen", d.to_string(), d.name,
                         chosen->version.to_string());
    }
  }
  return std::nullopt;
}

std::optional<std::string> IndexProvider::describe_term(const resolver::Term& term,
                                                        std::string_view text) const {
  (void)text;
  if (term.package().name == kPython) {
    std::string set = term.set_text();
    return set.empty() ? "Python" : fmt::format("Python {}", core::spaced_specifier(set));
  }
  return impl_->gpu.describe_term(term);
}

std::optional<std::string> IndexProvider::describe_dependency(
    const resolver::Term& depender, const resolver::Term& dependency,
    std::string_view depender_text, std::string_view dependency_text) const {
  return impl_->gpu.describe_dependency(depender, dependency, depender_text, dependency_text);
}

std::optional<std::string> IndexProvider::describe_no_versions(const resolver::Term& term,
                                                               std::string_view) const {
  if (term.package().name == kPython) {
    return fmt::format("the target is Python {}", impl_->config.target.python_full.to_string());
  }
  return impl_->gpu.describe_no_versions(term);
}

std::vector<std::string> IndexProvider::package_hints(const resolver::PackageInfo& package) const {
  std::vector<std::string> hints;
  if (package.is_virtual || package.is_root) {
    if (package.name == gpu::kCuda) impl_->cuda_hinted = true;
    return impl_->gpu.virtual_hints(package.name);
  }
  auto it = impl_->packages.find(package.name);
  if (it == impl_->packages.end()) return hints;
  const PackageState& state = it->second;
  // No "pre-releases exist" hint here: under if-necessary a pre-release is chosen whenever no
  // final release remains, and the reporter itself explains pre-releases that
  // --prerelease disallow excluded. (A hint from this list alone misled: `x>9` with only
  // unrelated pre-releases, or nightly torch, where pre-releases are allowed already.)
  // First-index ignored lower-priority sources: say so when one of them has versions the used
  // source lacks. Only pages fetch_hint_pages fetched are read: no I/O here.
  if (auto pages = impl_->hint_pages.find(package.name);
      pages != impl_->hint_pages.end() && impl_->hints_skipped_sources(package.name, state)) {
    std::unordered_map<core::Version, bool, core::VersionHash> known;
    for (const auto& e : state.entries)
      known.emplace(e.version, true);
    for (const auto& [s, page] : pages->second) {
      bool has_other =
          std::any_of(page->files.begin(), page->files.end(),
                      [&](const index::DistFile& f) { return !known.contains(f.version()); }) ||
          std::any_of(page->omitted.begin(), page->omitted.end(),
                      [&](const index::OmittedVersion& o) { return !known.contains(o.version); });
      if (has_other) {
        std::string other = index::redact_url(s->source.url);
        hints.push_back(fmt::format(
            "{} was also found on {}, but under first-index only {} is used for it (protection "
            "against dependency confusion); {}",
            package.name, other, Impl::sources_text(state.sources),
            impl_->first_index_fix(package.name, other)));
        break;
      }
    }
  }
  // A build without kernels for a GPU: which CUDA builds of that release have them. The command
  // that asks for one is suggested by the resolve workflow once it has tried it.
  for (const auto& fix : impl_->arch_fixes(package.name, state)) {
    std::string hint = gpu::GpuPolicy::arch_fix_hint(fix.release, fix.arch, fix.builds);
    if (auto note = impl_->gpu.arch_driver_note(fix.arch, fix.builds)) hint += "; " + *note;
    hints.push_back(std::move(hint));
  }
  if (!state.placeholder_for.empty()) {
    hints.push_back(fmt::format("{} is a placeholder; the CUDA 13 package is {}", package.name,
                                state.placeholder_for));
  } else if (state.only_sdists) {
    hints.push_back(
        fmt::format("{} has only source distributions on the index; gpulock does not build sdists",
                    package.name));
  } else if (state.only_other_platforms) {
    hints.push_back(fmt::format("{} has wheels only for other platforms or Pythons than {}",
                                package.name, impl_->target_tag_text()));
  }
  return hints;
}

std::vector<IndexProvider::Skipped> IndexProvider::skipped_before(
    std::string_view package, std::size_t chosen_index, const resolver::Solution* solution) const {
  std::vector<Skipped> out;
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end()) return out;
  const auto& entries = it->second.entries;
  const gpu::GpuPolicy& gpu = impl_->gpu;
  bool chosen_pre = chosen_index < entries.size() && entries[chosen_index].version.is_prerelease();
  if (chosen_index == 0 && it->second.pin_from > 0) {
    // The existing lock's pin was tried first: the candidates it was preferred over.
    for (std::size_t i = 1; i <= it->second.pin_from && i < entries.size(); ++i) {
      out.push_back({entries[i].version,
                     "kept-pin",
                     fmt::format("not tried: the existing lock pins {} (--upgrade-package {})",
                                 entries[0].version.to_string(), package),
                     {},
                     {}});
    }
    return out;
  }
  for (std::size_t i = 0; i < chosen_index && i < entries.size(); ++i) {
    const VersionEntry& e = entries[i];
    Skipped s{e.version, {}, {}, {}, {}};
    auto from = [&](const UnavailableReason& r) {
      s.kind = std::string(resolver::unavailable_kind_name(r.kind));
      s.reason = r.message.empty() ? "cannot be used" : r.message;
    };
    if (e.unavailable && e.unavailable->kind == UnavailableKind::CudaTooNew && e.build.cuda) {
      s.kind = std::string(resolver::unavailable_kind_name(UnavailableKind::CudaTooNew));
      s.reason = gpu.needs_cuda_text(*e.build.cuda);
    } else if (e.unavailable) {
      from(*e.unavailable);
    } else if (e.dependencies_unavailable) {
      from(*e.dependencies_unavailable);
    } else if (e.needs_cuda && !gpu.allows(*e.needs_cuda)) {
      s.kind = std::string(resolver::unavailable_kind_name(UnavailableKind::CudaTooNew));
      s.reason = gpu.needs_cuda_text(*e.needs_cuda);
    } else if (e.dependencies_read) {
      // Tried (so neither yanked-and-unpinned nor a pre-release held it back): a conflict,
      // named when one requirement alone explains it.
      s.kind = "conflict";
      s.reason = impl_->conflict_reason(e, solution, &s.hint, &s.blocker)
                     .value_or("conflicts with the other requirements");
    } else if (e.yanked) {
      s.kind = std::string(resolver::unavailable_kind_name(UnavailableKind::Yanked));
      s.reason = "is yanked (used only when pinned with ==)";
    } else if (e.version.is_prerelease() && !chosen_pre) {
      s.kind = "prerelease";
      s.reason = "is a pre-release (allow with --pre)";
    } else {
      s.kind = "excluded";
      s.reason = "is excluded by the requirements";
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<std::string> IndexProvider::cuda_too_new_hint(
    std::string_view package, const core::SpecifierSet& wanted) const {
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end()) return std::nullopt;
  // Builds above the driver's ceiling (--torch-backend auto): what driver the lowest one needs.
  // For an unpinned request, also the newest version's lowest build (issue 43 item 5).
  std::optional<gpu::CudaVersion> lowest;
  const VersionEntry* newest = nullptr;
  std::optional<gpu::CudaVersion> newest_lowest;
  for (const auto& e : it->second.entries) {
    if (!(e.unavailable && e.unavailable->kind == UnavailableKind::CudaTooNew && e.build.cuda &&
          wanted.contains(e.version, true) &&
          (package != "torch" || impl_->gpu.runs_on_every_gpu(e.version, *e.build.cuda)))) {
      continue;
    }
    if (!lowest || *e.build.cuda < *lowest) lowest = e.build.cuda;
    const auto release = e.version.public_version();
    if (newest == nullptr || newest->version.public_version() < release) {
      newest = &e;
      newest_lowest = e.build.cuda;
    } else if (newest->version.public_version() == release && *e.build.cuda < *newest_lowest) {
      newest_lowest = e.build.cuda;
    }
  }
  if (!lowest) return std::nullopt;
  return impl_->gpu.driver_needed_hint(package, *lowest, {newest->version, *newest_lowest});
}

void IndexProvider::fetch_hint_pages(const resolver::DerivationTree& tree) {
  std::set<std::string, std::less<>> names;
  for (const auto& node : tree.nodes) {
    for (const auto& t : node.terms) {
      const auto& p = t.package();
      if (!p.is_root && !p.is_virtual) names.insert(p.name);
    }
  }
  // Every page asked at once, then collected.
  std::vector<std::pair<std::string, const SourceSpec*>> wanted;
  for (const auto& name : names) {
    auto it = impl_->packages.find(name);
    if (it == impl_->packages.end() || !impl_->hints_skipped_sources(name, it->second)) continue;
    for (const auto* s : it->second.skipped) {
      impl_->pages.prefetch_project(s->source, name);
      wanted.emplace_back(name, s);
    }
  }
  for (const auto& [name, s] : wanted) {
    auto page = impl_->pages.fetch_project(s->source, name);
    if (!page) {
      impl_->warn(fmt::format("could not compare {} on {} for a hint: {}", name,
                              index::redact_url(s->source.url), page.error().to_string()));
      continue;
    }
    if ((*page)->found) impl_->hint_pages[name].emplace_back(s, *page);
  }
}

std::vector<std::string> IndexProvider::arch_fix_backends() const {
  std::vector<std::string> out;
  for (const auto& [name, state] : impl_->packages) {
    for (const auto& fix : impl_->arch_fixes(name, state)) {
      std::string backend =
          fix.builds.size() == 1 ? gpu::variant_name(fix.builds.front()) : std::string("auto");
      if (!fix.builds.empty() && std::find(out.begin(), out.end(), backend) == out.end())
        out.push_back(backend);
    }
  }
  return out;
}

namespace {

// The requirements on this package in the solution (the user's, and each chosen version's): a
// version one of them excludes cannot be had by `--upgrade-package` without changing that
// requirer, so "v is newer" is not claimed for it (issue 43: torch==2.7.1's triton==3.3.1 pin).
std::vector<core::SpecifierSet> requirers_specifiers(const resolver::ChosenPackage& chosen) {
  std::vector<core::SpecifierSet> out;
  for (const auto& r : chosen.required_by) {
    auto req = core::Requirement::parse(r.requirement);
    if (req && !req->specifier.empty()) out.push_back(std::move(req->specifier));
  }
  return out;
}

}  // namespace

std::vector<KeptPin> IndexProvider::kept_pins_beaten(const resolver::Solution& solution) const {
  std::vector<KeptPin> out;
  const gpu::GpuPolicy& gpu = impl_->gpu;
  for (const auto& chosen : solution.packages) {
    if (chosen.is_virtual || chosen.candidate_index != 0) continue;
    auto it = impl_->packages.find(chosen.name);
    if (it == impl_->packages.end() || it->second.pin_from == 0) continue;
    const auto& entries = it->second.entries;
    if (!gpu::is_torch_family(chosen.name) && entries[0].build.kind != gpu::BuildKind::Cuda)
      continue;
    const auto held = requirers_specifiers(chosen);
    // Whose arch list a build is judged by: torch's own; torchvision's and torchaudio's go with
    // torch's build for the same CUDA (cu130 on Pascal is not newer "for this machine").
    const resolver::ChosenPackage* torch = solution.find("torch");
    const core::Version* paired_torch =
        chosen.name != "torch" && gpu::is_torch_family(chosen.name) && torch ? &torch->version
                                                                             : nullptr;
    for (std::size_t i = 1; i <= it->second.pin_from && i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (e.file == nullptr || e.unavailable || e.yanked ||
          e.version.is_prerelease() != entries[0].version.is_prerelease()) {
        continue;
      }
      if (e.build.cuda && !gpu.allows(*e.build.cuda)) continue;
      if (e.build.cuda) {
        const core::Version* torch_version = chosen.name == "torch" ? &e.version : paired_torch;
        if (torch_version && !gpu.runs_on_every_gpu(*torch_version, *e.build.cuda)) continue;
      }
      if (std::any_of(held.begin(), held.end(),
                      [&](const core::SpecifierSet& s) { return !s.contains(e.version, true); }))
        continue;
      out.push_back({chosen.name, entries[0].version.to_string(), e.version.to_string()});
      break;
    }
  }
  return out;
}

std::vector<std::string> IndexProvider::warnings() const {
  return impl_->warnings;
}

bool IndexProvider::cuda_hinted() const {
  return impl_->cuda_hinted;
}

bool confirm_blocker(IndexProvider& provider, const resolver::SolveRequest& request,
                     const resolver::SolveOptions& options, std::string_view package,
                     const core::Version& version, std::string_view blocker) {
  auto exact = core::SpecifierSet::parse("==" + version.to_string());
  if (!exact) return false;
  resolver::SolveRequest pinned = request;
  pinned.requirements.push_back({std::string(package), {}, *exact});
  auto outcome = resolver::solve(provider, pinned, options);
  if (!outcome) return false;
  const auto* failure = std::get_if<resolver::NoSolution>(&*outcome);
  if (failure == nullptr) return true;
  for (const auto& node : failure->tree.nodes) {
    for (const auto& term : node.terms) {
      if (term.package().name == blocker) return true;
    }
  }
  return false;
}

}  // namespace gpulock::catalog

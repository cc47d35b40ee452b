// The questions the resolve workflow asks the catalog after a solve (after_solve.h): which file
// each chosen candidate is, what was passed over and why, what a failed solve's explanation adds
// (CUDA libraries in conflict, builds above the driver, kernels for an arch), and the pages its
// hints compare, fetched before the explanation is rendered. None reads the network but
// fetch_hint_pages and confirm_blocker (a second solve on the same pages).

#include "gpulock/catalog/after_solve.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/gpu/gpu_stacks.h"
#include "gpulock/gpu/library_rules.h"
#include "gpulock/index/url.h"
#include "gpulock/resolver/resolver.h"

#include "catalog_impl.h"

namespace gpulock::catalog {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

namespace {

// A conflict rule that names a package, held by another package of a solution: the rules of
// its chosen version (gpu::library_conflicts, then the learned ones, in that order).
struct HeldRule {
  const resolver::ChosenPackage* holder = nullptr;
  resolver::Conflict rule;
};

// Every rule the other chosen packages of `solution` hold against `package`, in the order
// ruled_out tries them. It does not depend on the candidate, so it is built once for all of a
// package's candidates (has_wheel_findings and skipped_before walk every one).
std::vector<HeldRule> rules_naming(const Catalog::Impl& impl, std::string_view package,
                                   const resolver::Solution& solution) {
  std::vector<HeldRule> out;
  for (const auto& chosen : solution.packages) {
    if (chosen.is_virtual || chosen.name == package) continue;
    auto it = impl.packages.find(chosen.name);
    if (it == impl.packages.end() || chosen.candidate_index >= it->second.entries.size()) continue;
    for (auto& rule : gpu::library_conflicts(chosen.name, chosen.version)) {
      if (rule.name == package) out.push_back({&chosen, std::move(rule)});
    }
    for (const auto& rule : it->second.entries[chosen.candidate_index].conflicts) {
      if (rule.name == package) out.push_back({&chosen, rule});
    }
  }
  return out;
}

// A conflict rule (resolver::Conflict) between candidate `e` of `package` and a package of
// `solution`, either way round, worded for --explain: "cannot be used with tool-b 2.0 (REASON)".
// `held`: rules_naming(impl, package, solution).
std::optional<std::string> ruled_out(std::string_view package, const VersionEntry& e,
                                     const resolver::Solution& solution,
                                     const std::vector<HeldRule>& held) {
  // Only a candidate the solver took up: one the requirements never allowed (an `==` pin
  // elsewhere) was not passed over for a rule.
  if (!e.dependencies_read) return std::nullopt;
  auto own = gpu::library_conflicts(package, e.version);
  own.insert(own.end(), e.conflicts.begin(), e.conflicts.end());
  for (const auto& rule : own) {
    const resolver::ChosenPackage* other = solution.find(rule.name);
    if (other != nullptr && !rule.allowed.contains(other->version)) {
      return fmt::format("cannot be used with {} {} ({})", rule.name, other->version.to_string(),
                         rule.reason);
    }
  }
  for (const auto& h : held) {
    if (!h.rule.allowed.contains(e.version)) {
      return fmt::format("cannot be used with {} {} ({})", h.holder->name,
                         h.holder->version.to_string(), h.rule.reason);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> library_pin_conflict(const Catalog& cat,
                                                const resolver::DerivationTree& tree) {
  const Catalog::Impl& impl = cat.impl();
  // Two packages, each one version, that require the same library with specifiers no version
  // meets (issue 23: tensorflow[and-cuda] 2.19's cuDNN pin against torch 2.8's): every library
  // they disagree on, the cuDNN first.
  struct Edge {
    std::string who;  // "tensorflow[and-cuda] 2.19.0"
    const std::vector<resolver::Dependency>* requirements;
    bool gpu_stack;  // neither the torch family nor an nvidia-* library
  };
  std::map<std::string, std::vector<Edge>, std::less<>> by_dependency;
  for (const auto& node : tree.nodes) {
    if (node.kind != resolver::NodeKind::Dependency || node.terms.size() != 2) continue;
    const auto& depender = node.terms[0];
    const auto& p = depender.package();
    auto versions = depender.versions.versions();
    if (p.is_root || p.is_virtual || versions.size() != 1) continue;
    auto key = candidate_key(p.name, p.extra, versions[0]);
    auto read = impl.requirements_read.find(key);
    if (read == impl.requirements_read.end()) continue;
    std::string who = p.extra.empty()
                          ? fmt::format("{} {}", p.name, versions[0].to_string())
                          : fmt::format("{}[{}] {}", p.name, p.extra, versions[0].to_string());
    by_dependency[node.terms[1].package().name].push_back(
        {std::move(who), &read->second,
         !gpu::is_torch_family(p.name) && !p.name.starts_with("nvidia-")});
  }
  auto spec_of = [](const std::vector<resolver::Dependency>& reqs, std::string_view name) {
    auto it = std::find_if(reqs.begin(), reqs.end(),
                           [&](const resolver::Dependency& d) { return d.name == name; });
    return it == reqs.end() ? nullptr : &*it;
  };
  for (const auto& [dep, edges] : by_dependency) {
    if (!dep.starts_with("nvidia-") && !dep.starts_with("cuda-")) continue;
    for (std::size_t i = 0; i < edges.size(); ++i) {
      for (std::size_t j = i + 1; j < edges.size(); ++j) {
        const Edge& a = edges[i];
        const Edge& b = edges[j];
        if (!a.gpu_stack && !b.gpu_stack) continue;
        const auto* da = spec_of(*a.requirements, dep);
        const auto* db = spec_of(*b.requirements, dep);
        if (da == nullptr || db == nullptr || !impl.disjoint(*da, *db)) continue;
        // Every library both require with disjoint specifiers, the cuDNN first.
        std::vector<std::pair<const resolver::Dependency*, const resolver::Dependency*>> all;
        for (const auto& d : *a.requirements) {
          if (!d.name.starts_with("nvidia-") && !d.name.starts_with("cuda-")) continue;
          const auto* other = spec_of(*b.requirements, d.name);
          if (other != nullptr && impl.disjoint(d, *other)) all.emplace_back(&d, other);
        }
        std::stable_partition(all.begin(), all.end(), [](const auto& x) {
          return x.first->name.starts_with("nvidia-cudnn-");
        });
        if (all.empty()) continue;
        std::string text = fmt::format(
            "{} and {} need different versions of the same CUDA libraries: {} {} ({}) vs {} ({})",
            a.who, b.who, all.front().first->name,
            resolver::specifier_text(all.front().first->specifier), a.who,
            resolver::specifier_text(all.front().second->specifier), b.who);
        if (all.size() > 1) {
          std::vector<std::string> rest;
          for (std::size_t k = 1; k < all.size(); ++k)
            rest.push_back(all[k].first->name);
          text += fmt::format("; they also disagree on {}", fmt::join(rest, ", "));
        }
        return text + ".";
      }
    }
  }
  return std::nullopt;
}

std::vector<gpu::SharedDirConflict> shared_dir_conflicts(const Catalog& cat) {
  const Catalog::Impl& impl = cat.impl();
  std::vector<gpu::SharedDirConflict> out;
  for (const auto& row : gpu::gpu_stacks().shared_dirs) {
    std::vector<gpu::SharedDirConflict::Side> present;
    for (const auto& name : row.packages) {
      auto it = impl.required_by.find(name);
      if (it == impl.required_by.end()) continue;
      auto need = gpu::cuda_need_of_package(name, core::Version{});
      if (!need) continue;
      present.push_back({name, need->cuda.major, it->second});
    }
    for (std::size_t i = 0; i < present.size(); ++i) {
      for (std::size_t j = i + 1; j < present.size(); ++j) {
        if (present[i].major == present[j].major) continue;
        out.push_back({row.dir, present[i], present[j]});
        i = j = present.size();
      }
    }
  }
  return out;
}

Selection selection(const Catalog& cat, std::string_view package, std::size_t candidate_index) {
  const Catalog::Impl& impl = cat.impl();
  Selection s;
  auto it = impl.packages.find(package);
  if (it == impl.packages.end() || candidate_index >= it->second.entries.size()) return s;
  const auto& e = it->second.entries[candidate_index];
  s.file = e.file;
  s.source = e.source;
  s.build = e.build;
  s.hazards = e.hazards;
  std::span<const core::Requirement> requires_dist;
  if (e.file != nullptr) {
    auto m = impl.metadata.find(e.file);
    if (m != impl.metadata.end() && m->second.metadata)
      requires_dist = m->second.metadata->requires_dist;
  }
  if (auto need = gpu::GpuPolicy::cuda_need(package, e.version, requires_dist)) {
    s.cuda = need->cuda;
    s.cuda_minor_exact = need->minor_exact;
  }
  if (e.variants && !e.variants->label.empty()) {
    s.variant_label = e.variants->label;
    s.variant_properties = e.variants->properties;
    s.variants_json = e.variants->metadata;
    // PEP 825: the label's CUDA wins over the (un-suffixed) library names a variant requires.
    if (auto cuda = gpu::cuda_of_variant_label(e.variants->label)) {
      s.cuda = *cuda;
      s.cuda_minor_exact = true;
    } else if (e.variants->label == "null") {
      s.cuda.reset();
    }
  }
  s.archs_assumed = e.archs_assumed;
  return s;
}

const core::CoreMetadata* metadata(const Catalog& cat, std::string_view package,
                                   std::size_t candidate_index) {
  const Catalog::Impl& impl = cat.impl();
  auto it = impl.packages.find(package);
  if (it == impl.packages.end() || candidate_index >= it->second.entries.size()) return nullptr;
  const auto* file = it->second.entries[candidate_index].file;
  if (file == nullptr) return nullptr;
  auto m = impl.metadata.find(file);
  if (m == impl.metadata.end() || !m->second.metadata) return nullptr;
  return &*m->second.metadata;
}

std::optional<std::string> torch_build_tag(const Catalog& cat, const resolver::Solution* solution) {
  const Catalog::Impl& impl = cat.impl();
  auto it = impl.packages.find("torch");
  if (it == impl.packages.end()) return std::nullopt;
  auto tag = [](const core::Version& v, const gpu::BuildLabel& build,
                std::optional<gpu::CudaVersion> cuda) -> std::optional<std::string> {
    std::string pub = v.public_version().to_string();
    if (build.kind == gpu::BuildKind::Cpu) return pub + "+cpu";
    if (build.kind == gpu::BuildKind::Cuda && build.cuda) cuda = build.cuda;
    if (!cuda) return std::nullopt;
    return fmt::format("{}+cu{}{}", pub, cuda->major, cuda->minor);
  };
  if (solution != nullptr) {
    for (const auto& chosen : solution->packages) {
      if (chosen.name != "torch" || chosen.is_virtual) continue;
      auto sel = selection(cat, "torch", chosen.candidate_index);
      return tag(chosen.version, sel.build, sel.cuda);
    }
    return std::nullopt;
  }
  for (const auto& e : it->second.entries) {
    // Only a candidate the solver took up (its dependencies read): the requirements allowed it.
    if (!e.dependencies_read) continue;
    if (auto t = tag(e.version, e.build, e.needs_cuda)) return t;
  }
  return std::nullopt;
}

std::vector<const SourceSpec*> sources_for(const Catalog& cat, std::string_view name) {
  const Catalog::Impl& impl = cat.impl();
  std::vector<const SourceSpec*> out;
  for (const auto& g : impl.groups_for(name))
    out.insert(out.end(), g.begin(), g.end());
  return out;
}

std::vector<std::string> projects_not_found(const Catalog& cat) {
  const Catalog::Impl& impl = cat.impl();
  std::vector<std::string> out;
  for (const auto& [name, state] : impl.packages) {
    if (state.sources.empty()) out.push_back(name);
  }
  return out;
}

bool any_project_found(const Catalog& cat) {
  const Catalog::Impl& impl = cat.impl();
  return std::any_of(impl.packages.begin(), impl.packages.end(),
                     [](const auto& p) { return !p.second.sources.empty(); });
}

std::vector<MissingFromTorch> missing_from_torch_source(const Catalog& cat,
                                                        const HintWriter& write) {
  std::vector<MissingFromTorch> out;
  const Catalog::Impl& impl = cat.impl();
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
    auto fix =
        impl.checked_fix(fmt::format("torch-source:{}", name), impl.missing_from_torch_fix(name));
    out.push_back(
        {name,
         fmt::format("{}: {}", name, impl.missing_from_torch_text(name, needer, needer_name, need)),
         fix ? write_hint(*fix, write) : Catalog::Impl::missing_from_torch_why(name), needer_name});
  }
  return out;
}

std::vector<Skipped> skipped_before(const Catalog& cat, std::string_view package,
                                    std::size_t chosen_index, const resolver::Solution* solution,
                                    const HintWriter& write) {
  const Catalog::Impl& impl = cat.impl();
  std::vector<Skipped> out;
  auto it = impl.packages.find(package);
  if (it == impl.packages.end()) return out;
  const auto& entries = it->second.entries;
  const gpu::GpuPolicy& gpu = impl.gpu;
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
  const std::vector<HeldRule> held =
      solution != nullptr ? rules_naming(impl, package, *solution) : std::vector<HeldRule>{};
  for (std::size_t i = 0; i < chosen_index && i < entries.size(); ++i) {
    const VersionEntry& e = entries[i];
    Skipped s{e.version, {}, {}, {}, {}};
    auto from = [&](const UnavailableReason& r) {
      s.kind = std::string(resolver::unavailable_kind_name(r.kind));
      s.reason = r.message.empty() ? "cannot be used" : r.message;
    };
    std::optional<std::string> ruled;
    if (e.hazards.empty() && solution != nullptr) ruled = ruled_out(package, e, *solution, held);
    if (!e.hazards.empty()) {
      // Before the other reasons: a candidate tried and then found to have a hazard was passed
      // over for that, not for what its first trial met.
      s.kind = "hazard";
      s.reason = e.hazards.front().text() + " (used only when pinned with ==)";
    } else if (ruled) {
      s.kind = "conflict";
      s.reason = std::move(*ruled);
    } else if (e.unavailable && e.unavailable->kind == UnavailableKind::CudaTooNew &&
               e.build.cuda) {
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
      std::optional<Hint> hint;
      s.reason = impl.conflict_reason(e, solution, &hint, &s.blocker)
                     .value_or("conflicts with the other requirements");
      if (hint) s.hint = write_hint(*hint, write);
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

std::optional<std::string> cuda_too_new_hint(const Catalog& cat, std::string_view package,
                                             const core::SpecifierSet& wanted) {
  const Catalog::Impl& impl = cat.impl();
  auto it = impl.packages.find(package);
  if (it == impl.packages.end()) return std::nullopt;
  // Builds above the driver's ceiling (--torch-backend auto): what driver the lowest one needs.
  // For an unpinned request, also the newest version's lowest build (issue 43 item 5).
  std::optional<gpu::CudaVersion> lowest;
  const VersionEntry* newest = nullptr;
  std::optional<gpu::CudaVersion> newest_lowest;
  for (const auto& e : it->second.entries) {
    if (!(e.unavailable && e.unavailable->kind == UnavailableKind::CudaTooNew && e.build.cuda &&
          wanted.contains(e.version, true) &&
          (package != "torch" || impl.gpu.runs_on_every_gpu(e.version, *e.build.cuda)))) {
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
  return impl.gpu.driver_needed_hint(package, *lowest, {newest->version, *newest_lowest});
}

void fetch_hint_pages(Catalog& cat, const resolver::DerivationTree& tree) {
  Catalog::Impl& impl = cat.impl();
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
    auto it = impl.packages.find(name);
    if (it == impl.packages.end() || !impl.hints_skipped_sources(name, it->second)) continue;
    for (const auto* s : it->second.skipped) {
      impl.pages.prefetch_project(s->source, name);
      wanted.emplace_back(name, s);
    }
  }
  for (const auto& [name, s] : wanted) {
    auto page = impl.pages.fetch_project(s->source, name);
    if (!page) {
      impl.warn(fmt::format("could not compare {} on {} for a hint: {}", name,
                            index::redact_url(s->source.url), page.error().to_string()));
      continue;
    }
    if ((*page)->found) impl.hint_pages[name].emplace_back(s, *page);
  }
}

namespace {

// The value of a hint's `--index NAME=URL` edit ("other=URL"), or "".
std::string index_edit(const Hint& hint) {
  for (const auto& e : hint.edits) {
    if (e.flag == "--index") return e.value;
  }
  return {};
}

// A fix that is not enough alone may be with the others that take names from the same index
// (setuptools and triton, both from PyPI): all of them at once, the first alternative tried.
void add_combined(std::vector<FixHint>& fixes) {
  for (auto& f : fixes) {
    std::string index = index_edit(f.hint);
    if (index.empty()) continue;
    Hint all{{}, {}, "`"};
    std::vector<std::string> names;
    for (const auto& g : fixes) {
      if (index_edit(g.hint) != index) continue;
      for (const auto& e : g.hint.edits) {
        bool seen = std::any_of(all.edits.begin(), all.edits.end(), [&](const auto& x) {
          return x.flag == e.flag && x.value == e.value;
        });
        if (seen) continue;
        all.edits.push_back(e);
        if (e.flag == "--index-for") names.push_back(e.value.substr(0, e.value.find('=')));
      }
    }
    if (names.size() < 2) continue;
    constexpr std::string_view kTorchSource = "torch-source:";
    std::string why = f.key.starts_with(kTorchSource)
                          ? Catalog::Impl::missing_from_torch_why(
                                std::string_view(f.key).substr(kTorchSource.size())) +
                                "; "
                          : std::string();
    all.text_before = fmt::format("{}to take {} from {}: `", why, fmt::join(names, " and "),
                                  index.substr(index.find('=') + 1));
    f.alternatives.insert(f.alternatives.begin(), std::move(all));
  }
}

}  // namespace

std::vector<FixHint> fix_hints(const Catalog& cat, const resolver::DerivationTree* tree,
                               const resolver::Solution* solution) {
  const Catalog::Impl& impl = cat.impl();
  std::vector<FixHint> out;
  std::vector<MissingFromTorch> missing;
  if (solution != nullptr) missing = missing_from_torch_source(cat);
  impl.collecting = &out;
  // The words that would be printed are asked for as they would be; checked_fix records each
  // fix it is given (one per key) instead of looking up its verdict.
  auto focus_from = [&](std::size_t from, const std::string& focus,
                        const std::optional<core::Version>& newer_than) {
    for (std::size_t i = from; i < out.size(); ++i) {
      out[i].focus = focus;
      out[i].newer_than = newer_than;
    }
  };
  if (tree != nullptr) {
    std::set<std::string, std::less<>> names;
    for (const auto& node : tree->nodes) {
      for (const auto& t : node.terms) {
        const auto& p = t.package();
        if (!p.is_root && !p.is_virtual) names.insert(p.name);
      }
    }
    for (const auto& name : names) {
      if (auto other = impl.first_index_other(name)) {
        (void)impl.checked_fix(fmt::format("first-index:{}={}", name, *other),
                               impl.first_index_fix(name, *other),
                               impl.first_index_alternatives(name, *other, {}));
      }
      if (impl.missing_from_torch(name)) {
        (void)impl.checked_fix(fmt::format("torch-source:{}", name),
                               impl.missing_from_torch_fix(name));
      }
    }
  }
  if (solution != nullptr) {
    for (const auto& m : missing) {
      if (solution->find(m.name) != nullptr) continue;
      std::size_t from = out.size();
      (void)impl.checked_fix(fmt::format("torch-source:{}", m.name),
                             impl.missing_from_torch_fix(m.name));
      const auto* needer = m.needed_by.empty() ? nullptr : solution->find(m.needed_by);
      if (needer != nullptr) focus_from(from, needer->name, needer->version);
    }
    for (const auto& chosen : solution->packages) {
      if (chosen.is_virtual || !gpu::is_torch_family(chosen.name)) continue;
      std::size_t from = out.size();
      (void)skipped_before(cat, chosen.name, chosen.candidate_index, solution);
      focus_from(from, chosen.name, chosen.version);
    }
  }
  impl.collecting = nullptr;
  add_combined(out);
  return out;
}

void set_hint_verdicts(Catalog& cat, const std::vector<HintVerdict>& verdicts) {
  Catalog::Impl& impl = cat.impl();
  for (const auto& v : verdicts)
    impl.verdicts.insert_or_assign(v.key, v);
}

std::vector<std::string> arch_fix_backends(const Catalog& cat) {
  const Catalog::Impl& impl = cat.impl();
  std::vector<std::string> out;
  for (const auto& [name, state] : impl.packages) {
    for (const auto& fix : impl.arch_fixes(name, state)) {
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

std::vector<KeptPin> kept_pins_beaten(const Catalog& cat, const resolver::Solution& solution) {
  const Catalog::Impl& impl = cat.impl();
  std::vector<KeptPin> out;
  const gpu::GpuPolicy& gpu = impl.gpu;
  for (const auto& chosen : solution.packages) {
    if (chosen.is_virtual || chosen.candidate_index != 0) continue;
    auto it = impl.packages.find(chosen.name);
    if (it == impl.packages.end() || it->second.pin_from == 0) continue;
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

std::vector<std::string> warnings(const Catalog& cat) {
  return cat.impl().warnings;
}

bool cuda_hinted(const Catalog& cat) {
  return cat.impl().cuda_hinted;
}

bool confirm_blocker(resolver::Provider& provider, const resolver::SolveRequest& request,
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

bool has_wheel_findings(const Catalog& cat, std::string_view package,
                        const resolver::Solution& solution) {
  const Catalog::Impl& impl = cat.impl();
  auto it = impl.packages.find(package);
  if (it == impl.packages.end()) return false;
  const std::vector<HeldRule> held = rules_naming(impl, package, solution);
  return std::any_of(it->second.entries.begin(), it->second.entries.end(),
                     [&](const VersionEntry& e) {
                       return !e.hazards.empty() || ruled_out(package, e, solution, held);
                     });
}

}  // namespace gpulock::catalog

// Catalog: its construction, the candidates and dependencies the solver asks for (with the GPU
// policy's facts), and what a chosen version starts.

#include "gpulock/catalog/catalog.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/catalog/variant_select.h"
#include "gpulock/core/command_line.h"
#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"
#include "gpulock/gpu/gpu_stacks.h"
#include "gpulock/gpu/library_rules.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"

#include "catalog_impl.h"

namespace gpulock::catalog {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

bool glob_match(std::string_view pattern, std::string_view name) {
  // Iterative wildcard match with one backtrack point (no recursion).
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

Catalog::Catalog(PageSource& pages, ProviderConfig config)
    : impl_(std::make_unique<Impl>(pages, nullptr, std::move(config))) {
  impl_->prefetch_torch_listings();
  impl_->seed_from_preferences();
  impl_->previous_hook = impl_->pages.set_wait_hook([impl = impl_.get()] { impl->speculate(); });
}

Catalog::Catalog(index::IndexClient& client, ProviderConfig config) {
  auto pages = std::make_unique<IndexClientPages>(client);
  PageSource& ref = *pages;
  impl_ = std::make_unique<Impl>(ref, std::move(pages), std::move(config));
  impl_->prefetch_torch_listings();
  impl_->seed_from_preferences();
  impl_->previous_hook = impl_->pages.set_wait_hook([impl = impl_.get()] { impl->speculate(); });
}

Catalog::~Catalog() = default;

const ProviderConfig& Catalog::config() const noexcept {
  return impl_->config;
}

auto Catalog::Impl::virtual_candidates(std::string_view name) const
    -> std::optional<resolver::PackageCandidates> {
  if (name == kPython) {
    resolver::PackageCandidates out;
    out.priority = 100;
    out.candidates.push_back({config.target.python_full, false, std::nullopt, {}});
    return out;
  }
  return gpu.virtual_candidates(name);
}

core::Result<resolver::PackageCandidates> Catalog::candidates(std::string_view package) {
  if (package.starts_with("__")) {
    auto v = impl_->virtual_candidates(package);
    if (v) return *v;
    return resolver::PackageCandidates{};
  }
  impl_->chain_speculation();
  auto [it, inserted] = impl_->packages.try_emplace(std::string(package));
  PackageState& state = it->second;
  if (inserted) {
    auto status = impl_->load(package, state);
    if (!status) {
      impl_->packages.erase(it);
      return std::unexpected(status.error());
    }
  }
  impl_->prefetch_first(package, state);

  resolver::PackageCandidates out;
  out.candidates.reserve(state.entries.size());
  for (const auto& e : state.entries) {
    resolver::Candidate c{e.version, e.yanked, e.unavailable, {}};
    if (!e.hazards.empty()) {
      c.yanked = true;
      c.yanked_reason = e.hazards.front().text();
    }
    if (!c.unavailable) c.unavailable = impl_->gpu.candidate_unavailable(package, e.version);
    out.candidates.push_back(std::move(c));
  }
  if (impl_->config.nightly_date && gpu::is_torch_family(package)) {
    out.prerelease = resolver::PrereleasePolicy::Allow;
  }
  if (gpu::is_torch_family(package)) out.priority = 10;
  return out;
}

namespace {

// PEP 825 variant markers: the chosen label and its properties the machine supports.
core::Environment variant_environment(const core::Environment& target,
                                      const VariantChoice& variants) {
  core::Environment variant_env = target;
  variant_env.variant_label = variants.label;
  for (const auto& prop : variants.properties) {
    variant_env.variant_properties.insert(prop);
    auto last = prop.rfind(" :: ");
    auto first = prop.find(" :: ");
    if (last != std::string::npos) variant_env.variant_features.insert(prop.substr(0, last));
    if (first != std::string::npos) variant_env.variant_namespaces.insert(prop.substr(0, first));
  }
  return variant_env;
}

// What the GPU policy is told about a candidate: its included requirements, and for a variant
// wheel its label and the arch list its variant properties give.
gpu::CandidateFacts candidate_facts(std::string_view package, const core::Version& version,
                                    const std::vector<core::Requirement>& included,
                                    const VariantChoice* variants) {
  gpu::CandidateFacts candidate{package, version, included};
  if (variants != nullptr && !variants->label.empty()) {
    candidate.variant_label = variants->label;
    if (variants->metadata) {
      auto props = variants->metadata->variants.find(variants->label);
      if (props != variants->metadata->variants.end())
        candidate.arch_list = arch_list_of_variant(props->second);
    }
  }
  return candidate;
}

}  // namespace

core::Result<resolver::Dependencies> Catalog::dependencies(std::string_view package,
                                                           std::size_t index,
                                                           const core::Version& version,
                                                           std::string_view extra) {
  resolver::Dependencies out;
  if (package.starts_with("__"))
    return impl_->gpu.virtual_dependencies(package, version).value_or(out);
  impl_->chain_speculation();
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end() || index >= it->second.entries.size()) {
    return core::fail(
        core::ErrorCode::Internal,
        fmt::format("dependencies of unknown candidate {} {}", package, version.to_string()));
  }
  VersionEntry& entry = it->second.entries[index];
  if (entry.variants) {
    if (auto settled = impl_->settle_variant(package, entry); !settled)
      return std::unexpected(settled.error());
    if (entry.variants->unavailable) {
      out.unavailable = entry.variants->unavailable;
      if (extra.empty()) {
        entry.dependencies_read = true;
        entry.dependencies_unavailable = out.unavailable;
      }
      return out;
    }
  }
  if (entry.file == nullptr) {
    out.unavailable = entry.unavailable;
    return out;
  }
  if (entry.needs_pin) {
    if (auto refused = impl_->pin_admits(package, entry)) {
      out.unavailable = std::move(refused);
      return out;
    }
  }
  // Remember what was learned about the package itself (not an extra's proxy).
  auto learned = [&]() -> resolver::Dependencies& {
    if (extra.empty()) {
      entry.dependencies_read = true;
      entry.dependencies_unavailable = out.unavailable;
    }
    return out;
  };
  std::string problem;
  auto md = impl_->read_metadata(*entry.file, problem);
  if (!md) return std::unexpected(md.error());
  if (*md == nullptr) {
    out.unavailable = UnavailableReason{
        UnavailableKind::MetadataError, fmt::format("has unusable metadata ({})", problem), {}};
    return learned();
  }
  const core::CoreMetadata& meta = **md;
  const core::Environment* env_ptr = &impl_->config.target.environment;
  core::Environment variant_env;
  if (entry.variants) {
    variant_env = variant_environment(*env_ptr, *entry.variants);
    env_ptr = &variant_env;
  }
  const auto& env = *env_ptr;
  std::vector<core::Requirement> included;
  for (const auto& req : meta.requires_dist) {
    bool take = extra.empty() ? (req.marker.empty() || req.marker.matches(env, ""))
                              : (req.marker.mentions_extra() && req.marker.matches(env, extra));
    if (!take) continue;
    if (!req.url.empty()) {
      out.unavailable = UnavailableReason{
          UnavailableKind::MetadataError,
          fmt::format("depends on a direct URL ({} @ {}), which gpulock does not lock", req.name,
                      index::redact_url(req.url)),
          {}};
      return learned();
    }
    resolver::Dependency d;
    d.name = core::normalize_name(req.name);
    impl_->note_required_by(d.name, package, extra);
    for (const auto& x : req.extras)
      d.extras.push_back(core::normalize_extra(x));
    d.specifier = req.specifier;
    out.dependencies.push_back(std::move(d));
    included.push_back(req);
  }
  impl_->requirements_read[candidate_key(package, extra, version)] = out.dependencies;
  if (!extra.empty()) return out;
  entry.requirements = out.dependencies;

  // Requires-Python from METADATA when the index did not say (the index's attribute was
  // already applied to the candidate).
  if (entry.file->requires_python().empty() && meta.requires_python &&
      !meta.requires_python->empty()) {
    out.dependencies.push_back({std::string(kPython), {}, *meta.requires_python});
  }

  // GPU policy (DESIGN.md §GPU model): its edges after the wheel's own requirements.
  gpu::GpuFacts gpu =
      impl_->gpu.facts(candidate_facts(package, version, included, entry.variants.get()));
  entry.needs_cuda = gpu.need ? std::optional<gpu::CudaVersion>(gpu.need->cuda) : std::nullopt;
  entry.archs_assumed = gpu.archs_assumed;
  if (!gpu.warning.empty()) impl_->warn(std::move(gpu.warning));
  for (auto& d : gpu.dependencies)
    out.dependencies.push_back(std::move(d));
  // Issue 44 item 3: conflict rules, from the library-family table and from the file lists of
  // solutions before this one (two wheels writing one path), unless --allow-incomplete.
  if (!impl_->config.allow_incomplete) {
    out.conflicts = gpu::library_conflicts(package, version);
    out.conflicts.insert(out.conflicts.end(), entry.conflicts.begin(), entry.conflicts.end());
  }
  out.unavailable = std::move(gpu.unavailable);
  if (!out.unavailable && entry.source != nullptr)
    impl_->note_nightly_pins(package, version, *entry.source, entry.requirements);
  return learned();
}

void Catalog::Impl::note_nightly_pins(std::string_view package, const core::Version& version,
                                      const SourceSpec& source,
                                      const std::vector<resolver::Dependency>& deps) {
  if (!source.nightly() || !config.nightly_date) return;
  auto built = nightly_date_of(version);
  if (!built || built->build_tag() != config.nightly_date->build_tag()) return;
  for (const auto& d : deps) {
    for (const auto& spec : d.specifier) {
      if (spec.op() != core::Operator::Equal || spec.wildcard()) continue;
      nightly_pins[d.name].try_emplace(spec.version(),
                                       fmt::format("{} {}", package, version.to_string()));
    }
  }
}

std::optional<UnavailableReason> Catalog::Impl::pin_admits(std::string_view package,
                                                           const VersionEntry& entry) {
  if (auto by = nightly_pins.find(package); by != nightly_pins.end()) {
    if (auto pin = by->second.find(entry.version); pin != by->second.end()) {
      warn(fmt::format(
          "{} has neither an upload time nor a dated version; kept under --exclude-newer because "
          "the nightly {} pins {}=={}",
          entry.file->filename(), pin->second, package, entry.version.to_string()));
      return std::nullopt;
    }
  }
  return UnavailableReason{UnavailableKind::ExcludedNewer,
                           "has neither an upload time nor a dated version, and no admitted "
                           "nightly pins it, so --exclude-newer leaves it out",
                           {}};
}

void Catalog::Impl::note_required_by(const std::string& dependency, std::string_view depender,
                                     std::string_view extra) {
  std::string who = extra.empty() ? std::string(depender) : fmt::format("{}[{}]", depender, extra);
  auto [it, inserted] = required_by.try_emplace(dependency, who);
  if (!inserted && it->second.starts_with("nvidia-") && !depender.starts_with("nvidia-"))
    it->second = std::move(who);
}

std::string candidate_key(std::string_view package, std::string_view extra,
                          const core::Version& version) {
  return extra.empty() ? fmt::format("{} {}", package, version.to_string())
                       : fmt::format("{}[{}] {}", package, extra, version.to_string());
}

bool Catalog::Impl::disjoint(const resolver::Dependency& a, const resolver::Dependency& b) const {
  auto it = packages.find(a.name);
  if (it != packages.end() && !it->second.entries.empty()) {
    return std::none_of(it->second.entries.begin(), it->second.entries.end(), [&](const auto& e) {
      return a.specifier.contains(e.version, true) && b.specifier.contains(e.version, true);
    });
  }
  return false;
}

void Catalog::on_version_chosen(std::span<const resolver::Dependency> dependencies) {
  // Start every dependency's first-priority pages at once: a cold resolve is then bounded by
  // the depth of the graph, not its size.
  for (const auto& d : dependencies) {
    if (d.name.starts_with("__") || impl_->packages.contains(d.name)) continue;
    impl_->wanted[d.name].push_back(d.specifier);
    impl_->prefetch_pages(d.name);
  }
  impl_->chain_speculation();
}

}  // namespace gpulock::catalog

// IndexProvider: the adapter to resolver::Provider over the catalog and the GPU policy.

#include "gpulock/app/index_provider.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/app/command_line.h"
#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"

#include "index_provider_impl.h"

namespace gpulock::app {

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

IndexProvider::IndexProvider(PageSource& pages, ProviderConfig config)
    : impl_(std::make_unique<Impl>(pages, nullptr, std::move(config))) {
  impl_->prefetch_torch_listings();
}

IndexProvider::IndexProvider(index::IndexClient& client, ProviderConfig config) {
  auto pages = std::make_unique<IndexClientPages>(client);
  PageSource& ref = *pages;
  impl_ = std::make_unique<Impl>(ref, std::move(pages), std::move(config));
  impl_->prefetch_torch_listings();
}

IndexProvider::~IndexProvider() = default;

auto IndexProvider::Impl::virtual_candidates(std::string_view name) const
    -> std::optional<resolver::PackageCandidates> {
  if (name == kPython) {
    resolver::PackageCandidates out;
    out.priority = 100;
    out.candidates.push_back({config.target.python_full, false, std::nullopt});
    return out;
  }
  return gpu.virtual_candidates(name);
}

core::Result<resolver::PackageCandidates> IndexProvider::candidates(std::string_view package) {
  if (package.starts_with("__")) {
    auto v = impl_->virtual_candidates(package);
    if (v) return *v;
    return resolver::PackageCandidates{};
  }
  auto [it, inserted] = impl_->packages.try_emplace(std::string(package));
  PackageState& state = it->second;
  if (inserted) {
    auto status = impl_->load(package, state);
    if (!status) {
      impl_->packages.erase(it);
      return std::unexpected(status.error());
    }
  }
  impl_->prefetch_first(state);

  resolver::PackageCandidates out;
  out.candidates.reserve(state.entries.size());
  for (const auto& e : state.entries) {
    resolver::Candidate c{e.version, e.yanked, e.unavailable};
    if (!c.unavailable) c.unavailable = impl_->gpu.candidate_unavailable(package, e.version);
    out.candidates.push_back(std::move(c));
  }
  if (impl_->config.nightly_date && is_torch_family(package)) {
    out.prerelease = resolver::PrereleasePolicy::Allow;
  }
  if (is_torch_family(package)) out.priority = 10;
  return out;
}

core::Result<resolver::Dependencies> IndexProvider::dependencies(std::string_view package,
                                                                 std::size_t index,
                                                                 const core::Version& version,
                                                                 std::string_view extra) {
  resolver::Dependencies out;
  if (package.starts_with("__"))
    return impl_->gpu.virtual_dependencies(package, version).value_or(out);
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end() || index >= it->second.entries.size()) {
    return core::fail(
        core::ErrorCode::Internal,
        fmt::format("dependencies of unknown candidate {} {}", package, version.to_string()));
  }
  VersionEntry& entry = it->second.entries[index];
  if (entry.file == nullptr) {
    out.unavailable = entry.unavailable;
    return out;
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
  const auto& env = impl_->config.target.environment;
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
    for (const auto& x : req.extras)
      d.extras.push_back(core::normalize_extra(x));
    d.specifier = req.specifier;
    out.dependencies.push_back(std::move(d));
    included.push_back(req);
  }
  if (!extra.empty()) return out;
  entry.requirements = out.dependencies;

  // Requires-Python from METADATA when the index did not say (the index's attribute was
  // already applied to the candidate).
  if (entry.file->requires_python().empty() && meta.requires_python &&
      !meta.requires_python->empty()) {
    out.dependencies.push_back({std::string(kPython), {}, *meta.requires_python});
  }

  // GPU policy (DESIGN.md §GPU model): its edges after the wheel's own requirements.
  GpuFacts gpu = impl_->gpu.facts({package, version, included});
  entry.needs_cuda = gpu.need ? std::optional<CudaVersion>(gpu.need->cuda) : std::nullopt;
  entry.archs_assumed = gpu.archs_assumed;
  if (!gpu.warning.empty()) impl_->warn(std::move(gpu.warning));
  for (auto& d : gpu.dependencies)
    out.dependencies.push_back(std::move(d));
  out.unavailable = std::move(gpu.unavailable);
  return learned();
}

bool IndexProvider::should_cancel() {
  // index::interrupted(): SIGINT/SIGTERM (the CLI) stop a long solve too.
  return index::interrupted();
}

void IndexProvider::on_version_chosen(std::string_view, const core::Version&,
                                      std::span<const resolver::Dependency> dependencies) {
  // Start every dependency's first-priority pages at once: a cold resolve is then bounded by
  // the depth of the graph, not its size.
  for (const auto& d : dependencies) {
    if (d.name.starts_with("__") || impl_->packages.contains(d.name)) continue;
    auto groups = impl_->groups_for(d.name);
    if (groups.empty()) continue;
    std::size_t n = impl_->config.strategy == IndexStrategy::UnsafeBestMatch ? groups.size() : 1;
    for (std::size_t g = 0; g < n; ++g) {
      for (const auto* s : groups[g])
        impl_->pages.prefetch_project(s->source, d.name);
    }
  }
}

IndexProvider::Selection IndexProvider::selection(std::string_view package,
                                                  std::size_t candidate_index) const {
  Selection s;
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end() || candidate_index >= it->second.entries.size()) return s;
  const auto& e = it->second.entries[candidate_index];
  s.file = e.file;
  s.source = e.source;
  s.build = e.build;
  std::span<const core::Requirement> requires_dist;
  if (e.file != nullptr) {
    auto m = impl_->metadata.find(e.file);
    if (m != impl_->metadata.end() && m->second.metadata)
      requires_dist = m->second.metadata->requires_dist;
  }
  if (auto need = GpuPolicy::cuda_need(package, e.version, requires_dist)) {
    s.cuda = need->cuda;
    s.cuda_minor_exact = need->minor_exact;
  }
  s.archs_assumed = e.archs_assumed;
  return s;
}

const core::CoreMetadata* IndexProvider::metadata(std::string_view package,
                                                  std::size_t candidate_index) const {
  auto it = impl_->packages.find(package);
  if (it == impl_->packages.end() || candidate_index >= it->second.entries.size()) return nullptr;
  const auto* file = it->second.entries[candidate_index].file;
  if (file == nullptr) return nullptr;
  auto m = impl_->metadata.find(file);
  if (m == impl_->metadata.end() || !m->second.metadata) return nullptr;
  return &*m->second.metadata;
}

}  // namespace gpulock::app

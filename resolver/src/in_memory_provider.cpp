#include "gpulock/resolver/in_memory_provider.h"

#include <algorithm>
#include <cctype>

#include "gpulock/core/name.h"
#include "gpulock/core/text.h"

namespace gpulock::resolver {

namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

std::string normalize(std::string_view name) {
  if (name.starts_with("__")) return std::string(name);
  return core::normalize_name(name);
}

// "Python >= 3.12" from ">=3.12" (and "Python" for any version).
std::string spaced(std::string_view label, const Term& t) {
  std::string spec = t.set_text();
  if (spec.empty()) return std::string(label);
  std::string out(label);
  out += " ";
  std::size_t i = 0;
  while (i < spec.size()) {
    std::size_t j = i;
    while (j < spec.size() && std::string_view("<>=!~").find(spec[j]) != std::string_view::npos)
      ++j;
    out += spec.substr(i, j - i);
    if (j > i) out += " ";
    std::size_t k = j;
    while (k < spec.size() && spec[k] != ',' && spec[k] != '|')
      ++k;
    out += core::trim(std::string_view(spec).substr(j, k - j));
    if (k < spec.size()) {
      out += spec[k] == ',' ? ", " : " | ";
      ++k;
      while (k < spec.size() && spec[k] == ' ')
        ++k;
    }
    i = k;
  }
  return out;
}

}  // namespace

core::Result<Dependency> parse_dependency(std::string_view text) {
  std::string_view s = core::trim_left(text, " ");
  std::size_t i = 0;
  while (i < s.size() && name_char(s[i]))
    ++i;
  if (i == 0) {
    return core::fail(core::ErrorCode::InvalidRequirement,
                      "expected a package name in " + core::quote_for_message(text), 1);
  }
  Dependency dep;
  dep.name = normalize(s.substr(0, i));
  std::string_view rest = s.substr(i);
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos) {
      return core::fail(core::ErrorCode::InvalidRequirement,
                        "unclosed extras in " + core::quote_for_message(text));
    }
    std::string_view list = rest.substr(1, close - 1);
    while (!list.empty()) {
      auto comma = list.find(',');
      std::string extra(core::trim(list.substr(0, comma)));
      if (!extra.empty()) dep.extras.push_back(core::normalize_extra(extra));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
    rest = rest.substr(close + 1);
  }
  auto spec = core::SpecifierSet::parse(rest);
  if (!spec) return std::unexpected(spec.error());
  dep.specifier = std::move(*spec);
  return dep;
}

core::Result<InMemoryProvider::Entry*> InMemoryProvider::find(std::string_view package,
                                                              std::string_view version) {
  auto v = core::Version::parse(version);
  if (!v) return std::unexpected(v.error());
  auto it = packages_.find(normalize(package));
  if (it != packages_.end()) {
    auto x = it->second.index.find(*v);
    if (x != it->second.index.end()) return &it->second.entries[x->second];
  }
  return core::fail(core::ErrorCode::NotFound,
                    "no version " + std::string(version) + " of " + std::string(package));
}

core::Status InMemoryProvider::add(std::string_view package, std::string_view version,
                                   const std::vector<std::string>& dependencies) {
  auto v = core::Version::parse(version);
  if (!v) return std::unexpected(v.error());
  std::vector<Dependency> deps;
  for (const auto& d : dependencies) {
    auto dep = parse_dependency(d);
    if (!dep) return std::unexpected(dep.error());
    deps.push_back(std::move(*dep));
  }
  auto& p = packages_[normalize(package)];
  if (auto x = p.index.find(*v); x != p.index.end()) {
    p.entries[x->second].dependencies = std::move(deps);
    return {};
  }
  p.index.emplace(*v, p.entries.size());
  Entry e;
  e.candidate.version = std::move(*v);
  e.dependencies = std::move(deps);
  p.entries.push_back(std::move(e));
  return {};
}

core::Status InMemoryProvider::add_extra(std::string_view package, std::string_view version,
                                         std::string_view extra,
                                         const std::vector<std::string>& dependencies) {
  auto e = find(package, version);
  if (!e) return std::unexpected(e.error());
  std::vector<Dependency> deps;
  for (const auto& d : dependencies) {
    auto dep = parse_dependency(d);
    if (!dep) return std::unexpected(dep.error());
    deps.push_back(std::move(*dep));
  }
  (*e)->extras[core::normalize_extra(extra)] = std::move(deps);
  return {};
}

core::Status InMemoryProvider::add_conflict(std::string_view package, std::string_view version,
                                            std::string_view constraint, std::string reason) {
  auto e = find(package, version);
  if (!e) return std::unexpected(e.error());
  auto dep = parse_dependency(constraint);
  if (!dep) return std::unexpected(dep.error());
  (*e)->conflicts.push_back({std::move(dep->name), std::move(dep->specifier), std::move(reason)});
  return {};
}

core::Status InMemoryProvider::set_yanked(std::string_view package, std::string_view version) {
  auto e = find(package, version);
  if (!e) return std::unexpected(e.error());
  (*e)->candidate.yanked = true;
  return {};
}

core::Status InMemoryProvider::set_unavailable(std::string_view package, std::string_view version,
                                               UnavailableReason reason) {
  auto e = find(package, version);
  if (!e) return std::unexpected(e.error());
  (*e)->candidate.unavailable = std::move(reason);
  return {};
}

core::Status InMemoryProvider::set_dependencies_unavailable(std::string_view package,
                                                            std::string_view version,
                                                            UnavailableReason reason) {
  auto e = find(package, version);
  if (!e) return std::unexpected(e.error());
  (*e)->dependencies_unavailable = std::move(reason);
  return {};
}

core::Status InMemoryProvider::prefer(std::string_view package,
                                      const std::vector<std::string>& versions) {
  auto& p = packages_[normalize(package)];
  p.preferred.clear();
  for (const auto& s : versions) {
    auto v = core::Version::parse(s);
    if (!v) return std::unexpected(v.error());
    p.preferred.push_back(std::move(*v));
  }
  return {};
}

void InMemoryProvider::set_prerelease_policy(std::string_view package, PrereleasePolicy policy) {
  packages_[normalize(package)].prerelease = policy;
}

void InMemoryProvider::set_priority(std::string_view package, int priority) {
  packages_[normalize(package)].priority = priority;
}

void InMemoryProvider::fail_candidates(std::string_view package, core::Error error) {
  packages_[normalize(package)].candidates_error = std::move(error);
}

void InMemoryProvider::fail_dependencies(std::string_view package, core::Error error) {
  packages_[normalize(package)].dependencies_error = std::move(error);
}

void InMemoryProvider::set_virtual_label(std::string_view package, std::string label,
                                         std::optional<std::string> no_versions_text) {
  auto& p = packages_[std::string(package)];
  p.label = std::move(label);
  p.no_versions_text = std::move(no_versions_text);
}

void InMemoryProvider::add_hint(std::string_view package, std::string hint) {
  packages_[normalize(package)].hints.push_back(std::move(hint));
}

std::vector<std::size_t> InMemoryProvider::ordered(const Package& p) {
  std::vector<std::size_t> out(p.entries.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = i;
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return p.entries[b].candidate.version < p.entries[a].candidate.version;
  });
  std::vector<std::size_t> front;
  for (const auto& v : p.preferred) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](std::size_t e) { return p.entries[e].candidate.version == v; });
    if (it != out.end()) {
      front.push_back(*it);
      out.erase(it);
    }
  }
  front.insert(front.end(), out.begin(), out.end());
  return front;
}

core::Result<PackageCandidates> InMemoryProvider::candidates(std::string_view package) {
  ++calls_;
  ++candidate_calls_;
  PackageCandidates out;
  auto it = packages_.find(package);
  if (it == packages_.end()) return out;
  Package& p = it->second;
  if (p.candidates_error) return std::unexpected(*p.candidates_error);
  p.order = ordered(p);
  for (std::size_t e : p.order)
    out.candidates.push_back(p.entries[e].candidate);
  out.prerelease = p.prerelease;
  out.priority = p.priority;
  return out;
}

core::Result<Dependencies> InMemoryProvider::dependencies(std::string_view package,
                                                          std::size_t index,
                                                          const core::Version& version,
                                                          std::string_view extra) {
  ++calls_;
  auto it = packages_.find(package);
  if (it == packages_.end()) {
    return core::fail(core::ErrorCode::Internal, "unknown package " + std::string(package));
  }
  const Package& p = it->second;
  if (p.dependencies_error) return std::unexpected(*p.dependencies_error);
  if (index >= p.order.size() || p.entries[p.order[index]].candidate.version != version) {
    return core::fail(core::ErrorCode::Internal,
                      "candidate index does not match version " + version.to_string());
  }
  const Entry& e = p.entries[p.order[index]];
  Dependencies out;
  if (e.dependencies_unavailable) {
    out.unavailable = e.dependencies_unavailable;
    return out;
  }
  if (extra.empty()) {
    out.dependencies = e.dependencies;
    out.conflicts = e.conflicts;
  } else if (auto x = e.extras.find(extra); x != e.extras.end()) {
    out.dependencies = x->second;
  }
  return out;
}

bool InMemoryProvider::should_cancel() {
  return cancel_after_ && calls_ >= *cancel_after_;
}

void InMemoryProvider::on_version_chosen(std::string_view package, const core::Version& version,
                                         std::span<const Dependency> dependencies) {
  std::string line = (package.empty() ? std::string("root") : std::string(package)) + " " +
                     version.to_string() + ":";
  for (std::size_t i = 0; i < dependencies.size(); ++i) {
    line += (i == 0 ? " " : ", ") + dependencies[i].name;
  }
  chosen_.push_back(std::move(line));
}

std::optional<std::string> InMemoryProvider::describe_term(const Term& term,
                                                           std::string_view) const {
  auto it = packages_.find(term.package().name);
  if (it == packages_.end() || !it->second.label) return std::nullopt;
  return spaced(*it->second.label, term);
}

std::optional<std::string> InMemoryProvider::describe_no_versions(const Term& term,
                                                                  std::string_view) const {
  auto it = packages_.find(term.package().name);
  if (it == packages_.end()) return std::nullopt;
  return it->second.no_versions_text;
}

std::vector<std::string> InMemoryProvider::package_hints(const PackageInfo& package) const {
  auto it = packages_.find(package.name);
  if (it == packages_.end()) return {};
  return it->second.hints;
}

}  // namespace gpulock::resolver

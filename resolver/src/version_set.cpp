#include "gpulock/resolver/version_set.h"

#include <algorithm>

#include "gpulock/resolver/derivation_tree.h"
#include "gpulock/resolver/provider.h"
#include "gpulock/resolver/solver.h"

namespace gpulock::resolver {

std::string PackageInfo::display_name() const {
  if (is_root) return "root";
  if (extra.empty()) return name;
  return name + "[" + extra + "]";
}

VersionSet::VersionSet(std::shared_ptr<const PackageInfo> package,
                       const std::vector<std::uint64_t>& words)
    : package_(std::move(package)) {
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (std::size_t b = 0; b < 64; ++b) {
      if (((words[w] >> b) & 1U) == 0) continue;
      auto i = static_cast<std::uint32_t>(w * 64 + b);
      if (!bounds_.empty() && bounds_.back() == i) {
        bounds_.back() = i + 1;
      } else {
        bounds_.push_back(i);
        bounds_.push_back(i + 1);
      }
    }
  }
}

VersionSet VersionSet::from_bounds(std::shared_ptr<const PackageInfo> package,
                                   std::vector<std::uint32_t> bounds) {
  VersionSet out;
  out.package_ = std::move(package);
  out.bounds_ = std::move(bounds);
  return out;
}

bool VersionSet::contains(std::size_t index) const noexcept {
  auto pos = std::upper_bound(bounds_.begin(), bounds_.end(), index) - bounds_.begin();
  return (pos & 1) != 0;
}

std::size_t VersionSet::count() const noexcept {
  std::size_t c = 0;
  for (std::size_t k = 0; k + 1 < bounds_.size(); k += 2)
    c += bounds_[k + 1] - bounds_[k];
  return c;
}

bool VersionSet::full() const noexcept {
  return package_ != nullptr && count() == package_->size();
}

std::vector<std::size_t> VersionSet::indices() const {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k + 1 < bounds_.size(); k += 2)
    for (std::size_t i = bounds_[k]; i < bounds_[k + 1]; ++i)
      out.push_back(i);
  return out;
}

std::vector<core::Version> VersionSet::versions() const {
  std::vector<core::Version> out;
  if (!package_ || !package_->ascending) return out;
  for (auto i : *package_->ascending)
    if (contains(i)) out.push_back((*package_->versions)[i]);
  return out;
}

std::string VersionSet::to_string() const {
  if (!package_ || !package_->ascending) return "(none)";
  const auto& asc = *package_->ascending;
  const auto& vs = *package_->versions;
  std::size_t n = asc.size();
  std::size_t members = count();
  if (members == 0) return "(none)";
  if (members == n) return "";
  std::string out;
  std::size_t i = 0;
  while (i < n) {
    if (!contains(asc[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < n && contains(asc[j + 1]))
      ++j;
    if (!out.empty()) out += " | ";
    if (i == j) {
      out += "==" + vs[asc[i]].to_string();
    } else if (i == 0) {
      out += "<" + vs[asc[j + 1]].to_string();
    } else if (j == n - 1) {
      out += ">=" + vs[asc[i]].to_string();
    } else {
      out += ">=" + vs[asc[i]].to_string() + ",<" + vs[asc[j + 1]].to_string();
    }
    i = j + 1;
  }
  return out;
}

std::string Term::set_text() const {
  if (specifier) return *specifier;
  return versions.to_string();
}

std::string Term::to_string() const {
  return package().display_name() + set_text();
}

std::string Dependency::to_string() const {
  std::string out = name;
  if (!extras.empty()) {
    out += "[";
    for (std::size_t i = 0; i < extras.size(); ++i) {
      if (i != 0) out += ",";
      out += extras[i];
    }
    out += "]";
  }
  out += specifier_text(specifier);
  return out;
}

std::string specifier_text(const core::SpecifierSet& specifier) {
  std::string out;
  for (const auto& clause : specifier) {
    if (!out.empty()) out += ",";
    out += clause.to_string();
  }
  return out;
}

core::Result<PrereleasePolicy> parse_prerelease_policy(std::string_view text) {
  if (text == "if-necessary") return PrereleasePolicy::IfNecessary;
  if (text == "allow") return PrereleasePolicy::Allow;
  if (text == "disallow") return PrereleasePolicy::Disallow;
  return core::fail(core::ErrorCode::Usage, "invalid --prerelease " +
                                                core::quote_for_message(text) +
                                                ": expected if-necessary, allow or disallow");
}

std::string_view prerelease_policy_name(PrereleasePolicy policy) noexcept {
  switch (policy) {
    case PrereleasePolicy::Allow:
      return "allow";
    case PrereleasePolicy::Disallow:
      return "disallow";
    case PrereleasePolicy::IfNecessary:
      break;
  }
  return "if-necessary";
}

std::string_view unavailable_kind_name(UnavailableKind kind) noexcept {
  switch (kind) {
    case UnavailableKind::NoCompatibleWheel:
      return "no-compatible-wheel";
    case UnavailableKind::OnlySdist:
      return "only-sdist";
    case UnavailableKind::OtherPlatforms:
      return "other-platforms";
    case UnavailableKind::RequiresPython:
      return "requires-python";
    case UnavailableKind::Yanked:
      return "yanked";
    case UnavailableKind::ExcludedNewer:
      return "excluded-newer";
    case UnavailableKind::MetadataError:
      return "metadata-error";
    case UnavailableKind::PrereleaseDisallowed:
      return "prerelease-disallowed";
    case UnavailableKind::CudaTooNew:
      return "cuda-too-new";
    case UnavailableKind::GpuArchMissing:
      return "gpu-arch-missing";
    case UnavailableKind::Other:
      return "other";
  }
  return "other";
}

std::optional<std::string> Describer::describe_term(const Term&, std::string_view) const {
  return std::nullopt;
}
std::optional<std::string> Describer::describe_dependency(const Term&, const Term&,
                                                          std::string_view,
                                                          std::string_view) const {
  return std::nullopt;
}
std::optional<std::string> Describer::describe_no_versions(const Term&, std::string_view) const {
  return std::nullopt;
}
std::optional<std::string> Describer::describe_unavailable(const Term&, const UnavailableReason&,
                                                           std::string_view) const {
  return std::nullopt;
}
std::vector<std::string> Describer::package_hints(const PackageInfo&) const {
  return {};
}

void Provider::on_version_chosen(std::string_view, const core::Version&,
                                 std::span<const Dependency>) {}

const ChosenPackage* Solution::find(std::string_view name) const {
  for (const auto& p : packages)
    if (p.name == name) return &p;
  return nullptr;
}

namespace {
std::string kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Root:
      return "root";
    case NodeKind::NoVersions:
      return "no-versions";
    case NodeKind::Dependency:
      return "dependency";
    case NodeKind::Constraint:
      return "constraint";
    case NodeKind::Unavailable:
      return "unavailable";
    case NodeKind::Conflict:
      return "conflict";
    case NodeKind::Derived:
      return "derived";
  }
  return "?";
}
}  // namespace

std::string DerivationTree::to_debug_string() const {
  std::string out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    out += "#" + std::to_string(i) + " " + kind_name(n.kind);
    if (n.kind == NodeKind::Derived)
      out += "(#" + std::to_string(n.cause1) + ", #" + std::to_string(n.cause2) + ")";
    if (n.shared_id) out += " shared" + std::to_string(*n.shared_id);
    out += " {";
    for (std::size_t t = 0; t < n.terms.size(); ++t) {
      if (t != 0) out += ", ";
      if (!n.terms[t].positive) out += "not ";
      out += n.terms[t].to_string();
    }
    out += "}";
    if (i == root) out += " <- root";
    out += "\n";
  }
  return out;
}

}  // namespace gpulock::resolver

// The solver's packages and their domains (candidates in preference order, the sets a
// specifier selects) and the -c constraints, as packages are first mentioned.

#include "solver_impl.h"

namespace gpulock::resolver::pubgrub {

// ------------------------------------------------------------------------------------------
// Packages and domains

std::uint32_t Solver::intern_string(const std::string& s) {
  auto it = string_ids_.find(s);
  if (it != string_ids_.end()) return it->second;
  auto id = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(s);
  string_ids_.emplace(s, id);
  return id;
}

void Solver::make_root() {
  Domain d;
  d.versions = std::make_shared<std::vector<core::Version>>(1);
  d.ascending = std::make_shared<std::vector<std::uint32_t>>(1, 0);
  d.candidates.resize(1);
  d.nbits = 1;
  d.full = detail::single(0);
  d.available = d.finals = d.full;
  domains_.push_back(std::move(d));

  Package p;
  p.info = std::make_shared<PackageInfo>();
  p.info->is_root = true;
  p.info->versions = domains_[0].versions;
  p.info->ascending = domains_[0].ascending;
  p.direct = true;
  pkgs_.push_back(std::move(p));
}

core::Result<std::uint32_t> Solver::load_domain(std::string_view name) {
  ++stats_.candidate_requests;
  auto r = provider_.candidates(name);
  if (!r) {
    return std::unexpected(
        r.error().with_context("while listing the versions of " + std::string(name)));
  }
  Domain d;
  d.candidates = std::move(r->candidates);
  d.nbits = static_cast<std::uint32_t>(d.candidates.size());
  d.versions = std::make_shared<std::vector<core::Version>>();
  d.versions->reserve(d.nbits);
  for (const auto& c : d.candidates)
    d.versions->push_back(c.version);
  d.ascending = std::make_shared<std::vector<std::uint32_t>>(d.nbits);
  for (std::uint32_t i = 0; i < d.nbits; ++i)
    (*d.ascending)[i] = i;
  const auto& vs = *d.versions;
  std::stable_sort(d.ascending->begin(), d.ascending->end(),
                   [&](std::uint32_t a, std::uint32_t b) { return vs[a] < vs[b]; });
  d.descending = true;
  for (std::uint32_t j = 0; j < d.nbits && d.descending; ++j)
    d.descending = (*d.ascending)[j] == d.nbits - 1 - j;
  d.full = detail::interval(0, d.nbits);
  for (std::uint32_t i = 0; i < d.nbits; ++i) {
    const auto& c = d.candidates[i];
    if (!c.unavailable) detail::push_index(d.available, i);
    if (!c.version.is_prerelease()) detail::push_index(d.finals, i);
    if (c.yanked) detail::push_index(d.yanked, i);
  }
  if (r->prerelease) {
    d.policy = *r->prerelease;
  } else if (auto it = options_.prerelease_overrides.find(name);
             it != options_.prerelease_overrides.end()) {
    d.policy = it->second;
  } else {
    d.policy = options_.prerelease;
  }
  d.priority = r->priority;
  domains_.push_back(std::move(d));
  return static_cast<std::uint32_t>(domains_.size() - 1);
}

core::Result<PackageId> Solver::intern(std::string_view name, std::string_view extra) {
  std::string key(name);
  if (!extra.empty()) key += "[" + std::string(extra) + "]";
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  PackageId base = kNone;
  std::uint32_t domain = 0;
  if (!extra.empty()) {
    auto b = intern(name, "");
    if (!b) return std::unexpected(b.error());
    base = *b;
    domain = pkgs_[base].domain;
  } else {
    auto d = load_domain(name);
    if (!d) return std::unexpected(d.error());
    domain = *d;
  }
  auto id = static_cast<PackageId>(pkgs_.size());
  Package p;
  p.name = std::string(name);
  p.extra = std::string(extra);
  p.base = extra.empty() ? id : base;
  p.is_virtual = name.starts_with("__");
  p.domain = domain;
  p.first_seen = id;
  p.info = std::make_shared<PackageInfo>();
  p.info->name = p.name;
  p.info->extra = p.extra;
  p.info->is_virtual = p.is_virtual;
  p.info->versions = domains_[domain].versions;
  p.info->ascending = domains_[domain].ascending;
  pkgs_.push_back(std::move(p));
  ids_.emplace(std::move(key), id);
  ++stats_.packages;
  if (extra.empty()) apply_constraints(id);
  return id;
}

void Solver::build_set(Domain& d, const core::SpecifierSet& spec, OwnedSet& out) {
  out = d.full;
  for (const auto& clause : spec) {
    // `==X` without a wildcard or a local label matches only candidates whose public version
    // equals X (PEP 440 ignores their local label; `==1.5` matches 1.5.0): those are looked up,
    // not found by evaluating every candidate and cached. Without this, V versions each pinning
    // another package exactly (`a 1.k` needs `c==1.k`) cost O(V) each: quadratic backtracking.
    if (clause.op() == core::Operator::Equal && !clause.wildcard() &&
        !clause.version().has_local()) {
      if (!d.by_public) {
        d.by_public = std::make_unique<
            std::unordered_map<core::Version, std::vector<std::uint32_t>, core::VersionHash>>();
        for (std::uint32_t i = 0; i < d.nbits; ++i)
          (*d.by_public)[(*d.versions)[i].public_version()].push_back(i);
      }
      exact_.clear();
      if (auto m = d.by_public->find(clause.version()); m != d.by_public->end()) {
        for (std::uint32_t i : m->second) {  // ascending
          if (detail::contains(out, i) && clause.contains((*d.versions)[i], /*prereleases=*/true)) {
            detail::push_index(exact_, i);
          }
        }
      }
      out.swap(exact_);
      continue;
    }
    std::string key = clause.to_string();
    auto it = d.clause_cache.find(key);
    if (it == d.clause_cache.end()) {
      OwnedSet members;
      // Exact PEP 440 semantics: evaluate every candidate (version_set.h), unless the clause
      // is ordered and the domain newest first: then O(log V) (a package whose V versions
      // each name another bound, `botocore>=1.k,<1.(k+1)`, would cost O(V) per version).
      if (d.descending && detail::ordered_clause_members(*d.versions, clause, members)) {
        it = d.clause_cache.emplace(std::move(key), std::move(members)).first;
      }
    }
    if (it == d.clause_cache.end()) {
      OwnedSet members;
      for (std::uint32_t i = 0; i < d.nbits; ++i) {
        if (clause.contains((*d.versions)[i], /*prereleases=*/true)) detail::push_index(members, i);
      }
      it = d.clause_cache.emplace(std::move(key), std::move(members)).first;
    }
    detail::combine(out, it->second, detail::And{}, exact_);
    out.swap(exact_);
  }
}

// -c constraints become {root, q in not-C} when q is first mentioned, so unused constraints
// cost no provider call.
void Solver::apply_constraints(PackageId p) {
  auto it = constraints_.find(pkgs_[p].name);
  if (it == constraints_.end()) return;
  for (const Dependency* c : it->second) {
    Domain& d = domain_of(p);
    build_set(d, c->specifier, scratch_);
    OwnedSet outside = detail::combined(d.full, scratch_, detail::AndNot{});
    if (outside.empty()) continue;
    OwnedSet root_bits = detail::single(0);
    IncompatId id =
        make_two(NodeKind::Constraint, kRoot, true, root_bits, kNone, p, true, outside, kNone);
    incompats_[id].text = intern_string(specifier_text(c->specifier));
    add_incompatibility(id);
  }
}

}  // namespace gpulock::resolver::pubgrub
